package dev.cairn.sim.runtime;

import dev.cairn.core.async.Promise;
import dev.cairn.core.env.KvBatch;
import dev.cairn.core.env.KvStore;
import java.util.ArrayDeque;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.function.BiPredicate;

/**
 * The key-value store's contract in simulation: batches are visible at once; a synced batch is durable
 * with every batch before it when its promise completes; a power loss keeps the durable prefix and maybe a
 * prefix of the batches written after it ({@link #powerLoss}).
 *
 * <p>One copy of the data is kept, the visible one. Each batch not yet durable keeps what it overwrote,
 * and a power loss undoes those batches newest first, which leaves the durable prefix (a second, durable
 * copy updated on every sync cost as much as the visible one).
 */
final class SimKv implements KvStore {
    static final long MIN_SYNC_NANOS = 300_000;
    static final long SYNC_SPREAD_NANOS = 1_700_000;
    /** The most batches a power loss that loses only the newest ones loses ({@link #powerLoss}). */
    static final int MAX_TAIL_LOST = 8;

    /** A batch not yet durable: its keys in order and the value each had before (null: absent). */
    private record Pending(long seq, byte[][] keys, byte[][] before) {}

    /**
     * A key with its hash (point lookups) and its first 16 bytes as two big-endian longs, zero-padded
     * (ordering): keys that differ there, nearly all of the metadata's (a table byte, then an id), compare
     * in two long comparisons, not a byte-array mismatch each, a dozen times per tree lookup. Order is
     * {@link Arrays#compareUnsigned}'s: where the padded words differ, the first differing byte is within
     * both keys or past the end of the shorter one, which then sorts first (a prefix) as padding zeros do.
     */
    record Key(byte[] bytes, int hash, long head, long next) implements Comparable<Key> {
        Key(byte[] bytes) { this(bytes, word(bytes, 0), word(bytes, 8)); }

        private Key(byte[] bytes, long head, long next) { this(bytes, hash(bytes, head, next), head, next); }

        /**
         * The bytes' hash, mixed: {@code Arrays.hashCode}'s base-31 sum alone collides on ids of the same
         * table (inodes 31 and 256 do: 31 × 1 + 0 = 0 × 31 + 31), and colliding keys cost a chain walk.
         */
        private static int hash(byte[] bytes, long head, long next) {
            long h = (head * 0x9e3779b97f4a7c15L ^ next) * 0xbf58476d1ce4e5b9L ^ Arrays.hashCode(bytes);
            return (int) (h ^ h >>> 32);
        }

        /** Bytes {@code [at, at + 8)} of {@code b} as a big-endian long, zeros past its end. */
        static long word(byte[] b, int at) {
            if (b.length >= at + 8) return (long) BIG_ENDIAN_LONG.get(b, at);
            long w = 0;
            for (int i = 0; i < 8; i++) w = w << 8 | (at + i < b.length ? b[at + i] & 0xff : 0);
            return w;
        }

        @Override public int compareTo(Key o) {
            int c = Long.compareUnsigned(head, o.head);
            if (c == 0) c = Long.compareUnsigned(next, o.next);
            return c != 0 ? c : Arrays.compareUnsigned(bytes, o.bytes);
        }

        @Override public boolean equals(Object o) { return o instanceof Key k && k.hash == hash && Arrays.equals(k.bytes, bytes); }

        @Override public int hashCode() { return hash; }
    }

    private static final java.lang.invoke.VarHandle BIG_ENDIAN_LONG =
            java.lang.invoke.MethodHandles.byteArrayViewVarHandle(long[].class, java.nio.ByteOrder.BIG_ENDIAN);

    private final SimHost host;
    /** The visible state, ordered for scans, and the same entries hashed for gets. */
    private final TreeMap<Key, byte[]> current = new TreeMap<>();
    private final HashMap<Key, byte[]> index = new HashMap<>();
    private final ArrayDeque<Pending> pending = new ArrayDeque<>();
    private long seq;

    SimKv(SimHost host) { this.host = host; }

    @Override public byte[] get(byte[] key) {
        byte[] v = index.get(new Key(key));
        return v == null ? null : v.clone();
    }

    @Override public void scanFrom(byte[] prefix, byte[] from, BiPredicate<byte[], byte[]> visitor) {
        for (Map.Entry<Key, byte[]> e : current.tailMap(new Key(from), true).entrySet()) {
            byte[] k = e.getKey().bytes();
            if (!KvStore.hasPrefix(k, prefix)) break;
            if (!visitor.test(k.clone(), e.getValue().clone())) break;
        }
    }

    @Override public Promise<Void> write(KvBatch batch, boolean sync) {
        List<KvBatch.Op> ops = batch.ops();
        byte[][] keys = new byte[ops.size()][], before = new byte[ops.size()][];
        for (int i = 0; i < keys.length; i++) {
            keys[i] = ops.get(i).key();
            before[i] = set(keys[i], ops.get(i).value());
        }
        long mySeq = ++seq;
        pending.add(new Pending(mySeq, keys, before));
        if (!sync) return Promise.completed(null);
        Promise<Void> p = new Promise<>();
        long delay = MIN_SYNC_NANOS + host.sim().random().nextLong(SYNC_SPREAD_NANOS);
        host.sim().at(delay, host, Simulation.Kind.KV, mySeq, () -> {
            while (!pending.isEmpty() && pending.peek().seq <= mySeq) pending.poll(); // durable now: nothing to undo
            p.complete(null);
        });
        return p;
    }

