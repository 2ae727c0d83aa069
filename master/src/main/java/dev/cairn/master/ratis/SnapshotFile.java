package dev.cairn.master.ratis;

import dev.cairn.core.env.KvStore;
import java.io.BufferedInputStream;
import java.io.BufferedOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.function.BiConsumer;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.zip.CRC32C;
import java.util.zip.CheckedInputStream;
import java.util.zip.CheckedOutputStream;

/**
 * A master's state at one log entry, as one file: Cairn's own versioned format (not RocksDB's files, which a
 * later RocksDB or another layout could not read), written from a point-in-time view of the store while the
 * master goes on applying, and the unit Ratis sends to a follower that fell behind the purged log.
 *
 * <pre>
 *   "CAIRNSNP"  format version (int)  term (long)  index (long)
 *   { key length (int, 1..MAX_KEY)  key  value length (int, 0..MAX_VALUE)  value } ...
 *   -1 (int)  entry count (long)  CRC32C of every byte before it (long)
 * </pre>
 *
 * Named {@code snapshot.TERM_INDEX}; written under a temporary name, fsynced, renamed, the directory fsynced.
 */
final class SnapshotFile {
    static final byte[] MAGIC = "CAIRNSNP".getBytes(StandardCharsets.US_ASCII);
    /** Bumped when the layout changes; a reader refuses versions it does not know, naming them. */
    static final int FORMAT_VERSION = 1;
    static final int MAX_KEY = 64 << 10;
    static final int MAX_VALUE = 64 << 20;
    private static final Pattern NAME = Pattern.compile("snapshot\\.(\\d+)_(\\d+)");

    /** A snapshot file found in a directory. */
    record Found(Path path, long term, long index) {}

    private SnapshotFile() {}

    static String name(long term, long index) { return "snapshot." + term + "_" + index; }

    /** The snapshot with the highest index in {@code dir}, or null. */
    static Found latest(Path dir) throws IOException {
        Found best = null;
        for (Found f : all(dir)) if (best == null || f.index() > best.index()) best = f;
        return best;
    }

    static List<Found> all(Path dir) throws IOException {
        List<Found> out = new ArrayList<>();
        if (!Files.isDirectory(dir)) return out;
        try (var s = Files.list(dir)) {
            for (Path p : (Iterable<Path>) s::iterator) {
                Matcher m = NAME.matcher(p.getFileName().toString());
                if (m.matches()) out.add(new Found(p, Long.parseLong(m.group(1)), Long.parseLong(m.group(2))));
            }
        }
        return out;
    }

    /** Writes {@code view} as the snapshot at (term, index) into {@code dir}, durably; returns its path. */
    static Path write(Path dir, long term, long index, KvStore.View view) throws IOException {
        dev.cairn.core.real.DurableDirectories.create(dir);
        Path tmp = dir.resolve(name(term, index) + ".tmp");
        Path done = dir.resolve(name(term, index));
        CRC32C crc = new CRC32C();
        long[] count = {0};
        try (FileChannel ch = FileChannel.open(tmp, StandardOpenOption.CREATE, StandardOpenOption.TRUNCATE_EXISTING, StandardOpenOption.WRITE)) {
            OutputStream raw = new BufferedOutputStream(java.nio.channels.Channels.newOutputStream(ch), 1 << 16);
            DataOutputStream out = new DataOutputStream(new CheckedOutputStream(raw, crc));
            out.write(MAGIC);
            out.writeInt(FORMAT_VERSION);
            out.writeLong(term);
            out.writeLong(index);
            IOException[] failed = {null};
            view.scan((k, v) -> {
                try {
                    if (k.length == 0 || k.length > MAX_KEY || v.length > MAX_VALUE) throw new IOException("an entry of " + k.length + "+" + v.length + " bytes");
                    out.writeInt(k.length);
                    out.write(k);
                    out.writeInt(v.length);
                    out.write(v);
                    count[0]++;
                    return true;
                } catch (IOException e) {
                    failed[0] = e;
                    return false;
                }
            });
            if (failed[0] != null) throw failed[0];
            out.writeInt(-1);
            out.writeLong(count[0]);
            out.flush();
            long sum = crc.getValue();
            DataOutputStream tail = new DataOutputStream(raw);
            tail.writeLong(sum);
            tail.flush();
            ch.force(true);
        }
        Files.move(tmp, done, StandardCopyOption.ATOMIC_MOVE);
        syncDir(dir);
        return done;
    }

    /**
     * Checks the whole file (layout, sizes, count, checksum) without handing anything out, then reads it again
     * handing each entry to {@code sink}: nothing reaches the store from a damaged or truncated file.
     */
    static void read(Found f, BiConsumer<byte[], byte[]> sink) throws IOException {
        scan(f, null);
        scan(f, sink);
    }

    private static void scan(Found f, BiConsumer<byte[], byte[]> sink) throws IOException {
        CRC32C crc = new CRC32C();
        try (InputStream raw = new BufferedInputStream(Files.newInputStream(f.path()), 1 << 16)) {
            DataInputStream in = new DataInputStream(new CheckedInputStream(raw, crc));
            byte[] magic = in.readNBytes(MAGIC.length);
            if (!Arrays.equals(magic, MAGIC)) throw new IOException(f.path() + " is not a Cairn snapshot");
            int version = in.readInt();
            if (version != FORMAT_VERSION) {
                throw new IOException(f.path() + " is snapshot format " + version + "; this master reads format " + FORMAT_VERSION);
            }
            long term = in.readLong(), index = in.readLong();
            if (term != f.term() || index != f.index()) {
                throw new IOException(f.path() + " holds entry " + index + " of term " + term + ", not what its name says");
            }
            long n = 0;
            while (true) {
                int kl = in.readInt();
                if (kl == -1) break;
                if (kl <= 0 || kl > MAX_KEY) throw new IOException(f.path() + ": a key of " + kl + " bytes");
                byte[] k = in.readNBytes(kl);
                int vl = in.readInt();
                if (vl < 0 || vl > MAX_VALUE) throw new IOException(f.path() + ": a value of " + vl + " bytes");
                byte[] v = in.readNBytes(vl);
                if (k.length != kl || v.length != vl) throw new EOFException(f.path() + " is cut short");
                if (sink != null) sink.accept(k, v);
                n++;
            }
            long count = in.readLong();
            long sum = crc.getValue();
            long stored = new DataInputStream(raw).readLong();
            if (count != n || stored != sum) throw new IOException(f.path() + " is damaged (entry count or checksum does not match)");
            if (raw.read() != -1) throw new IOException(f.path() + " has bytes past its end");
        }
    }

    /** Deletes every snapshot in {@code dir} but {@code keep} (and leftovers of unfinished writes). */
    static void deleteAllBut(Path dir, Found keep) throws IOException {
        for (Found f : all(dir)) if (!f.path().equals(keep.path())) Files.deleteIfExists(f.path());
        try (var s = Files.list(dir)) {
            for (Path p : (Iterable<Path>) s::iterator) {
                String n = p.getFileName().toString();
                if (n.startsWith("snapshot.") && (n.endsWith(".tmp") || (n.endsWith(".md5") && !n.equals(keep.path().getFileName() + ".md5")))) {
                    Files.deleteIfExists(p);
                }
            }
        }
    }

    private static void syncDir(Path dir) throws IOException {
        try (FileChannel ch = FileChannel.open(dir, StandardOpenOption.READ)) {
            ch.force(true);
        }
    }
}
