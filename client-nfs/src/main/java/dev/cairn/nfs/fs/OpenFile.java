package dev.cairn.nfs.fs;

import dev.cairn.client.ChunkSession;
import dev.cairn.client.FileReader;
import dev.cairn.core.async.Promise;
import dev.cairn.core.async.SerialQueue;
import dev.cairn.core.proto.Types.FileAttr;
import java.util.TreeMap;

/**
 * What the gateway holds of one file: the size and change counter clients must see between a WRITE and the
 * COMMIT that makes it durable, and the means of writing it.
 *
 * <p>A replicated file is written through one {@link ChunkSession} per chunk touched: each WRITE goes down the
 * chunk's chain at once, and the session keeps the bytes until a commit covers them (to send them again if a
 * copy fails), which is what the gateway's write-behind bounds count. An erasure-coded file is written a
 * whole chunk at a time, so its changed chunks are held as {@link Image}s until COMMIT.
 *
 * <p>Commits, size changes and erasure-coded uploads run one at a time through {@link #meta}; WRITEs and READs
 * of a replicated file do not queue behind them (a COMMIT covers every WRITE answered before it arrived).
 */
final class OpenFile {
    /** An erasure-coded chunk's image: {@code length} valid bytes of {@code bytes}; dirty until uploaded. */
    static final class Image {
        byte[] bytes;
        int length;
        boolean dirty;
        /** Bytes of this image counted in the dirty totals (its length when last accounted, if dirty). */
        int counted;
        /** The chunk its bytes were read from (an upload is refused if another writer's change replaced it since). */
        final long base;

        Image(byte[] bytes, int length, long base) {
            this.bytes = bytes;
            this.length = length;
            this.base = base;
        }

        void ensure(int n, int chunkSize) {
            if (n <= bytes.length) return;
            bytes = java.util.Arrays.copyOf(bytes, Math.min(chunkSize, Math.max(n, bytes.length * 2)));
        }
    }

    final long inode;
    final SerialQueue meta = new SerialQueue();
    /** Replicated files: a session per chunk written since the file was opened here, by index. */
    final TreeMap<Integer, ChunkSession> sessions = new TreeMap<>();
    /** The chunk versions written here and not yet committed (this file's, as this gateway writes it). */
    final dev.cairn.client.Uncommitted versions = new dev.cairn.client.Uncommitted();
    /** Erasure-coded files: the chunks being changed. */
    final TreeMap<Integer, Image> images = new TreeMap<>();
    /** Erasure-coded files: a commit was refused STALE and the images are being uploaded again (once, until a commit succeeds). */
    boolean uploadingAgain;
    /** The master's view of the file as last fetched. */
    FileAttr base;
    /** The size clients see: the master's, or further if WRITEs not yet committed went further. */
    long size;
    /** WRITEs applied since {@link #base} was fetched (folded into the change attribute clients see). */
    long localChanges;
    long mtimeMillis;
    /** When the last WRITE was applied (monotonic): held writes idle long enough are written back. */
    long lastWriteNanos;
    /** Erasure-coded files: bytes of dirty images. */
    long imageBytes;
    /** WRITEs taken and not yet answered by the chains (a COMMIT or a clean check must count them). */
    int writing;
    /** WRITEs answered since the last commit of the file began: a COMMIT with none has nothing to do. */
    long unstable;
    /** A flush queued on {@link #meta} and not yet started: later callers share it. */
    Promise<Void> queuedFlush;
    /** Writes answered earlier were lost before a commit covered them: the next commit fails with this. */
    dev.cairn.core.proto.CairnException lost;
    /** Set while a size change runs: WRITEs wait for it. */
    Promise<Void> barrier = Promise.completed(null);
    FileReader reader;
    /** Sequential READs of committed bytes are read ahead; dropped with {@link #reader}. */
    ReadAhead ahead;

    OpenFile(FileAttr base) {
        this.inode = base.inode();
        this.base = base;
        this.size = base.size();
        this.mtimeMillis = base.mtimeMillis();
    }

    int chunkSize() { return base.chunkSize(); }

    boolean ec() { return base.storageClass().isEc(); }

    /** Bytes the sessions hold: written and not yet covered by a commit. */
    long heldBytes() {
        long n = 0;
        for (ChunkSession s : sessions.values()) n += s.heldBytes();
        return n;
    }

    /** Something written here is not yet committed at the master (or is on its way). */
    boolean dirty() { return size != base.size() || imageBytes > 0 || writing > 0 || unstable > 0 || heldBytes() > 0; }

    /**
     * Nothing is held or under way: the attributes are the master's to give (fetched again before use), though a
     * loss may still be owed to the next COMMIT. A file whose lost writes no client committed would otherwise keep
     * its old size for good (sim seed 154 with the NFS lane: READs stopped at it after another writer grew the file).
     */
    boolean cacheOnly() { return !dirty() && meta.idle(); }

    /** ... and no loss is owed either: the state may be dropped. */
    boolean idle() { return cacheOnly() && lost == null; }

    /** The attributes a client sees now. */
    FileAttr attr() {
        FileAttr b = base;
        return new FileAttr(b.inode(), b.type(), size, mtimeMillis, b.chunkSize(), b.storageClass(), b.mode(), b.uid(), b.gid(), b.nlink(),
                b.atimeMillis(), localChanges == 0 ? b.ctimeMillis() : mtimeMillis, ClusterFs.change(b.change(), localChanges), b.parent(), b.target());
    }

    /** The master's answer after a commit or attribute change: local changes are folded into its counter now. */
    void rebase(FileAttr fresh) {
        // judged against the old base: against the new one an idle file whose size another writer changed looks
        // dirty (its size differs from the fresh one), keeps its stale size, and the next commit of this gateway
        // sets the file back to it, past what the copies hold (sim seed 13 with the NFS lane: a native client's
        // ClusterFs committed a file's old length after the gateway had shrunk it; the tail became unreadable)
        boolean dirty = dirty();
        base = fresh;
        localChanges = 0;
        if (!dirty) {
            size = fresh.size();
            mtimeMillis = fresh.mtimeMillis(); // a SETATTR may set it back in time
        } else {
            size = Math.max(size, fresh.size());
            mtimeMillis = Math.max(mtimeMillis, fresh.mtimeMillis());
        }
        reader = null;
        if (ahead != null) ahead.clear(); // read from the file as it was
    }
}
