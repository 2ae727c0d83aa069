package dev.cairn.client;

import dev.cairn.core.async.Promise;
import dev.cairn.core.proto.CairnException;
import dev.cairn.core.proto.Status;
import java.util.ArrayDeque;

/**
 * Reads a file front to back with reads ahead of the consumer: up to {@link #WINDOW_BYTES} (and
 * {@link #WINDOW_PIECES} reads) in flight or read and not yet taken, handed over in file order. A reader one piece at
 * a time waits a round trip per piece; with a window the copies' disks and the network stay busy while the consumer
 * writes out what it has. Memory stays at the window whatever the file's size.
 *
 * <p>Runs on its client's event loop, like {@link FileReader}: call {@link #next} only after the previous call's
 * promise completed.
 */
public final class SequentialReader {
    /** Bytes read ahead at most (in flight, or read and not yet taken). */
    public static final int WINDOW_BYTES = 16 << 20;
    /** Reads in flight at most (an erasure-coded file reads a cell at a time: many small pieces). */
    public static final int WINDOW_PIECES = 64;

    private record Ahead(long offset, int length, Promise<byte[]> read) {}

    private final FileReader reader;
    private final long end;
    private final ArrayDeque<Ahead> window = new ArrayDeque<>();
    private long windowBytes;
    /** Where the next read ahead starts. */
    private long issued;
    /** Where the next piece handed over starts. */
    private long taken;

    /** Reads {@code reader}'s file from its start to {@code end} (the size the caller found). */
    public SequentialReader(FileReader reader, long end) {
        if (end < 0) throw new IllegalArgumentException("negative end " + end);
        this.reader = reader;
        this.end = end;
    }

    /** Where the next piece {@link #next} hands over starts (the bytes before it are taken). */
    public long position() { return taken; }

    /**
     * The next bytes in order (at least one, unless the end was reached: then none). Fails if the file ends before
     * {@code end} (it was truncated meanwhile) or a piece cannot be read.
     */
    public Promise<byte[]> next() {
        if (taken >= end) return Promise.completed(new byte[0]);
        fill();
        Ahead head = window.poll();
        if (head == null) return Promise.failed(new CairnException(Status.IO, "short read at " + taken + " of " + end));
        assert head.offset == taken : "read ahead at " + head.offset + " handed over at " + taken;
        windowBytes -= head.length;
        return head.read.flatMap(bytes -> {
            if (bytes.length == 0) throw new CairnException(Status.IO, "short read at " + head.offset + " of " + end);
            // shorter than asked: the file moved to another layout under us; read the rest of the piece on its own
            return bytes.length == head.length ? Promise.completed(bytes) : rest(bytes, head.offset, head.length);
        }).map(bytes -> {
            taken = head.offset + bytes.length;
            fill();
            return bytes;
        });
    }

    /** Issues reads until the window is full or the end is reached. */
    private void fill() {
        while (issued < end && windowBytes < WINDOW_BYTES && window.size() < WINDOW_PIECES) {
            int n = (int) Math.min(reader.pieceAt(issued), end - issued);
            if (n <= 0) return; // the file is shorter than end now: the piece that reaches here fails
            window.add(new Ahead(issued, n, reader.read(issued, n)));
            windowBytes += n;
            issued += n;
        }
    }

    private Promise<byte[]> rest(byte[] have, long offset, int length) {
        if (have.length == length) return Promise.completed(have);
        return reader.read(offset + have.length, length - have.length).flatMap(more -> {
            if (more.length == 0) throw new CairnException(Status.IO, "short read at " + (offset + have.length) + " of " + end);
            byte[] joined = new byte[have.length + more.length];
            System.arraycopy(have, 0, joined, 0, have.length);
            System.arraycopy(more, 0, joined, have.length, more.length);
            return rest(joined, offset, length);
        });
    }
}
