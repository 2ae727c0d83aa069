package dev.cairn.master.meta;

import dev.cairn.core.async.Promise;
import dev.cairn.core.env.Env;
import dev.cairn.core.env.Hazard;
import dev.cairn.core.env.KvBatch;
import dev.cairn.core.env.KvStore;
import dev.cairn.core.env.Plant;
import dev.cairn.master.namespace.Namespace;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * A single master's log: each command is applied to the namespace at once (so the next command sees it)
 * and its batch is written with sync, so the submitter hears back only when the key-value store has it
 * on stable storage. The store's prefix guarantee (a synced batch makes every earlier one durable) keeps
 * replies in log order durable.
 *
 * <p>Between the apply and the sync the namespace shows a change a power loss would undo. Replies wait for
 * the sync; so must anything else done on the strength of such a change: {@link #freeing} names the chunks
 * whose records a command not yet durable deletes, which no chunkserver may be told to delete yet (the
 * simulator caught a registration judging a chunk of a file whose remove was still being synced "gone",
 * and its copy deleted).
 */
public final class LocalMetaLog implements MetaLog {
    private final KvStore kv;
    private final Namespace namespace;
    private final Env env;
    /** Chunk id -> commands not yet durable that delete its record. */
    private final Map<Long, Integer> freeing = new HashMap<>();
    /** Inode -> commands not yet durable that write its record. */
    private final Map<Long, Integer> changing = new HashMap<>();

    public LocalMetaLog(KvStore kv, Namespace namespace, Env env) {
        this.kv = kv;
        this.namespace = namespace;
        this.env = env;
    }

    @Override public <R> Promise<R> submit(MetaCommand<R> command) {
        KvBatch batch = new KvBatch();
        R result;
        try {
            result = namespace.apply(command, batch);
        } catch (RuntimeException e) {
            return Promise.failed(dev.cairn.core.async.Unexpected.report(e)); // refused: nothing was written
        }
        if (batch.isEmpty()) return Promise.completed(result);
        List<Long> freed = keysOf(batch, (byte) 'K', true);
        List<Long> inodes = keysOf(batch, (byte) 'I', false);
        for (long id : freed) freeing.merge(id, 1, Integer::sum);
        for (long ino : inodes) changing.merge(ino, 1, Integer::sum);
        Promise<Void> written = kv.write(batch, env == null || !env.planted(Plant.LOG_NOT_SYNCED));
        if (env != null) env.hazard(Hazard.LOG_WRITTEN);
        return written.then((v, e) -> {
            for (long id : freed) freeing.computeIfPresent(id, (k, n) -> n == 1 ? null : n - 1);
            for (long ino : inodes) changing.computeIfPresent(ino, (k, n) -> n == 1 ? null : n - 1);
            if (e != null) return Promise.failed(e);
            if (env != null) env.hazard(Hazard.LOG_COMMITTED);
            return Promise.completed(result);
        });
    }

    @Override public boolean freeing(long chunkId) { return freeing.containsKey(chunkId); }

    @Override public boolean changing(long inode) { return changing.containsKey(inode); }

    /** Ids of the batch's records of table {@code table} ({@code K} chunk, {@code I} inode): deleted ones only, or any write. */
    private static List<Long> keysOf(KvBatch batch, byte table, boolean deletesOnly) {
        List<Long> out = new ArrayList<>(0);
        for (KvBatch.Op op : batch.ops()) {
            byte[] k = op.key();
            if ((!deletesOnly || op.value() == null) && k.length == 9 && k[0] == table) out.add(ByteBuffer.wrap(k, 1, 8).getLong());
        }
        return out;
    }
}
