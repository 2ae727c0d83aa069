package dev.cairn.chunkserver;

import dev.cairn.core.async.Promise;
import dev.cairn.core.chunk.ChunkFormat;
import dev.cairn.core.env.Log;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;

/**
 * The newest master leader term this chunkserver has heard, kept on every disk so a restart does not forget it: a
 * deposed leader that the restarted server meets first would otherwise be believed until the current leader spoke
 * again. Eight bytes of term and their CRC32C, written under a new name, synced, renamed over {@value #NAME} and the
 * directory synced, so a power loss leaves the old value or the new one, never a torn one.
 *
 * <p>Saving runs behind the term's rise: a crash in the few milliseconds between hearing a newer term and having it
 * on disk leaves the previous one, so the server is fenced against every term older than that.
 */
final class TermFile {
    static final String NAME = "master.term";
    static final String NEW = NAME + ".new";
    static final int BYTES = Long.BYTES + Integer.BYTES;

    private final List<Disk> disks;
    private final Log log;
    /** The newest term known to be on disk, and the newest asked for. */
    private long saved, wanted;
    private boolean saving;

    TermFile(List<Disk> disks, Log log) {
        this.disks = disks;
        this.log = log;
    }

    /** The newest term any healthy disk holds (0 if none holds one, or none can be read). */
    Promise<Long> load() {
        List<Promise<Long>> reads = new ArrayList<>();
        for (Disk d : disks) {
            if (d.failed()) continue;
            reads.add(d.read(NAME, 0, BYTES).then((b, e) -> {
                // a read error here fails the disk, as every error did before reads failed only their copy: the term it
                // cannot read may be the newest, and fencing must not go by an older one (a missing file is no error)
                if (e != null && dev.cairn.core.proto.CairnException.statusOf(e) == dev.cairn.core.proto.Status.CORRUPT) d.fail(e.getMessage());
                return Promise.completed(e != null ? 0L : parse(b, d));
            }));
        }
        return Promise.all(reads).map(terms -> {
            long newest = 0;
            for (long t : terms) newest = Math.max(newest, t);
            saved = wanted = newest;
            return newest;
        });
    }

    private long parse(byte[] b, Disk d) {
        if (b.length != BYTES) return 0;
        ByteBuffer buf = ByteBuffer.wrap(b);
        long term = buf.getLong();
        if (buf.getInt() != ChunkFormat.crc(b, 0, Long.BYTES)) {
            log.warn("{} on {} does not match its checksum: ignored", NAME, d.name());
            return 0;
        }
        return term;
    }

    /** Keeps {@code term} if it is newer than what is kept (in the background; one save at a time). */
    void save(long term) {
        wanted = Math.max(wanted, term);
        if (!saving && wanted > saved) saveNext();
    }

    private void saveNext() {
        long term = wanted;
        saving = true;
        byte[] b = ByteBuffer.allocate(BYTES).putLong(term).putInt(0).array();
        ByteBuffer.wrap(b).putInt(Long.BYTES, ChunkFormat.crc(b, 0, Long.BYTES));
        List<Promise<Void>> writes = new ArrayList<>();
        for (Disk d : disks) {
            if (d.failed()) continue;
            writes.add(d.write(NEW, 0, b).flatMap(x -> d.sync(NEW)).flatMap(x -> d.rename(NEW, NAME)).flatMap(x -> d.syncDirectory()));
        }
        Promise.all(writes).onComplete((x, e) -> {
            saving = false;
            if (e != null) {
                // tried again at the next rise; a failing disk is judged by the chunk I/O that meets it
                log.warn("keeping master term {} on disk failed: {}", term, e.toString());
                return;
            }
            saved = Math.max(saved, term);
            if (wanted > saved) saveNext();
        });
    }
}
