package dev.cairn.sim.runtime;

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

    SimDisk(SimHost host, String name) {
        this.host = host;
        this.name = name;
    }

    String name() { return name; }

    /** When an operation costing {@code nanos} submitted now completes (FIFO behind earlier ones). */
    long completion(long nanos) {
        long start = Math.max(host.sim().now(), busyUntil);
        busyUntil = start + nanos;
        return busyUntil - host.sim().now();
    }

    long transferNanos(int bytes) { return OP_NANOS + bytes * 1_000_000_000L / BYTES_PER_SECOND; }

    long syncNanos() { return MIN_SYNC_NANOS + host.sim().random().nextLong(SYNC_SPREAD_NANOS); }

    // --- operations, applied when they complete ---

    void write(String file, long offset, byte[] data) {
        SimFile f = names.computeIfAbsent(file, n -> new SimFile());
        int end = Math.toIntExact(offset + data.length);
        if (end > f.current.length) f.current = Arrays.copyOf(f.current, end);
        System.arraycopy(data, 0, f.current, (int) offset, data.length);
        bytesWritten += data.length;
    }

    /** Null if the file does not exist. */
    byte[] read(String file, long offset, int length) {
        SimFile f = names.get(file);
        if (f == null) return null;
        if (offset >= f.current.length) return new byte[0];
        return Arrays.copyOfRange(f.current, (int) offset, (int) Math.min(f.current.length, offset + length));
    }

    boolean sync(String file) {
        SimFile f = names.get(file);
        if (f == null) return false;
        f.durable = f.current.clone();
        return true;
    }

    void syncDirectory() { durableNames = new TreeMap<>(names); }

    boolean rename(String from, String to) {
        SimFile f = names.remove(from);
        if (f == null) return false;
        names.put(to, f);
        return true;
    }

    void delete(String file) { names.remove(file); }

    List<String> list() { return new ArrayList<>(names.keySet()); }

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
