package dev.cairn.master.meta;

import dev.cairn.core.async.Promise;
import dev.cairn.core.env.KvBatch;
import dev.cairn.core.env.KvStore;
import dev.cairn.master.namespace.Namespace;

/**
 * A single master's log: each command is applied to the namespace at once (so the next command sees it)
 * and its batch is written with sync, so the submitter hears back only when the key-value store has it
 * on stable storage. The store's prefix guarantee (a synced batch makes every earlier one durable) keeps
 * replies in log order durable.
 */
public final class LocalMetaLog implements MetaLog {
    private final KvStore kv;
    private final Namespace namespace;

    public LocalMetaLog(KvStore kv, Namespace namespace) {
        this.kv = kv;
        this.namespace = namespace;
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
        return kv.write(batch, true).map(v -> result);
    }
}
