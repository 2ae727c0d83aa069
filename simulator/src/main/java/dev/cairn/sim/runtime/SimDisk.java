package dev.cairn.sim.runtime;

import dev.cairn.core.env.Volume;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.HashMap;

/**
 * A simulated disk: a durable image (what survives power loss) and the current, volatile view (what the
 * page cache shows). {@code sync(file)} makes a file's bytes durable; {@code syncDirectory()} makes the
 * set of names durable. Operations queue FIFO per disk and take time.
 *
 * <p>Faults: stalls, a slow factor, death, failing fsyncs, a capacity (ENOSPC), read errors, misdirected
 * writes, bit flips, and power loss, which either drops every unsynced write or, with torn writes on,
 * leaves each unsynced 4 KiB sector old or new independently (writes reach the platter in any order),
 * the length old or new, and space the file grew into possibly garbage.
 */
public final class SimDisk {
    static final long OP_NANOS = 20_000;
    static final long BYTES_PER_SECOND = 500_000_000L;
    static final long MIN_SYNC_NANOS = 500_000;
    static final long SYNC_SPREAD_NANOS = 2_500_000;
    /** The unit a power loss tears writes at. */
    public static final int SECTOR = 4096;

    private final SimHost host;
    private final String name;
    // Hash maps: every operation looks its file up, and a tree of names sharing a long prefix compares
    // many characters per level. Nothing depends on their order: listings and power loss sort first.
    private final HashMap<String, SimFile> names = new HashMap<>();
    /** The durable directory: names as of the last directory sync. */
    private final HashMap<String, SimFile> durableNames = new HashMap<>();
    /** Names created, renamed or deleted since the last directory sync (value null: deleted). */
    private final HashMap<String, SimFile> dirtyNames = new HashMap<>();
    private long usedBytes;
    private long busyUntil;
    private long bytesWritten;
    // --- faults ---
    /** Nothing completes before this instant (a stalled disk: the calls queue behind it). */
    private long stallUntil;
    /** Every call takes this many times as long (a slow, dying disk). */
    private int slowFactor = 1;
    /** Every call fails with an I/O error from now on. */
    private boolean dead;
    /** The next this-many file syncs fail (and what they covered is lost). */
    private int failingSyncs;
    /** The next this-many reads fail with an I/O error (latent sector errors). */
    private int failingReads;
    /** The next this-many writes land one sector past where they were aimed. */
    private int misdirectedWrites;
    /** Writes that would grow the disk's files past this fail with ENOSPC. */
    private long capacityBytes = Long.MAX_VALUE;
    /** Power loss tears unsynced writes at sector granularity instead of dropping them whole. */
    private boolean tornWrites;

    /** An operation waiting for the disk: when it completes, and how to move it if a stall ends early. */
    private record Pending(long at, dev.cairn.core.env.Cancellable event, Runnable complete, long digest, int incarnation) {}

    /** Operations not yet completed, in submission order (pruned as they pass). */
    private final java.util.ArrayDeque<Pending> pending = new java.util.ArrayDeque<>();

    SimDisk(SimHost host, String name) {
        this.host = host;
        this.name = name;
    }

    public String name() { return name; }

    /** When an operation costing {@code nanos} submitted now completes (FIFO behind earlier ones, and after any stall). */
    long completion(long nanos) {
        long start = Math.max(Math.max(host.sim().now(), busyUntil), stallUntil);
        busyUntil = start + nanos * slowFactor;
        return busyUntil - host.sim().now();
    }

    // --- fault controls ---

    /** Stalls the disk for {@code nanos} from now: calls submitted meanwhile, and queued ones, wait it out. */
    void stall(long nanos) {
        stallUntil = Math.max(stallUntil, host.sim().now() + nanos);
        busyUntil = Math.max(busyUntil, stallUntil);
    }

    void setSlowFactor(int factor) {
        if (factor < 1) throw new IllegalArgumentException("slow factor " + factor);
        slowFactor = factor;
    }

