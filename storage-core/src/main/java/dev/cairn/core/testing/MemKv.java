package dev.cairn.core.testing;

import dev.cairn.core.async.Promise;
import dev.cairn.core.env.KvBatch;
import dev.cairn.core.env.KvStore;
import java.util.Arrays;
import java.util.Map;
import java.util.TreeMap;
import java.util.function.BiPredicate;

/** An in-memory key-value store (unit tests, and the simulator's own replica of committed metadata): every write is durable at once. */
public final class MemKv implements KvStore {
    private final TreeMap<byte[], byte[]> map = new TreeMap<>(Arrays::compareUnsigned);
    private int syncedWrites;

    @Override public byte[] get(byte[] key) {
        byte[] v = map.get(key);
        return v == null ? null : v.clone();
    }

    @Override public void scanFrom(byte[] prefix, byte[] from, BiPredicate<byte[], byte[]> visitor) {
        for (Map.Entry<byte[], byte[]> e : map.tailMap(from, true).entrySet()) {
            byte[] k = e.getKey();
            if (!KvStore.hasPrefix(k, prefix)) break;
            if (!visitor.test(k.clone(), e.getValue().clone())) break;
        }
    }

    @Override public Promise<Void> write(KvBatch batch, boolean sync) {
        for (KvBatch.Op op : batch.ops()) {
            if (op.value() == null) map.remove(op.key()); else map.put(op.key(), op.value());
        }
        if (sync) syncedWrites++;
        return Promise.completed(null);
    }

    public int syncedWrites() { return syncedWrites; }

    public int size() { return map.size(); }
}
