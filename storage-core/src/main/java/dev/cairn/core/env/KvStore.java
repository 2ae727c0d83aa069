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

    /** True if {@code key} begins with {@code prefix} (the end test of every prefix scan). */
    static boolean hasPrefix(byte[] key, byte[] prefix) {
        return key.length >= prefix.length && java.util.Arrays.equals(key, 0, prefix.length, prefix, 0, prefix.length);
    }
}