    /** The disk dies: every call from now fails with an I/O error (its contents stay, unreadable). */
    void kill() { dead = true; }

    /** A killed disk answers again, its contents as they were (durable or not: nothing was lost meanwhile). */
    void revive() { dead = false; }

    public boolean isDead() { return dead; }

    /** The next {@code n} file syncs fail; the unsynced writes each covered are lost. */
    void failSyncs(int n) { failingSyncs += n; }

    void failReads(int n) { failingReads += n; }

    void misdirectWrites(int n) { misdirectedWrites += n; }

    void setCapacity(long bytes) { capacityBytes = bytes; }

    /** The filesystem's space as statvfs would give it: known only while a capacity is set (the disk-full fault). */
    Volume.Space space() {
        if (capacityBytes == Long.MAX_VALUE || dead) return null;
        return new Volume.Space(Math.max(0, capacityBytes - usedBytes), capacityBytes, host.name() + "/" + name);
    }

    void setTornWrites(boolean on) { tornWrites = on; }

    void track(long at, dev.cairn.core.env.Cancellable event, Runnable complete, long digest) {
        long now = host.sim().now();
        while (!pending.isEmpty() && pending.peekFirst().at() <= now) pending.pollFirst();
        pending.addLast(new Pending(at, event, complete, digest, host.incarnation()));
    }

    /**
     * Clears the transient faults (stall, slowness, armed failures, capacity); a dead disk stays dead.
     * Operations queued behind a stall or a slow spell complete as a healthy disk would take them.
     */
    void heal() {
        long now = host.sim().now();
        stallUntil = now;
        busyUntil = now;
        slowFactor = 1;
        for (Pending p : pending) {
            if (p.at() <= now || p.incarnation() != host.incarnation()) continue;
            p.event().cancel();
            long delay = completion(OP_NANOS);
            host.sim().at(delay, host, Simulation.Kind.DISK, p.digest(), p.complete());
        }
        pending.clear();
        failingSyncs = 0;
        failingReads = 0;
        misdirectedWrites = 0;
        capacityBytes = Long.MAX_VALUE;
    }

    /** The disk is gone with its machine: nothing on it survives. */
    void destroy() {
        names.clear();
        durableNames.clear();
        dirtyNames.clear();
        usedBytes = 0;
        dead = true;
    }

    /** A dead disk fails every call ({@code op} and {@code file} only name it in the error). */
    private void check(String op, String file) {
        if (dead) throw new Volume.DiskError(name, op + (file.isEmpty() ? "" : " " + file) + ": input/output error", null);
    }

    public long usedBytes() { return usedBytes; }

    long transferNanos(int bytes) { return OP_NANOS + bytes * 1_000_000_000L / BYTES_PER_SECOND; }

    long syncNanos() { return MIN_SYNC_NANOS + host.sim().random().nextLong(SYNC_SPREAD_NANOS); }

    // --- operations, applied when they complete ---

    void write(String file, long offset, byte[] data) {
        check("write", file);
        host.sim().writing(host, this, file, offset, data.length);
        if (misdirectedWrites > 0) {
            misdirectedWrites--;
            offset += SECTOR; // the head lands on the wrong track: the aimed-at sectors keep their old bytes
            host.sim().damaged(host, name, file);
        }
        SimFile existing = names.get(file);
        int end = Math.toIntExact(offset + data.length);
        long growth = end - (existing == null ? 0 : existing.length());
        if (growth > 0 && usedBytes + growth > capacityBytes) throw new Volume.NoSpace(name);
        SimFile f = existing;
        if (f == null) {
            f = new SimFile();
            names.put(file, f);
            dirtyNames.put(file, f);
        }
        if (end > f.length()) usedBytes += end - f.length();
        f.write(offset, data);
        bytesWritten += data.length;
    }

