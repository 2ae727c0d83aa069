package dev.cairn.core.env;

import dev.cairn.core.async.Promise;
import java.util.function.BiPredicate;

/**
 * An ordered key-value store. A written batch is visible to reads at once; with {@code sync} the returned
 * promise completes only when the batch (and every batch before it) is durable. A power loss drops
 * unsynced batches, never a prefix-breaking subset: what survives is every batch up to some point.
 */
public interface KvStore {
    byte[] get(byte[] key);

    /** Visits keys starting with {@code prefix} in ascending order while the visitor returns true. */
    default void scan(byte[] prefix, BiPredicate<byte[], byte[]> visitor) { scanFrom(prefix, prefix, visitor); }

    /** Like {@link #scan}, starting at the first key at or after {@code from} (which begins with {@code prefix}). */
    void scanFrom(byte[] prefix, byte[] from, BiPredicate<byte[], byte[]> visitor);

    Promise<Void> write(KvBatch batch, boolean sync);

    /**
     * The store as it is now, read only, unchanged by later writes, readable from any thread until closed: what
     * a snapshot of a master's state is written from while the master goes on applying. This default copies
     * every entry (the in-memory stores); the RocksDB store reads through one of its own snapshots instead.
     */
    default View view() {
        java.util.List<byte[][]> all = new java.util.ArrayList<>();
        scan(new byte[0], (k, v) -> all.add(new byte[][] {k.clone(), v.clone()}));
        return new View() {
            @Override public void scan(BiPredicate<byte[], byte[]> visitor) {
                for (byte[][] kv : all) if (!visitor.test(kv[0].clone(), kv[1].clone())) return;
            }

            @Override public void close() {}
        };
    }

    /** A point-in-time, read-only view of a store. */
    interface View extends AutoCloseable {
        /** Visits every key in ascending order while the visitor returns true. */
        void scan(BiPredicate<byte[], byte[]> visitor);

        @Override void close();
    }

    /** True if {@code key} begins with {@code prefix} (the end test of every prefix scan). */
    static boolean hasPrefix(byte[] key, byte[] prefix) {
        return key.length >= prefix.length && java.util.Arrays.equals(key, 0, prefix.length, prefix, 0, prefix.length);
    }
}
