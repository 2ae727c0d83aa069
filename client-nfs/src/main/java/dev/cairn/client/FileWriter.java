package dev.cairn.client;

import dev.cairn.core.async.Promise;
import dev.cairn.core.proto.CairnException;
import dev.cairn.core.proto.Codec;
import dev.cairn.core.proto.Status;
import dev.cairn.core.proto.Types.FileAttr;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.TreeMap;

/**
 * Appends to a file. {@link #sync()} returns only when everything written so far is fsynced on every copy and
 * the file's length is committed at the master.
 *
 * <p>A replicated file streams: each write goes down its chunk's chain at once ({@link ChunkSession}), in
 * pieces of at most {@link Codec#MAX_DATA_BYTES}. At each checkpoint (a chunk moved past, or {@link #SYNC_BYTES}
 * written since the last one) the writer syncs the chunk and then commits the length so far, while it goes on
 * writing; the sessions keep each write until a commit covers it (to send it again if a copy fails), and a
 * write waits once they hold {@link #MAX_HELD_BYTES}. So a long file is committed as it goes, and the writer's
 * memory stays bounded however long the file.
 *
 * <p>An erasure-coded file buffers each chunk and writes it whole once full ({@link ChunkUpload}): a chunk is
 * never written in place (a change is a whole new chunk swapped in), so a sync in the middle of such a file is
 * refused (as HDFS refuses hflush on erasure-coded files); it is durable at {@link #close()}.
 *
 * <p>Calls must not overlap: issue the next one when the previous promise completes.
 */
public final class FileWriter {
    /** After this many bytes written, the current chunk is synced and the length committed on the way (bounds what a session keeps). */
    static final long SYNC_BYTES = 16L << 20;
    /**
     * Bytes the sessions hold at most (written, and not yet covered by a commit: a failed copy means sending them
     * again); a write past it waits for the commits on the way.
     */
    static final long MAX_HELD_BYTES = 64L << 20;

    private final CairnClient client;
    private final FileAttr file;
    private final int chunkSize;
    private final boolean ec;
    /** Replicated files: the sessions of chunks with writes not yet durable, by index. */
    private final TreeMap<Integer, ChunkSession> sessions = new TreeMap<>();
    /** The chunk versions this writer made durable and has not committed yet. */
    private final Uncommitted versions = new Uncommitted();
    /** The last commit of the chain of checkpoints (each waits for the one before): a failure fails every later one. */
    private Promise<Void> committing = Promise.completed(null);
    /** Erasure-coded files: the current chunk's bytes (grown on demand up to chunkSize). */
    private byte[] buf = new byte[0];
    private int buffered;
    private long position;
    /** Replicated files: bytes written since the last checkpoint. */
    private long sinceCheckpoint;
    /** Why an earlier write, sync or upload failed (null: none did); every later call fails saying so. */
    private Throwable failure;
    private boolean closed;

    /** The refusal of a call after a failure, with the failure's own words (a caller sees why, not only that). */
    private String failedEarlier() {
        return "writer failed earlier: " + CairnException.statusOf(failure) + ": " + CairnException.detailOf(failure);
    }

    FileWriter(CairnClient client, FileAttr file) {
        if (file.size() != 0) throw new CairnException(Status.BAD_REQUEST, "the writer appends to an empty file only");
        this.client = client;
        this.file = file;
        this.chunkSize = file.chunkSize();
        this.ec = file.storageClass().isEc();
    }

    public long position() { return position; }

    public Promise<Void> write(byte[] data) { return write(data, 0, data.length); }

    public Promise<Void> write(byte[] data, int off, int len) {
        if (failure != null || closed) return Promise.failed(new CairnException(Status.BAD_REQUEST, failure != null ? failedEarlier() : "writer closed"));
        return ec ? writeBuffered(data, off, len) : writeStreamed(data, off, len);
    }

    // ---------------------------------------------------------------- replicated: streamed

    private Promise<Void> writeStreamed(byte[] data, int off, int len) {
        if (len == 0) return Promise.completed(null);
        int index = (int) (position / chunkSize);
        int inChunk = (int) (position % chunkSize);
        int n = Math.min(len, Math.min(chunkSize - inChunk, Codec.MAX_DATA_BYTES));
        ChunkSession s = sessions.computeIfAbsent(index, i -> client.session(file, i, versions));
        Promise<Void> taken = s.write(inChunk, Arrays.copyOfRange(data, off, off + n)).onFailure(e -> failure = failure == null ? e : failure);
        position += n;
        sinceCheckpoint += n;
        if (inChunk + n == chunkSize || sinceCheckpoint >= SYNC_BYTES) checkpoint(List.of(s.sync()));
        // the rest once this piece is taken (a piece at a time per call: the chain's window does the pipelining
        // across calls); past the bound on what the sessions hold, after the commits on the way
        Promise<Void> next = heldBytes() > MAX_HELD_BYTES ? committing : Promise.completed(null);
        return next.flatMap(v -> n < len ? writeStreamed(data, off + n, len - n) : taken);
    }

