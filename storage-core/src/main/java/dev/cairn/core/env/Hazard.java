package dev.cairn.core.env;

import java.util.Locale;

/**
 * The risky points of the node code, where a crash or power loss finds state half made durable (after
 * FoundationDB's BUGGIFY). Node code marks each with {@link Env#hazard}; the real runtime ignores them, the
 * simulator fires crashes, power losses and torn writes there with raised probability, per seed, and
 * records each firing in the trace. A fault at a random moment lands in these few milliseconds rarely; the
 * bugs that live there (a header written over the durable one, an acknowledgement before the last fsync)
 * need the fault exactly there.
 */
public enum Hazard {
    /** Chunkserver: a chunk's data is fsynced; its header is not yet written. */
    CHUNK_DATA_SYNCED(Where.CHUNKSERVER),
    /** Chunkserver: a chunk's new header is written (in the page cache), not yet fsynced. */
    CHUNK_HEADER_WRITTEN(Where.CHUNKSERVER),
    /** Chunkserver: a chunk's header is durable; the sync's answer has not left yet. */
    CHUNK_HEADER_SYNCED(Where.CHUNKSERVER),
    /** Chunkserver: a chain step went downstream; this server's own part is under way. */
    CHAIN_FORWARDED(Where.CHUNKSERVER),
    /** Chunkserver: a chunk took a new version (durable); the master has not heard yet. */
    VERSION_BUMPED(Where.CHUNKSERVER),
    /** Master: a metadata batch is written to the store, not yet durable. */
    LOG_WRITTEN(Where.MASTER),
    /** Master: a metadata batch is durable; the reply has not left yet. */
    LOG_COMMITTED(Where.MASTER),
    /**
     * Master of a group: a log entry of several commands is applied to the store, each command in its own batch, none
     * durable yet (a power loss may keep some of them: the replay must apply only the rest).
     */
    BATCH_APPLIED(Where.MASTER);

    /** The kind of node whose code marks the point. */
    public enum Where { CHUNKSERVER, MASTER }

    public final Where where;

    Hazard(Where where) { this.where = where; }

    public String cliName() { return name().toLowerCase(Locale.ROOT).replace('_', '-'); }
}
