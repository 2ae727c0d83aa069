package dev.cairn.sim.workload;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * One file's content as the checkers know it, kept outside the system under test: what the cluster
 * acknowledged, and what writes it has not (yet, or ever) acknowledged may have put there.
 *
 * <p>Each write is a piece of a content stream ({@link Oracle#valueAt}: the byte at file position x of
 * stream s is a function of s and x), so a write is (offset, length, stream) and any byte is checked
 * without storing it. Writes and truncates are <em>pending</em> from when they are issued until an
 * acknowledgement covers them (a sync, a close, an NFS COMMIT): then they are folded, in issue order, into
 * the acknowledged content. A write whose outcome is lost (its sync failed) becomes <em>maybe</em> for
 * good: it may have landed, wholly or in part, or not at all.
 *
 * <p>A read is right if every byte it returns is the acknowledged byte there, or what a pending or maybe
 * write put there, or a zero a pending or maybe truncate could have left; and its length is between the
 * shortest and the longest the file can be. Anything else is a byte never written (corruption, a stale
 * copy that missed an acknowledged write, a misplaced block). A read that overlaps changes to the file
 * ({@link #beginRead}) may see each byte as it was at any moment between its start and its end: as the
 * file was when it began, or as any write issued meanwhile left it.
 */
public final class FileModel {
    /** Stream id of zeros (holes, and the space a truncate or an extension leaves). */
    static final long ZEROS = Long.MIN_VALUE;

    /** A write of stream {@code seed} over {@code [offset, offset + length)}, or (length -1) a truncate to {@code offset}. */
    public record Op(long offset, long length, long seed) {
        public boolean truncate() { return length < 0; }

        public long end() { return truncate() ? offset : offset + length; }

        boolean covers(long x) { return !truncate() && offset <= x && x < offset + length; }
    }

    /** Acknowledged content: segment start -> {end, stream}; the segments tile {@code [0, ackedLength)}. */
    private final TreeMap<Long, long[]> segments = new TreeMap<>();
    private long ackedLength;
    /** Issued and not yet acknowledged, in issue order. */
    private final List<Op> pending = new ArrayList<>();
    /** Outcome never known: may have landed, in part or whole, forever. */
    private final List<Op> maybe = new ArrayList<>();
    /** At least one acknowledgement (an acknowledged empty file counts). */
    private boolean acked;
    /** Reads under way: each collects the ops issued while it runs. */
    private final List<Read> reads = new ArrayList<>();

    /**
     * A read under way: the file as it was when the read began, and the ops issued since. Ended by
     * {@link #check(byte[], Read)} or {@link #endRead}.
     */
    public static final class Read {
        final FileModel atStart;
        final List<Op> issued = new ArrayList<>();

        Read(FileModel atStart) { this.atStart = atStart; }

        /** Whether the file as it began, or an op issued since, explains {@code b} at {@code x}. */
        boolean explains(long x, byte b) {
            if (atStart.explains(x, b) || explainedBy(issued, x, b)) return true;
            if (b != 0 || x < atStart.ackedLength) return false;
            for (Op op : issued) if (op.end() > x) return true; // a gap a write past the end left, until filled
            return false;
        }
    }

    /** A read of the file begins now. */
    public Read beginRead() {
        Read r = new Read(copy());
        reads.add(r);
        return r;
    }

    /** A read ended without bytes to check (it failed). */
    public void endRead(Read r) { reads.remove(r); }

    /** A deep copy of the model as it is now (reads under way not included). */
    private FileModel copy() {
        FileModel c = new FileModel();
        for (Map.Entry<Long, long[]> e : segments.entrySet()) c.segments.put(e.getKey(), e.getValue().clone());
        c.ackedLength = ackedLength;
        c.pending.addAll(pending);
        c.maybe.addAll(maybe);
        c.acked = acked;
        return c;
    }

    private void issued(Op op) {
        for (Read r : reads) r.issued.add(op);
    }

    public long ackedLength() { return ackedLength; }

    public boolean everAcked() { return acked; }

    public boolean hasPending() { return !pending.isEmpty(); }

    /** The ops issued and not yet acknowledged, in issue order. */
    public List<Op> pendingOps() { return List.copyOf(pending); }

    /** A write is issued. */
    public Op write(long offset, long length, long seed) {
        if (offset < 0 || length < 0) throw new IllegalArgumentException("write of " + length + " at " + offset);
        Op op = new Op(offset, length, seed);
        pending.add(op);
        issued(op);
        return op;
    }

    /** A truncate (or extension) to {@code length} is issued. */
    public Op truncate(long length) {
        if (length < 0) throw new IllegalArgumentException("truncate to " + length);
        Op op = new Op(length, -1, ZEROS);
        pending.add(op);
        issued(op);
        return op;
    }

    /** Everything issued up to now is acknowledged (a sync or close returned OK). */
    public void acknowledgeAll() {
        for (Op op : pending) fold(op);
        pending.clear();
        acked = true;
    }

    /** The ops issued up to and including {@code last} are acknowledged (an NFS COMMIT covering them). */
    public void acknowledgeThrough(Op last) {
        int i = pending.indexOf(last);
        if (i < 0) throw new IllegalArgumentException("not pending: " + last);
        for (int k = 0; k <= i; k++) fold(pending.get(k));
        pending.subList(0, i + 1).clear();
        acked = true;
    }

    /** Everything pending will never be known to have landed or not (its sync failed; the writer gave up). */
    public void abandonPending() {
        maybe.addAll(pending);
        pending.clear();
    }

    /** The shortest the file can be read as. */
    public long minLength() {
        long min = ackedLength;
        for (Op op : pending) if (op.truncate()) min = Math.min(min, op.offset());
        for (Op op : maybe) if (op.truncate()) min = Math.min(min, op.offset());
        return min;
    }

    /** The longest the file can be read as (a commit the writer saw fail may still have reached the master). */
    public long maxLength() {
        long max = ackedLength;
        for (Op op : pending) max = Math.max(max, op.end());
        for (Op op : maybe) max = Math.max(max, op.end());
        return max;
    }

    /** True if no pending or maybe op touches {@code [from, to)}: its bytes are exactly the acknowledged ones. */
    public boolean determined(long from, long to) {
        for (List<Op> ops : List.of(pending, maybe)) {
            for (Op op : ops) {
                if (op.truncate() ? op.offset() < to : op.offset() < to && from < op.end()) return false;
            }
        }
        return true;
    }

    /**
     * A fingerprint of the bytes {@code [from, to)} when they are {@link #determined} (the acknowledged
     * streams and where they lie there), 0 if they are not: equal fingerprints mean equal bytes, so what was
     * computed from them (checksums, parity) may be reused.
     */
    public long fingerprint(long from, long to) {
        if (!determined(from, to)) return 0;
        long h = 0x9e3779b97f4a7c15L ^ to;
        for (long pos = from; pos < to; ) {
            Map.Entry<Long, long[]> e = segments.floorEntry(pos);
            boolean inSeg = e != null && pos < e.getValue()[0];
            long end = inSeg ? Math.min(to, e.getValue()[0]) : Math.min(to, nextStart(pos, to));
            long stream = inSeg ? e.getValue()[1] : ZEROS;
            h = Oracle.mix(h ^ Oracle.mix(pos * 31 + end) ^ stream);
            pos = end;
        }
        return h == 0 ? 1 : h;
    }

    /** The acknowledged bytes {@code [from, from + n)} (zeros past the acknowledged length). */
    public byte[] ackedBytes(long from, int n) {
        byte[] out = new byte[n];
        for (long pos = from; pos < from + n; ) {
            Map.Entry<Long, long[]> e = segments.floorEntry(pos);
            long segEnd = e == null || e.getValue()[0] <= pos ? nextStart(pos, from + n) : e.getValue()[0];
            long stream = e == null || e.getValue()[0] <= pos ? ZEROS : e.getValue()[1];
            long to = Math.min(from + n, segEnd);
            if (stream != ZEROS) Oracle.fill(stream, pos, out, (int) (pos - from), (int) (to - pos));
            pos = to;
        }
        return out;
    }

    private long nextStart(long pos, long limit) {
        Long next = segments.higherKey(pos);
        return next == null ? limit : Math.min(next, limit);
    }

    /**
     * The file position of the first byte of {@code got[from, from + n)}, read at file position {@code offset},
     * that no acknowledged, pending or maybe write can explain; -1 if there is none.
     */
    public long mismatch(long offset, byte[] got, int from, int n) { return mismatch(offset, got, from, n, null); }

    /** As above; a byte is also explained if {@code during} (a read's window) explains it. */
    private long mismatch(long offset, byte[] got, int from, int n, Read during) {
        long end = offset + n;
        for (long pos = offset; pos < end; ) {
            Map.Entry<Long, long[]> e = segments.floorEntry(pos);
            boolean inSeg = e != null && pos < e.getValue()[0];
            long segEnd = inSeg ? Math.min(end, e.getValue()[0]) : Math.min(end, nextStart(pos, end));
            long stream = inSeg ? e.getValue()[1] : ZEROS;
            // fast path: the whole stretch is the acknowledged stream
            while (pos < segEnd) {
                int at = from + (int) (pos - offset);
                int k = Oracle.mismatchAt(stream, pos, got, at, (int) (segEnd - pos));
                if (k < 0) {
                    pos = segEnd;
                    break;
                }
                long x = pos + k;
                byte b = got[from + (int) (x - offset)];
                if (!otherwise(x, b) && (during == null || !during.explains(x, b))) return x;
                pos = x + 1;
            }
        }
        return -1;
    }

    /** Whether a pending or maybe op can explain byte {@code b} at file position {@code x}. */
    private boolean otherwise(long x, byte b) {
        if (explainedBy(pending, x, b) || explainedBy(maybe, x, b)) return true;
        return x >= ackedLength && b == 0 && maxLength() > x; // a gap a pending write past the end would leave
    }

    /** Whether {@code b} at {@code x} is what the model says may be there: acknowledged, or left by a pending or maybe op. */
    private boolean explains(long x, byte b) {
        Map.Entry<Long, long[]> e = segments.floorEntry(x);
        boolean inSeg = e != null && x < e.getValue()[0];
        byte acked = inSeg ? Oracle.valueAt(e.getValue()[1], x) : 0;
        return (x < ackedLength && acked == b) || otherwise(x, b);
    }

    /** A check of a whole read: length in range and every byte explained; null if right, else what is wrong. */
    public String check(byte[] got) { return check(got, null); }

    /**
     * A check of a whole read begun with {@link #beginRead} (ending it), or of one that overlapped nothing
     * ({@code read} null): each byte and the length as the file could be at some moment of the read.
     */
    public String check(byte[] got, Read read) {
        if (read != null) reads.remove(read);
        long min = minLength(), max = maxLength();
        if (read != null) {
            min = Math.min(min, read.atStart.minLength());
            max = Math.max(max, read.atStart.maxLength());
            for (Op op : read.issued) {
                if (op.truncate()) min = Math.min(min, op.offset());
                max = Math.max(max, op.end());
            }
        }
        if (got.length < min || got.length > max) {
            return got.length + " bytes, acknowledged " + ackedLength + ", at least " + min + ", at most " + max;
        }
        long x = mismatch(0, got, 0, got.length, read);
        return x < 0 ? null : "bytes never written " + difference(got, x);
    }

    /** Where {@code got} first differs from what was acknowledged, and the two bytes there. */
    private String difference(byte[] got, long x) {
        Map.Entry<Long, long[]> e = segments.floorEntry(x);
        boolean inSeg = e != null && x < e.getValue()[0];
        return "(first difference at offset " + x + ": " + got[(int) x] + ", acknowledged " + (inSeg ? Oracle.valueAt(e.getValue()[1], x) : 0) + ")";
    }

    /**
     * A check of a read of the file's first {@code got.length} bytes only, begun with {@link #beginRead} (ending it): each
     * byte as the file could be at some moment of the read (a reader that stopped early: its length says nothing).
     */
    public String checkPrefix(byte[] got, Read read) {
        reads.remove(read);
        long x = mismatch(0, got, 0, got.length, read);
        return x < 0 ? null : "bytes never written in its first " + got.length + " " + difference(got, x);
    }

    private void fold(Op op) {
        if (op.truncate()) {
            long l = op.offset();
            if (l < ackedLength) {
                Map.Entry<Long, long[]> e = segments.floorEntry(l);
                segments.tailMap(l, true).clear();
                if (e != null && e.getKey() < l && e.getValue()[0] > l) e.getValue()[0] = l;
            } else if (l > ackedLength) {
                put(ackedLength, l, ZEROS);
            }
            ackedLength = l;
            return;
        }
        if (op.offset() > ackedLength) put(ackedLength, op.offset(), ZEROS);
        if (op.length() > 0) put(op.offset(), op.end(), op.seed());
        ackedLength = Math.max(ackedLength, op.end());
    }

    /** Sets {@code [from, to)} to stream {@code seed}, splitting the segments it overlaps. */
    private void put(long from, long to, long seed) {
        Map.Entry<Long, long[]> before = segments.floorEntry(from);
        if (before != null && before.getKey() < from && before.getValue()[0] > from) {
            long oldEnd = before.getValue()[0];
            before.getValue()[0] = from;
            if (oldEnd > to) segments.put(to, new long[] {oldEnd, before.getValue()[1]});
        }
        Map.Entry<Long, long[]> last = segments.floorEntry(to - 1);
        if (last != null && last.getKey() >= from && last.getValue()[0] > to) segments.put(to, new long[] {last.getValue()[0], last.getValue()[1]});
        segments.subMap(from, true, to, false).clear();
        segments.put(from, new long[] {to, seed});
        assert tiled() : "segments do not tile [0, " + ackedLength + ")";
    }

    /** The segments are disjoint and in order (they tile the acknowledged length once folding is done). */
    private boolean tiled() {
        long at = -1;
        for (Map.Entry<Long, long[]> e : segments.entrySet()) {
            if (e.getKey() < at || e.getValue()[0] <= e.getKey()) return false;
            at = e.getValue()[0];
        }
        return true;
    }

    private static boolean explainedBy(List<Op> ops, long x, byte b) {
        for (Op op : ops) {
            if (op.truncate() ? op.offset() <= x && b == 0 : op.covers(x) && Oracle.valueAt(op.seed(), x) == b) return true;
        }
        return false;
    }

    /** The ops whose outcome is never known (for reports). */
    public List<Op> maybeOps() { return List.copyOf(maybe); }

    @Override public String toString() {
        return "acked " + ackedLength + " in " + segments.size() + " segments, " + pending.size() + " pending, " + maybe.size() + " maybe";
    }
}