    /**
     * Commits the file's length up to the current position once {@code syncs} (covering every write since the
     * previous checkpoint) and every earlier checkpoint are done; the sessions then let go of what it covers.
     * Commits go one after another, so the committed length only grows and never covers a write not yet durable.
     */
    private Promise<Void> checkpoint(List<Promise<Void>> syncs) {
        long upTo = position;
        sinceCheckpoint = 0;
        Promise<Void> synced = Promise.all(syncs).map(v -> null);
        committing = committing.flatMap(v -> synced).flatMap(v -> client.commitLength(file.inode(), upTo, versions)).map(v -> {
            release(upTo);
            return null;
        });
        committing.onFailure(e -> failure = failure == null ? e : failure);
        return committing;
    }

    /** The length is committed up to {@code upTo}: sessions of chunks before it are done, the one it ends in drops what it covers. */
    private void release(long upTo) {
        int last = (int) (upTo / chunkSize);
        while (!sessions.isEmpty() && sessions.firstKey() < last) {
            ChunkSession done = sessions.pollFirstEntry().getValue();
            assert done.pendingBytes() == 0 : "a chunk the writer moved past was committed with writes not yet durable";
        }
        ChunkSession s = sessions.get(last);
        if (s != null) s.release(upTo - (long) last * chunkSize);
    }

    private long heldBytes() {
        long n = 0;
        for (ChunkSession s : sessions.values()) n += s.heldBytes();
        return n;
    }

    // ---------------------------------------------------------------- erasure-coded: a chunk at a time

    private Promise<Void> writeBuffered(byte[] data, int off, int len) {
        int n = Math.min(len, chunkSize - buffered);
        ensureCapacity(buffered + n);
        System.arraycopy(data, off, buf, buffered, n);
        buffered += n;
        position += n;
        if (buffered < chunkSize) return Promise.completed(null);
        // the chunk is full: make it durable, then move on to the rest of the data
        return upload().flatMap(v -> {
            buffered = 0;
            return n < len ? writeBuffered(data, off + n, len - n) : Promise.completed(null);
        });
    }

    private Promise<Void> upload() {
        byte[] chunk = buffered == buf.length ? buf : Arrays.copyOf(buf, buffered);
        int index = (int) ((position - buffered) / chunkSize);
        return new ChunkUpload(client, file, index, chunk, Codec.MAX_DATA_BYTES, versions).run().onFailure(e -> failure = failure == null ? e : failure);
    }

    /**
     * Grows the buffer to hold {@code n} bytes: exactly that much the first time (a file written in one
     * call is then uploaded from its buffer, not a copy), doubling after that, and past an eighth of a chunk
     * straight to a whole chunk: doubling on to the end would hold half a chunk and a chunk at once (96 MiB for
     * 64 MiB chunks, more than {@code ./cairn put}'s 128 MiB heap has room for in its old generation).
     */
    private void ensureCapacity(int n) {
        if (n <= buf.length) return;
        int cap = buf.length == 0 ? n
                : n > chunkSize / 8 ? chunkSize
                : Math.max(n, Math.min(chunkSize, Math.max(64 << 10, buf.length * 2)));
        buf = Arrays.copyOf(buf, cap);
    }

    // ---------------------------------------------------------------- durability

    /** Makes everything written so far durable on every copy and commits the length. */
    public Promise<Void> sync() {
        if (ec) {
            return Promise.failed(new CairnException(Status.BAD_REQUEST, file.storageClass() + " files are durable at close, not before"));
        }
        return flushAndCommit();
    }

    private Promise<Void> flushAndCommit() {
        if (failure != null) return Promise.failed(new CairnException(Status.BAD_REQUEST, failedEarlier()));
        if (ec) {
            Promise<Void> data = buffered > 0 ? upload().map(v -> { buffered = 0; return null; }) : Promise.completed(null);
            long length = position;
            return data.flatMap(v -> client.commitLength(file.inode(), length, versions)).<Void>map(a -> null).onFailure(e -> failure = failure == null ? e : failure);
        }
        List<Promise<Void>> all = new ArrayList<>();
        for (ChunkSession s : sessions.values()) all.add(s.sync());
        return checkpoint(all);
    }

    /** Syncs and closes. */
    public Promise<Void> close() {
        return flushAndCommit().map(v -> {
            closed = true;
            buf = null;
            sessions.clear();
            return null;
        });
    }
}