    /** Null if the file does not exist. */
    byte[] read(String file, long offset, int length) {
        SimFile f = reading(file, offset);
        return f == null ? null : f.read(offset, length);
    }

    /** {@link Volume#checksums} of the file's current bytes, or null if there is no such file. */
    int[] checksums(String file, long offset, int length, int blockSize) {
        SimFile f = reading(file, offset);
        return f == null ? null : f.checksums(offset, length, blockSize);
    }

    /** The file a read is from (null: none), after the read faults have had their say. */
    private SimFile reading(String file, long offset) {
        check("read", file);
        if (failingReads > 0) {
            failingReads--;
            throw new Volume.DiskError(name, "read " + file + " at " + offset + ": input/output error", null);
        }
        return names.get(file);
    }

    boolean sync(String file) {
        check("fsync", file);
        SimFile f = names.get(file);
        if (f == null) return false;
        if (failingSyncs > 0) {
            failingSyncs--;
            usedBytes += f.durableLength() - f.length();
            f.revert(); // the kernel dropped the dirty pages it could not write back
            throw new Volume.DiskError(name, "fsync " + file + ": input/output error", null);
        }
        f.sync();
        return true;
    }

    void syncDirectory() {
        check("fsync directory", "");
        for (Map.Entry<String, SimFile> e : dirtyNames.entrySet()) {
            if (e.getValue() == null) durableNames.remove(e.getKey()); else durableNames.put(e.getKey(), e.getValue());
        }
        dirtyNames.clear();
    }

    boolean rename(String from, String to) {
        check("rename", from);
        SimFile f = names.remove(from);
        if (f == null) return false;
        SimFile replaced = names.put(to, f);
        if (replaced != null) usedBytes -= replaced.length();
        dirtyNames.put(from, null);
        dirtyNames.put(to, f);
        return true;
    }

    /**
     * A chunkserver has decided to delete {@code file} (it is out of service from now on): the checkers judge the
     * deletion now, against the state it was decided in. The unlink comes when the chunk's queued operations and
     * the disk get to it (behind a stall, perhaps seconds later), and a copy lost elsewhere meanwhile is not the
     * deletion's doing (sim seed 5061: a duplicate part dropped while another copy of it stood, unlinked 15 s
     * later behind a stalled disk, after the other copy's host was lost). An unlink nobody announced is judged
     * when it happens.
     */
    void retiring(String file) {
        if (names.containsKey(file) && retired.add(file)) host.sim().deleting(host, this, file);
    }

    /** Files announced by {@link #retiring} and not unlinked yet. */
    private final java.util.Set<String> retired = new java.util.HashSet<>();

    /** The process that announced deletions is gone: its queued unlinks never come, and the next incarnation's are judged afresh. */
    void processDied() { retired.clear(); }

    void delete(String file) {
        check("unlink", file);
        if (names.containsKey(file) && !retired.remove(file)) host.sim().deleting(host, this, file);
        SimFile f = names.remove(file);
        if (f != null) {
            usedBytes -= f.length();
            dirtyNames.put(file, null);
        }
    }

    List<String> list() {
        check("readdir", "");
        return sortedNames();
    }

    private List<String> sortedNames() {
        List<String> out = new ArrayList<>(names.keySet());
        java.util.Collections.sort(out);
        return out;
    }

    /** Ground truth for the checkers: file names in the volatile view (no I/O, no faults). */
    public List<String> files() { return sortedNames(); }

    /** Ground truth for the checkers: a file's current bytes, or null. */
    public byte[] peek(String file) {
        SimFile f = names.get(file);
        return f == null ? null : f.currentCopy();
    }

    /** Ground truth for the checkers: a file's current length, or -1 if there is no such file. */
    public long peekLength(String file) {
        SimFile f = names.get(file);
        return f == null ? -1 : f.length();
    }

    /** Ground truth for the checkers: up to {@code n} current bytes at {@code offset} into {@code into}; how many (-1: no such file). */
    public int peekInto(String file, long offset, byte[] into, int n) {
        SimFile f = names.get(file);
        return f == null ? -1 : f.readInto(offset, into, 0, n);
    }

