package dev.cairn.nfs.fs;

import dev.cairn.client.FileReader;
import dev.cairn.core.async.Promise;
import java.util.ArrayDeque;
import java.util.Arrays;
import java.util.LinkedHashSet;
import java.util.Set;
import java.util.function.LongPredicate;

/**
 * Reads ahead of a client that reads one file front to back: once two READs in a row each start where the one before
 * ended, the committed bytes after them are read from the cluster before they are asked for, up to
 * {@link #WINDOW_BYTES} ahead, and a READ inside what was read ahead is answered from it. A client with one READ at a
 * time (a program reading through a library, a kernel client's small read-ahead) then waits for the gateway, not for
 * a chunkserver round trip per READ.
 *
 * <p>What is read ahead is the committed bytes as of the file's change attribute then: it is used only while the file's
 * attributes here still carry that change, and for at most {@link #MAX_AGE_NANOS} (a READ issued a moment earlier
 * could have returned the same bytes); the gateway drops it at any commit, size change or fresh attributes
 * ({@link OpenFile#rebase}), and the READs of chunks this gateway holds writes for never come here. Memory is bounded
 * over the gateway ({@link Budget}); a failed read ahead is read again by the READ that wanted it.
 *
 * <p>Single-threaded, on the gateway's loop.
 */
final class ReadAhead {
    /** Bytes read ahead of one file's last READ at most. */
    static final int WINDOW_BYTES = 4 << 20;
    /** What was read ahead is used within this long of its read, or not at all. */
    static final long MAX_AGE_NANOS = 1_000_000_000L;
    /** READs in a row, each starting where the previous ended, before reading ahead. */
    static final int SEQUENTIAL_READS = 2;

    /** Bytes read ahead over every file of a gateway, at most {@link #maxBytes}. */
    static final class Budget {
        static final long MAX_BYTES = 32L << 20;
        final long maxBytes;
        private long held, hits;
        private final Set<ReadAhead> holders = new LinkedHashSet<>();

        Budget(long maxBytes) { this.maxBytes = maxBytes; }

        long held() { return held; }

        /** READs answered from what was read ahead, since start. */
        long hits() { return hits; }

        /** Room for {@code n} more bytes, dropping other files' stale read-ahead to make it if need be. */
        private boolean room(int n, long now) {
            if (held + n <= maxBytes) return true;
            for (ReadAhead r : holders.toArray(ReadAhead[]::new)) r.dropStale(now);
            return held + n <= maxBytes;
        }
    }

    private record Ahead(long offset, int length, Promise<FileReader.Piece> read, long change, long atNanos) {
        long end() { return offset + length; }
    }

    private final Budget budget;
    private final ArrayDeque<Ahead> ahead = new ArrayDeque<>();
    /** Where the last READ ended, and how many READs in a row began where the one before ended. */
    private long lastEnd = -1;
    private int inARow;
    /** Where the next read ahead starts. */
    private long next;

    ReadAhead(Budget budget) { this.budget = budget; }

    /**
     * A READ of {@code length} bytes at {@code offset} from the cluster, for a file whose change attribute is
     * {@code change}: the bytes read ahead for it if there are any (null if not), after reading further ahead up
     * to {@code committed}, the file's committed end. {@code skip} says which offsets not to read ahead (chunks this
     * gateway holds writes for); {@code reader} reads.
     */
    Promise<FileReader.Piece> read(FileReader reader, long offset, int length, long change, long committed, long now, LongPredicate skip) {
        inARow = offset == lastEnd ? inARow + 1 : 0;
        lastEnd = offset + length;
        Promise<FileReader.Piece> got = take(offset, length, change, now);
        // a READ out of turn (a client's READs in flight may arrive a little out of order) keeps what was read ahead:
        // what it passed over goes at the next READ, what nobody asks for grows stale
        if (inARow + 1 >= SEQUENTIAL_READS) fill(reader, offset + length, change, committed, now, skip);
        return got;
    }

    private Promise<FileReader.Piece> take(long offset, int length, long change, long now) {
        // what lies before this READ was passed over; what is stale may hold old bytes
        while (!ahead.isEmpty() && (ahead.peekFirst().end() <= offset || stale(ahead.peekFirst(), change, now))) release(ahead.pollFirst());
        Ahead a = ahead.peekFirst();
        if (a == null || a.offset > offset || a.end() < offset + length) return null;
        if (a.end() == offset + length) release(ahead.pollFirst());
        budget.hits++;
        if (a.offset == offset && a.length == length) return a.read;
        int from = (int) (offset - a.offset);
        return a.read.map(p -> new FileReader.Piece(Arrays.copyOfRange(p.data(), from, from + length), p.hole()));
    }

    private void fill(FileReader reader, long from, long change, long committed, long now, LongPredicate skip) {
        if (ahead.isEmpty() || from < ahead.peekFirst().offset || from > next) {
            clear(); // reading on from somewhere else: start ahead of it afresh
            next = from;
        }
        long until = Math.min(committed, from + WINDOW_BYTES);
        while (next < until) {
            int n = (int) Math.min(reader.pieceAt(next), until - next);
            if (n <= 0 || skip.test(next) || !budget.room(n, now)) return;
            ahead.addLast(new Ahead(next, n, reader.readPiece(next, n), change, now));
            budget.held += n;
            budget.holders.add(this);
            next += n;
        }
    }

    private static boolean stale(Ahead a, long change, long now) { return a.change != change || now - a.atNanos > MAX_AGE_NANOS; }

    private void dropStale(long now) {
        ahead.removeIf(a -> {
            boolean old = now - a.atNanos > MAX_AGE_NANOS;
            if (old) budget.held -= a.length;
            return old;
        });
        if (ahead.isEmpty()) {
            budget.holders.remove(this);
            next = lastEnd;
        }
    }

    private void release(Ahead a) {
        budget.held -= a.length;
        assert budget.held >= 0 : "read-ahead budget below zero";
        if (ahead.isEmpty()) budget.holders.remove(this);
    }

    /** Drops everything read ahead (the file changed, or its state is let go). */
    void clear() {
        while (!ahead.isEmpty()) release(ahead.pollFirst());
        next = lastEnd;
    }
}