    /** Sets (null: removes) {@code key}; returns the value it had. */
    private byte[] set(byte[] key, byte[] value) {
        Key k = new Key(key);
        if (value == null) {
            current.remove(k);
            return index.remove(k);
        }
        current.put(k, value);
        return index.put(k, value);
    }

    /** The visible state, read only: the durable view while no batch is pending. */
    private final KvStore visibleView = new KvStore() {
        @Override public byte[] get(byte[] key) { return SimKv.this.get(key); }

        @Override public void scanFrom(byte[] prefix, byte[] from, BiPredicate<byte[], byte[]> visitor) { SimKv.this.scanFrom(prefix, from, visitor); }

        @Override public Promise<Void> write(KvBatch batch, boolean sync) { throw new UnsupportedOperationException("the durable view is read only"); }
    };

    /** The visible state, read only. */
    KvStore visibleView() { return visibleView; }

    /** Marks a key absent in {@link #durableView}'s overrides. */
    private static final byte[] ABSENT = new byte[0];

    /**
     * Ground truth for the checkers: the store as a power loss now would leave it at least (the durable prefix), read
     * only. Keys written by batches not yet durable read as they were before the oldest such batch. A view
     * taken now; writes after it are not seen.
     */
    public KvStore durableView() {
        if (pending.isEmpty()) return visibleView; // everything visible is durable
        TreeMap<Key, byte[]> overrides = new TreeMap<>();
        for (Pending p : pending) {
            for (int i = 0; i < p.keys.length; i++) overrides.putIfAbsent(new Key(p.keys[i]), p.before[i] == null ? ABSENT : p.before[i]);
        }
        return new KvStore() {
            @Override public byte[] get(byte[] key) {
                Key k = new Key(key);
                byte[] v = overrides.containsKey(k) ? overrides.get(k) : index.get(k);
                return v == null || v == ABSENT ? null : v.clone();
            }

            @Override public void scanFrom(byte[] prefix, byte[] from, BiPredicate<byte[], byte[]> visitor) {
                java.util.Iterator<Map.Entry<Key, byte[]>> a = current.tailMap(new Key(from), true).entrySet().iterator();
                java.util.Iterator<Map.Entry<Key, byte[]>> b = overrides.tailMap(new Key(from), true).entrySet().iterator();
                Map.Entry<Key, byte[]> x = a.hasNext() ? a.next() : null, y = b.hasNext() ? b.next() : null;
                while (x != null || y != null) {
                    int c = x == null ? 1 : y == null ? -1 : x.getKey().compareTo(y.getKey());
                    Map.Entry<Key, byte[]> e = c <= 0 ? x : y;
                    byte[] value = c < 0 ? x.getValue() : y.getValue(); // an override wins over the visible value
                    if (c <= 0) x = a.hasNext() ? a.next() : null;
                    if (c >= 0) y = b.hasNext() ? b.next() : null;
                    byte[] k = e.getKey().bytes();
                    if (!KvStore.hasPrefix(k, prefix)) break;
                    if (value == ABSENT) continue;
                    if (!visitor.test(k.clone(), value.clone())) break;
                }
            }

            @Override public Promise<Void> write(KvBatch batch, boolean sync) {
                throw new UnsupportedOperationException("the durable view is read only");
            }
        };
    }

    /** The machine is gone: so is its store. */
    void destroy() {
        pending.clear();
        current.clear();
        index.clear();
    }

    /**
     * What was not durable is undone, newest first, but for a prefix of it that may have reached the disk anyway: a
     * RocksDB write-ahead log is written in order, and the kernel may write any of it back before the power goes, so
     * after a power loss the store holds its durable prefix and then any prefix of the batches written since. A
     * third of the power losses keep exactly the durable prefix, a third a prefix of random length, and a third lose
     * only the last few batches (what the kernel had not written back yet: the likeliest case on a real machine). A
     * node must be right whichever: a master group's replica, for one, may find an entry's apply cut after some of
     * its commands.
     */
    void powerLoss() {
        int keep = 0;
        if (!pending.isEmpty()) {
            switch (host.sim().random().nextInt(3)) {
                case 1 -> keep = host.sim().random().nextInt(pending.size() + 1);
                case 2 -> keep = Math.max(0, pending.size() - 1 - host.sim().random().nextInt(MAX_TAIL_LOST));
                default -> keep = 0;
            }
        }
        while (pending.size() > keep) {
            Pending p = pending.pollLast();
            for (int i = p.keys.length - 1; i >= 0; i--) set(p.keys[i], p.before[i]);
        }
        pending.clear(); // what is left is on the disk now
    }
}