    /** Ground truth for the checkers: the CRC32C of {@code n} current bytes at {@code offset} (zeros past the end); the file must exist. */
    public int peekCrc32c(String file, long offset, int n) {
        SimFile f = names.get(file);
        if (f == null) throw new IllegalArgumentException("no file " + file + " on " + name);
        return f.crc32c(offset, n);
    }

    /**
     * Ground truth for the checkers: the names a power loss now would leave (the durable directory), sorted.
     * A dead disk still has them (nothing can read them, but they are not destroyed); a destroyed one has none.
     */
    public List<String> durableFiles() {
        List<String> out = new ArrayList<>(durableNames.keySet());
        java.util.Collections.sort(out);
        return out;
    }

    /**
     * Ground truth for the checkers: whether the name's current file is the one its durable name points to (a
     * file deleted and made anew under the same name is another file until the directory is synced).
     */
    public boolean peekSameFile(String file) {
        SimFile f = names.get(file);
        return f != null && f == durableNames.get(file);
    }

    /** Ground truth for the checkers: a durable file's durable length, or -1 if the name is not durable. */
    public long peekDurableLength(String file) {
        SimFile f = durableNames.get(file);
        return f == null ? -1 : f.durableLength();
    }

    /** Ground truth for the checkers: up to {@code n} durable bytes of a durable file at {@code offset} into {@code into}; how many (-1: no such durable name). */
    public int peekDurableInto(String file, long offset, byte[] into, int n) {
        SimFile f = durableNames.get(file);
        return f == null ? -1 : f.readDurableInto(offset, into, 0, n);
    }

    /** Compares bytes in place: {@code n} bytes of {@code b} from {@code from}, which stand at {@code at} of the range compared. */
    public interface Compare {
        /** The index (from {@code from}) of the first byte that differs, or -1. */
        int mismatch(byte[] b, int from, int n, long at);
    }

    /** Ground truth for the checkers: {@link SimFile#durableMismatch} of a durable file (it must exist). */
    public long peekDurableMismatch(String file, long offset, int n, Compare compare) {
        SimFile f = durableNames.get(file);
        if (f == null) throw new IllegalArgumentException("no durable file " + file + " on " + name);
        return f.durableMismatch(offset, n, compare);
    }

    /** Ground truth for the checkers: the CRC32C of {@code n} durable bytes of a durable file at {@code offset} (zeros past its end). */
    public int peekDurableCrc32c(String file, long offset, int n) {
        SimFile f = durableNames.get(file);
        if (f == null) throw new IllegalArgumentException("no durable file " + file + " on " + name);
        return f.durableCrc32c(offset, n);
    }

    void flipBit(String file, long offset, int bit) {
        SimFile f = names.get(file);
        if (f == null) throw new IllegalArgumentException("no file " + file + " on " + name);
        f.flipBit(offset, bit);
    }

    /**
     * Everything not synced is gone: names revert to the durable directory, bytes to the durable image;
     * with torn writes, each unsynced sector is independently the old bytes, the new ones or garbage.
     */
    void powerLoss() { powerLoss(false); }

    /** A power loss; {@code tear}: unsynced writes are torn even if this disk's torn writes are off (an aimed fault). */
    void powerLoss(boolean tear) {
        SplittableRandom rnd = host.random();
        if (tornWrites || tear) {
            // in name order: the draws are the seed's
            host.sim().tearing(host, this, () -> { for (String file : sortedNames()) names.get(file).tear(rnd); });
        }
        names.clear();
        names.putAll(durableNames);
        dirtyNames.clear();
        usedBytes = 0;
        for (SimFile f : names.values()) {
            f.revert();
            usedBytes += f.length();
        }
        busyUntil = host.sim().now();
    }

    long bytesWritten() { return bytesWritten; }
}
