package dev.cairn.core.real;

import dev.cairn.core.async.Promise;
import dev.cairn.core.env.Scheduler;
import dev.cairn.core.env.Volume;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.RejectedExecutionException;
import java.util.zip.CRC32C;

/**
 * A data directory on a real disk. Blocking file calls run on this volume's own I/O threads (so one
 * stalled disk does not hold up another) and their completions are posted back to the node's loop.
 */
final class FileVolume implements Volume {
    /** Open file handles kept per volume; the least recently used is closed past this. */
    static final int MAX_OPEN_FILES = 256;
    /** Bytes {@link #checksums} reads at a time, into a direct buffer each I/O thread keeps. */
    static final int CHECKSUM_READ = 64 << 10;
    private static final ThreadLocal<ByteBuffer> CHECKSUM_BUFFER = ThreadLocal.withInitial(() -> ByteBuffer.allocateDirect(CHECKSUM_READ));
    private static final byte[] ZEROS = new byte[CHECKSUM_READ];

    private final String name;
    private final Path dir;
    private final ExecutorService io;
    private final Scheduler loop;
    private final Map<String, FileChannel> open = new LinkedHashMap<>(16, 0.75f, true);

    FileVolume(String name, Path dir, ExecutorService io, Scheduler loop) {
        this.name = name;
        this.dir = dir;
        this.io = io;
        this.loop = loop;
    }

    /** Creates the directory if needed and proves it writable and syncable, or fails with a clear reason. */
    static void check(Path dir) {
        try {
            DurableDirectories.create(dir);
            Path probe = dir.resolve(".cairn-probe");
            try (FileChannel ch = FileChannel.open(probe, StandardOpenOption.CREATE, StandardOpenOption.WRITE)) {
                ch.write(ByteBuffer.wrap(new byte[] {1}));
                ch.force(true);
            }
            Files.delete(probe);
        } catch (IOException | SecurityException e) {
            throw new IllegalStateException("data directory " + dir + " is not usable: " + e, e);
        }
    }

    @Override public String name() { return name; }

    @Override public Space space() {
        try {
            java.nio.file.FileStore store = Files.getFileStore(dir);
            Object dev = Files.getAttribute(dir, "unix:dev");
            return new Space(store.getUsableSpace(), store.getTotalSpace(), String.valueOf(dev));
        } catch (IOException | UnsupportedOperationException | IllegalArgumentException | SecurityException e) {
            return null;
        }
    }

    @Override public Promise<Void> write(String file, long offset, byte[] data) {
        return run(() -> {
            FileChannel ch = channel(file, true);
            ByteBuffer b = ByteBuffer.wrap(data);
            long pos = offset;
            while (b.hasRemaining()) pos += ch.write(b, pos);
            return null;
        });
    }

    @Override public Promise<byte[]> read(String file, long offset, int length) {
        return run(() -> {
            FileChannel ch = channel(file, false);
            ByteBuffer b = ByteBuffer.allocate(length);
            long pos = offset;
            while (b.hasRemaining()) {
                int n = ch.read(b, pos);
                if (n < 0) break;
                pos += n;
            }
            byte[] out = new byte[b.position()];
            b.flip().get(out);
            return out;
        });
    }

    /** Alignment of O_DIRECT reads: offsets, lengths and the buffer's address (a page; a multiple of any sector). */
    static final int DIRECT_ALIGN = 4096;
    /** The filesystem refused O_DIRECT (some do, tmpfs on older kernels): device reads fall back to ordinary ones. */
    private volatile boolean directUnsupported;

    /**
     * An {@code O_DIRECT} read of the aligned range around {@code [offset, offset + length)}: the page cache
     * holds the bytes as written even when the disk put them elsewhere, so only a read past it checks them.
     * Falls back to an ordinary read where the filesystem has no {@code O_DIRECT}.
     */
    @Override public Promise<byte[]> readFromDevice(String file, long offset, int length) {
        if (directUnsupported) return read(file, offset, length);
        return run(() -> {
            long from = offset / DIRECT_ALIGN * DIRECT_ALIGN;
            long to = (offset + length + DIRECT_ALIGN - 1) / DIRECT_ALIGN * DIRECT_ALIGN;
            FileChannel ch;
            try {
                ch = FileChannel.open(path(file), java.nio.file.StandardOpenOption.READ, com.sun.nio.file.ExtendedOpenOption.DIRECT);
            } catch (UnsupportedOperationException | IOException e) {
                if (e instanceof NoSuchFileException) throw new NoSuchFile(file);
                directUnsupported = true;
                return null; // read the ordinary way, below
            }
            try (ch) {
                ByteBuffer buf = ByteBuffer.allocateDirect((int) (to - from) + DIRECT_ALIGN).alignedSlice(DIRECT_ALIGN);
                buf.limit((int) (to - from));
                long pos = from;
                while (buf.hasRemaining()) {
                    int n = ch.read(buf, pos);
                    if (n <= 0) break;
                    pos += n;
                    if (pos % DIRECT_ALIGN != 0) break; // a short read: the end of the file (a direct read past it may not even start unaligned)
                }
                int have = (int) Math.max(0, Math.min(length, buf.position() - (offset - from)));
                byte[] out = new byte[have];
                buf.get((int) (offset - from), out, 0, have);
                return out;
            }
        }).flatMap(b -> b != null ? Promise.completed(b) : read(file, offset, length));
    }

