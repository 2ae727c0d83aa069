package dev.cairn.sim.runtime;

import dev.cairn.core.env.Volume;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * A simulated disk: a durable image (what survives power loss) and the current, volatile view (what the
 * page cache shows). {@code sync(file)} makes a file's bytes durable; {@code syncDirectory()} makes the
 * set of names durable. Operations queue FIFO per disk and take time.
 */
final class SimDisk {
    static final long OP_NANOS = 20_000;
    static final long BYTES_PER_SECOND = 500_000_000L;
    static final long MIN_SYNC_NANOS = 500_000;
    static final long SYNC_SPREAD_NANOS = 2_500_000;

    /** One file's bytes: current (volatile) and durable. */
    static final class SimFile {
        byte[] current = new byte[0];
        byte[] durable = new byte[0];
    }

    private final SimHost host;
    private final String name;
    private final TreeMap<String, SimFile> names = new TreeMap<>();
    private TreeMap<String, SimFile> durableNames = new TreeMap<>();
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
    /** Writes that would grow the disk's files past this fail with ENOSPC. */
    private long capacityBytes = Long.MAX_VALUE;

    SimDisk(SimHost host, String name) {
        this.host = host;
        this.name = name;
    }

    String name() { return name; }

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

    /** The next {@code n} file syncs fail; the unsynced writes each covered are lost. */
    void failSyncs(int n) { failingSyncs += n; }

    void setCapacity(long bytes) { capacityBytes = bytes; }

    private void check(String what) {
        if (dead) throw new Volume.DiskError(name, what + ": input/output error", null);
    }

    private long usedBytes() {
        long used = 0;
        for (SimFile f : names.values()) used += f.current.length;
        return used;
    }

    long transferNanos(int bytes) { return OP_NANOS + bytes * 1_000_000_000L / BYTES_PER_SECOND; }

    long syncNanos() { return MIN_SYNC_NANOS + host.sim().random().nextLong(SYNC_SPREAD_NANOS); }

    // --- operations, applied when they complete ---

    void write(String file, long offset, byte[] data) {
        check("write " + file);
        SimFile existing = names.get(file);
        int end = Math.toIntExact(offset + data.length);
        if (capacityBytes != Long.MAX_VALUE) {
            long growth = end - (existing == null ? 0 : existing.current.length);
            if (growth > 0 && usedBytes() + growth > capacityBytes) throw new Volume.NoSpace(name);
        }
        SimFile f = names.computeIfAbsent(file, n -> new SimFile());
        if (end > f.current.length) f.current = Arrays.copyOf(f.current, end);
        System.arraycopy(data, 0, f.current, (int) offset, data.length);
        bytesWritten += data.length;
    }

    /** Null if the file does not exist. */
    byte[] read(String file, long offset, int length) {
        check("read " + file);
        SimFile f = names.get(file);
        if (f == null) return null;
        if (offset >= f.current.length) return new byte[0];
        return Arrays.copyOfRange(f.current, (int) offset, (int) Math.min(f.current.length, offset + length));
    }

    boolean sync(String file) {
        check("fsync " + file);
        SimFile f = names.get(file);
        if (f == null) return false;
        if (failingSyncs > 0) {
            failingSyncs--;
            f.current = f.durable.clone(); // the kernel dropped the dirty pages it could not write back
            throw new Volume.DiskError(name, "fsync " + file + ": input/output error", null);
        }
        f.durable = f.current.clone();
        return true;
    }

    void syncDirectory() {
        check("fsync directory");
        durableNames = new TreeMap<>(names);
    }

    boolean rename(String from, String to) {
        check("rename " + from);
        SimFile f = names.remove(from);
        if (f == null) return false;
        names.put(to, f);
        return true;
    }

    void delete(String file) {
        check("unlink " + file);
        names.remove(file);
    }

    List<String> list() {
        check("readdir");
        return new ArrayList<>(names.keySet());
    }

    void flipBit(String file, long offset, int bit) {
        SimFile f = names.get(file);
        if (f == null) throw new IllegalArgumentException("no file " + file + " on " + name);
        if (offset < f.current.length) f.current[(int) offset] ^= (byte) (1 << bit);
        if (offset < f.durable.length) f.durable[(int) offset] ^= (byte) (1 << bit);
    }

    /** Everything not synced is gone: names revert to the durable directory, bytes to the durable image. */
    void powerLoss() {
        names.clear();
        names.putAll(durableNames);
        for (Map.Entry<String, SimFile> e : names.entrySet()) e.getValue().current = e.getValue().durable.clone();
        busyUntil = host.sim().now();
    }

    long bytesWritten() { return bytesWritten; }
}
