package dev.cairn.nfs.v4.state;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;

/**
 * Byte-range locks held on files (RFC 8881 §12, POSIX semantics as the Linux client expects them): each
 * lock owner holds, per file, a set of disjoint ranges, each a read (shared) or write (exclusive) lock.
 * Ranges of different owners conflict when they overlap and either is a write lock; an owner never
 * conflicts with itself, and locking a range it already holds replaces the type there (an upgrade or a
 * downgrade, splitting its ranges as needed), as {@code fcntl(F_SETLK)} does. Advisory: READ and WRITE
 * are not checked against them.
 *
 * <p>Offsets are unsigned 64-bit; a range is kept as its first and last byte, so "to the end of the file"
 * (length all ones) is simply last = 2^64 - 1 and no arithmetic can overflow.
 */
public final class ByteRangeLocks {
    /** Ranges held at most, over all files and owners: past it a LOCK is refused (DELAY) until some are released. */
    public static final int MAX_RANGES = 65_536;
    /** The length meaning "to the end of the file, however long it gets". */
    public static final long TO_EOF = -1L;
    public static final long LAST_BYTE = -1L;

    /** Who holds a lock: a client and the opaque lock-owner name it chose (hex, so equality is by value). */
    public record Owner(long clientId, String name) {
        public static Owner of(long clientId, byte[] name) { return new Owner(clientId, java.util.HexFormat.of().formatHex(name)); }

        public byte[] nameBytes() { return java.util.HexFormat.of().parseHex(name); }
    }

    /** One held range: bytes first..last inclusive (unsigned). */
    public record Range(Owner owner, long first, long last, boolean write) {
        public Range {
            assert Long.compareUnsigned(first, last) <= 0 : "range ends before it starts";
        }

        boolean overlaps(long f, long l) { return Long.compareUnsigned(first, l) <= 0 && Long.compareUnsigned(f, last) <= 0; }

        /** The length NFS reports for it (all ones when it runs to the end). */
        public long length() { return last == LAST_BYTE ? TO_EOF : last - first + 1; }
    }

    private final Map<Long, List<Range>> byInode = new HashMap<>();
    private int count;

    /**
     * The last byte of the range (offset, length), or null when NFS says the range is invalid: a length of
     * zero, or one that runs past 2^64 - 1 without being the all-ones "to the end".
     */
    public static Long lastByte(long offset, long length) {
        if (length == 0) return null;
        if (length == TO_EOF) return LAST_BYTE;
        long last = offset + length - 1;
        return Long.compareUnsigned(last, offset) < 0 ? null : last;
    }

    /** A range of another owner that keeps {@code owner} from locking first..last for reading or writing; null if none. */
    public Range conflict(long inode, Owner owner, boolean write, long first, long last) {
        for (Range r : byInode.getOrDefault(inode, List.of())) {
            if (!r.owner().equals(owner) && (write || r.write()) && r.overlaps(first, last)) return r;
        }
        return null;
    }

    /**
     * Locks first..last for {@code owner}, replacing whatever it held there; false (and nothing changed) if
     * it would pass {@link #MAX_RANGES}. The caller has checked {@link #conflict} first.
     */
    public boolean lock(long inode, Owner owner, boolean write, long first, long last) {
        assert conflict(inode, owner, write, first, last) == null : "locking over another owner's conflicting lock";
        List<Range> ranges = byInode.computeIfAbsent(inode, k -> new ArrayList<>());
        // a split can add one range besides the new one
        if (count + 2 > MAX_RANGES) {
            if (ranges.isEmpty()) byInode.remove(inode);
            return false;
        }
        cut(ranges, owner, first, last);
        long f = first, l = last;
        // merge with the owner's touching ranges of the same type, so ranges stay few and a LOCKT sees one
        for (Iterator<Range> it = ranges.iterator(); it.hasNext(); ) {
            Range r = it.next();
            if (!r.owner().equals(owner) || r.write() != write) continue;
            boolean before = r.last() != LAST_BYTE && r.last() + 1 == f;
            boolean after = l != LAST_BYTE && l + 1 == r.first();
            if (before || after) {
                if (before) f = r.first();
                if (after) l = r.last();
                it.remove();
                count--;
            }
        }
        ranges.add(new Range(owner, f, l, write));
        count++;
        return true;
    }

    /** Releases first..last of {@code owner}'s locks on a file (whatever part of it is held; none is fine). */
    public void unlock(long inode, Owner owner, long first, long last) {
        List<Range> ranges = byInode.get(inode);
        if (ranges == null) return;
        cut(ranges, owner, first, last);
        if (ranges.isEmpty()) byInode.remove(inode);
    }

    /** Removes the part of {@code owner}'s ranges inside first..last, keeping the pieces on either side. */
    private void cut(List<Range> ranges, Owner owner, long first, long last) {
        List<Range> keep = new ArrayList<>();
        for (Iterator<Range> it = ranges.iterator(); it.hasNext(); ) {
            Range r = it.next();
            if (!r.owner().equals(owner) || !r.overlaps(first, last)) continue;
            it.remove();
            count--;
            if (Long.compareUnsigned(r.first(), first) < 0) keep.add(new Range(owner, r.first(), first - 1, r.write()));
            if (Long.compareUnsigned(last, r.last()) < 0) keep.add(new Range(owner, last + 1, r.last(), r.write()));
        }
        ranges.addAll(keep);
        count += keep.size();
    }

    /** Whether {@code owner} holds any lock on the file. */
    public boolean holds(long inode, Owner owner) {
        for (Range r : byInode.getOrDefault(inode, List.of())) if (r.owner().equals(owner)) return true;
        return false;
    }

    /** Whether {@code owner} holds any lock on any file. */
    public boolean holdsAny(Owner owner) {
        for (List<Range> ranges : byInode.values()) for (Range r : ranges) if (r.owner().equals(owner)) return true;
        return false;
    }

    /** Drops every lock of a client (its lease ran out, or it went away). */
    public int dropClient(long clientId) {
        int n = 0;
        for (Iterator<List<Range>> files = byInode.values().iterator(); files.hasNext(); ) {
            List<Range> ranges = files.next();
            for (Iterator<Range> it = ranges.iterator(); it.hasNext(); ) {
                if (it.next().owner().clientId() == clientId) {
                    it.remove();
                    n++;
                }
            }
            if (ranges.isEmpty()) files.remove();
        }
        count -= n;
        return n;
    }

    /** The ranges held on a file, in no particular order (tests, diagnostics). */
    public List<Range> ranges(long inode) { return List.copyOf(byInode.getOrDefault(inode, List.of())); }

    public int size() { return count; }
}
