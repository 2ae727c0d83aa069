package dev.cairn.client;

import dev.cairn.core.async.Promise;
import dev.cairn.core.proto.CairnException;
import dev.cairn.core.proto.Codec;
import dev.cairn.core.proto.Status;
import dev.cairn.core.proto.Types.FileAttr;
import java.util.Arrays;

/**
 * Appends to a file, one chunk at a time. Bytes of the current chunk are kept until that chunk is
 * durable on every copy of its chain, so a failed server can be cut out and the chunk sent again to a
 * new chain under a new version. {@link #sync()} returns only when everything written so far is
 * fsynced on every copy and the file's length is committed at the master.
 *
 * <p>Erasure-coded files are durable at {@link #close()} only: their chunks are written once, so a sync in
 * the middle of such a file is refused (as HDFS refuses hflush on erasure-coded files).
 *
 * <p>Calls must not overlap: issue the next one when the previous promise completes.
 */
public final class FileWriter {
    private final CairnClient client;
    private final FileAttr file;
    private final int chunkSize;
    /** The current chunk's bytes (grown on demand up to chunkSize). */
    private byte[] buf = new byte[0];
    private int buffered;
    /** Bytes in chunks before the current one (all durable). */
    private long flushedChunks;
    private int chunkIndex;
    private boolean failed;
    private boolean closed;

    FileWriter(CairnClient client, FileAttr file) {
        if (file.size() != 0) throw new CairnException(Status.BAD_REQUEST, "the writer appends to an empty file only");
        this.client = client;
        this.file = file;
        this.chunkSize = file.chunkSize();
    }

    public long position() { return flushedChunks + buffered; }

    public Promise<Void> write(byte[] data) { return write(data, 0, data.length); }

    public Promise<Void> write(byte[] data, int off, int len) {
        if (failed || closed) return Promise.failed(new CairnException(Status.BAD_REQUEST, failed ? "writer failed earlier" : "writer closed"));
        int n = Math.min(len, chunkSize - buffered);
        ensureCapacity(buffered + n);
        System.arraycopy(data, off, buf, buffered, n);
        buffered += n;
        if (buffered < chunkSize) return Promise.completed(null);
        // the chunk is full: make it durable, then move on to the rest of the data
        return upload().flatMap(v -> {
            flushedChunks += buffered;
            buffered = 0;
            chunkIndex++;
            return n < len ? write(data, off + n, len - n) : Promise.completed(null);
        });
    }

    /** Makes everything written so far durable on every copy and commits the length. */
    public Promise<Void> sync() {
        if (file.storageClass().isEc()) {
            return Promise.failed(new CairnException(Status.BAD_REQUEST, file.storageClass() + " files are durable at close, not before"));
        }
        return flushAndCommit();
    }

    private Promise<Void> flushAndCommit() {
        if (failed) return Promise.failed(new CairnException(Status.BAD_REQUEST, "writer failed earlier"));
        Promise<Void> data = buffered > 0 ? upload() : Promise.completed(null);
        long length = position();
        return data.flatMap(v -> client.commitLength(file.inode(), length)).onFailure(e -> failed = true);
    }

    /** Syncs and closes. */
    public Promise<Void> close() {
        return flushAndCommit().map(v -> {
            closed = true;
            buf = null;
            return null;
        });
    }

    private Promise<Void> upload() {
        byte[] chunk = buffered == buf.length ? buf : Arrays.copyOf(buf, buffered);
        return new ChunkUpload(client, file, chunkIndex, chunk, Codec.MAX_DATA_BYTES).run()
                .onFailure(e -> failed = true);
    }

    /**
     * Grows the buffer to hold {@code n} bytes: exactly that much the first time (a file written in one
     * call is then uploaded from its buffer, not a copy), doubling after that, never past a chunk.
     */
    private void ensureCapacity(int n) {
        if (n <= buf.length) return;
        int cap = buf.length == 0 ? n : Math.max(n, Math.min(chunkSize, Math.max(64 << 10, buf.length * 2)));
        buf = Arrays.copyOf(buf, cap);
    }
}