    /**
     * Reads in pieces of {@link #CHECKSUM_READ} into the I/O thread's own direct buffer and checksums them
     * there: the bytes are never copied to the heap, and a scrub allocates nothing but its result.
     */
    @Override public Promise<int[]> checksums(String file, long offset, int length, int blockSize) {
        return run(() -> {
            int[] out = new int[Volume.checksumPieces(offset, length, blockSize)];
            FileChannel ch = channel(file, false);
            ByteBuffer buf = CHECKSUM_BUFFER.get();
            CRC32C crc = new CRC32C();
            long pos = offset;
            boolean eof = false;
            for (int i = 0; i < out.length; i++) {
                crc.reset();
                int left = (int) Math.min(blockSize, length - (long) i * blockSize);
                while (left > 0 && !eof) {
                    buf.clear().limit(Math.min(left, buf.capacity()));
                    int n = ch.read(buf, pos);
                    if (n < 0) {
                        eof = true;
                        break;
                    }
                    crc.update(buf.flip());
                    pos += n;
                    left -= n;
                }
                for (; left > 0; left -= Math.min(left, ZEROS.length)) crc.update(ZEROS, 0, Math.min(left, ZEROS.length)); // past the end: zeros
                out[i] = (int) crc.getValue();
            }
            return out;
        });
    }

    @Override public Promise<Void> sync(String file) {
        return run(() -> {
            channel(file, false).force(true);
            return null;
        });
    }

    @Override public Promise<Void> syncDirectory() {
        return run(() -> {
            try (FileChannel ch = FileChannel.open(dir, StandardOpenOption.READ)) {
                ch.force(true);
            }
            return null;
        });
    }

    @Override public Promise<Void> rename(String from, String to) {
        return run(() -> {
            closeHandle(from);
            closeHandle(to);
            Files.move(path(from), path(to), StandardCopyOption.ATOMIC_MOVE);
            return null;
        });
    }

    @Override public Promise<Void> delete(String file) {
        return run(() -> {
            closeHandle(file);
            Files.deleteIfExists(path(file));
            return null;
        });
    }

    @Override public Promise<List<String>> list() {
        return run(() -> {
            List<String> names = new ArrayList<>();
            try (DirectoryStream<Path> ds = Files.newDirectoryStream(dir)) {
                for (Path p : ds) if (Files.isRegularFile(p)) names.add(p.getFileName().toString());
            }
            Collections.sort(names);
            return names;
        });
    }

    void close() {
        synchronized (open) {
            for (FileChannel ch : open.values()) {
                try { ch.close(); } catch (IOException ignored) { /* closing anyway */ }
            }
            open.clear();
        }
    }

    private Path path(String file) {
        if (file.isEmpty() || file.contains("/") || file.equals(".") || file.equals("..")) {
            throw new IllegalArgumentException("bad file name '" + file + "'");
        }
        return dir.resolve(file);
    }

    private FileChannel channel(String file, boolean create) throws IOException {
        synchronized (open) {
            FileChannel ch = open.get(file);
            if (ch != null && ch.isOpen()) return ch;
            try {
                ch = create
                        ? FileChannel.open(path(file), StandardOpenOption.CREATE, StandardOpenOption.READ, StandardOpenOption.WRITE)
                        : FileChannel.open(path(file), StandardOpenOption.READ, StandardOpenOption.WRITE);
            } catch (NoSuchFileException e) {
                throw new NoSuchFile(file);
            }
            open.put(file, ch);
            if (open.size() > MAX_OPEN_FILES) {
                var it = open.entrySet().iterator();
                var eldest = it.next();
                it.remove();
                try { eldest.getValue().close(); } catch (IOException ignored) { /* reopened on demand */ }
            }
            return ch;
        }
    }

    private void closeHandle(String file) throws IOException {
        synchronized (open) {
            FileChannel ch = open.remove(file);
            if (ch != null) ch.close();
        }
    }

    /** ENOSPC (and EDQUOT, which a writer can do nothing more about either) reach Java only as a message. */
    private static boolean isNoSpace(IOException e) {
        String m = e.getMessage();
        return m != null && (m.contains("No space left on device") || m.contains("Disk quota exceeded"));
    }

    private interface IoCall<T> { T call() throws IOException; }

    private <T> Promise<T> run(IoCall<T> call) {
        Promise<T> p = new Promise<>();
        try {
            io.execute(() -> {
                T v;
                try {
                    v = call.call();
                } catch (IOException e) {
                    RuntimeException failure = isNoSpace(e) ? new NoSpace(name) : new DiskError(name, String.valueOf(e.getMessage()), e);
                    loop.execute(() -> p.fail(failure));
                    return;
                } catch (RuntimeException e) {
                    loop.execute(() -> p.fail(e));
                    return;
                }
                loop.execute(() -> p.complete(v));
            });
        } catch (RejectedExecutionException e) {
            p.fail(new IllegalStateException("volume " + name + " is closed"));
        }
        return p;
    }
}
