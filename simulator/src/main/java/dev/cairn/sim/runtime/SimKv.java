package dev.cairn.sim.runtime;

import dev.cairn.core.async.Promise;
import dev.cairn.core.env.KvBatch;
import dev.cairn.core.env.KvStore;
import java.util.ArrayDeque;
import java.util.Arrays;
import java.util.Map;
import java.util.TreeMap;
import java.util.function.BiPredicate;

/**
 * The key-value store's contract in simulation: batches are visible at once; a synced batch is durable
 * with every batch before it when its promise completes; a power loss keeps exactly the durable prefix.
 */
final class SimKv implements KvStore {
    static final long MIN_SYNC_NANOS = 300_000;
    static final long SYNC_SPREAD_NANOS = 1_700_000;

    private record Pending(long seq, KvBatch batch) {}

    /** A key with its hash, for point lookups (a tree of byte arrays compares a dozen keys per lookup). */
    private record Key(byte[] bytes, int hash) {
        Key(byte[] bytes) { this(bytes, Arrays.hashCode(bytes)); }

        @Override public boolean equals(Object o) { return o instanceof Key k && k.hash == hash && Arrays.equals(k.bytes, bytes); }

        @Override public int hashCode() { return hash; }
    }

    private final SimHost host;
    /** The visible state, ordered for scans, and the same entries hashed for gets. */
    private TreeMap<byte[], byte[]> current = new TreeMap<>(Arrays::compareUnsigned);
    private final java.util.HashMap<Key, byte[]> currentIndex = new java.util.HashMap<>();
    private final TreeMap<byte[], byte[]> durable = new TreeMap<>(Arrays::compareUnsigned);
    private final ArrayDeque<Pending> pending = new ArrayDeque<>();
    private long seq;

    SimKv(SimHost host) { this.host = host; }

    @Override public byte[] get(byte[] key) {
        byte[] v = currentIndex.get(new Key(key));
        return v == null ? null : v.clone();
    }

    @Override public void scanFrom(byte[] prefix, byte[] from, BiPredicate<byte[], byte[]> visitor) {
        for (Map.Entry<byte[], byte[]> e : current.tailMap(from, true).entrySet()) {
            byte[] k = e.getKey();
            if (!KvStore.hasPrefix(k, prefix)) break;
            if (!visitor.test(k.clone(), e.getValue().clone())) break;
        }
    }

    @Override public Promise<Void> write(KvBatch batch, boolean sync) {
        apply(current, batch);
        for (KvBatch.Op op : batch.ops()) {
            if (op.value() == null) currentIndex.remove(new Key(op.key())); else currentIndex.put(new Key(op.key()), op.value());
        }
        long mySeq = ++seq;
        pending.add(new Pending(mySeq, batch));
        if (!sync) return Promise.completed(null);
        Promise<Void> p = new Promise<>();
        long delay = MIN_SYNC_NANOS + host.sim().random().nextLong(SYNC_SPREAD_NANOS);
        host.sim().at(delay, host, Simulation.Kind.KV, mySeq, () -> {
            while (!pending.isEmpty() && pending.peek().seq <= mySeq) apply(durable, pending.poll().batch);
            p.complete(null);
        });
        return p;
    }

    /** The machine is gone: so is its store. */
    void destroy() {
        pending.clear();
        durable.clear();
        current = new TreeMap<>(Arrays::compareUnsigned);
        currentIndex.clear();
    }

    void powerLoss() {
        pending.clear();
        current = new TreeMap<>(Arrays::compareUnsigned);
        currentIndex.clear();
        for (Map.Entry<byte[], byte[]> e : durable.entrySet()) {
            current.put(e.getKey(), e.getValue());
            currentIndex.put(new Key(e.getKey()), e.getValue());
        }
    }

    private static void apply(TreeMap<byte[], byte[]> map, KvBatch batch) {
        for (KvBatch.Op op : batch.ops()) {
            if (op.value() == null) map.remove(op.key()); else map.put(op.key(), op.value());
        }
    }
}
