package dev.cairn.chunkserver;

import dev.cairn.core.async.Promise;
import dev.cairn.core.env.Env;
import dev.cairn.core.proto.CairnException;
import dev.cairn.core.proto.Status;
import java.util.List;

/**
 * Re-reads every stored chunk in the background and verifies its block checksums, at a bounded rate so
 * client I/O keeps the disk: each tick (once a second) verifies up to a second's worth of bytes in at most
 * {@link #MAX_READS_PER_TICK} reads, walking
 * chunks in id order and starting over at the end. A block that fails is reported through
 * {@code onCorrupt}; the chunk is then never served and the master repairs it from good copies or parity.
 */
final class Scrubber {
    /** Bytes read per request (one checksum-verified read). */
    static final int PIECE = 1 << 20;
    /**
     * Reads per tick, whatever their size. Each read of a small chunk costs a seek, so a byte budget
     * alone would let a disk full of small chunks spend hundreds of IOPS a second on scrubbing; this caps
     * it at a few percent of a spinning disk's.
     */
    static final int MAX_READS_PER_TICK = 16;

    interface CorruptionSink { void report(long chunkId, long version, String why); }

    /** Copies found abandoned before they were ever synced ({@link ChunkStore#abandoned}): removed. */
    interface AbandonedSink { void remove(long chunkId, long version); }

    private final Env env;
    private final ChunkStore store;
    private final long bytesPerTick;
    private final CorruptionSink onCorrupt;
    private final java.util.function.LongSupplier leaseClock;
    private final AbandonedSink onAbandoned;
    private long cursor = -1;
    private long offset;
    private long verifiedBytes;
    private boolean stopped;

    /** Also removes, through {@code onAbandoned}, copies abandoned unsynced (judged on {@code leaseClock}, the lease windows' clock). */
    Scrubber(Env env, ChunkStore store, long bytesPerSecond, CorruptionSink onCorrupt, java.util.function.LongSupplier leaseClock,
             AbandonedSink onAbandoned) {
        this.env = env;
        this.store = store;
        this.bytesPerTick = bytesPerSecond * ChunkServer.SCRUB_TICK_NANOS / 1_000_000_000L;
        this.onCorrupt = onCorrupt;
        this.leaseClock = leaseClock;
        this.onAbandoned = onAbandoned;
    }

    void start() {
        if (bytesPerTick > 0) env.scheduler().schedule(ChunkServer.SCRUB_TICK_NANOS, this::tick);
    }

    void stop() { stopped = true; }

    /** Bytes verified since start (for tests and status). */
    long verifiedBytes() { return verifiedBytes; }

    private void tick() {
        if (stopped) return;
        step(bytesPerTick, MAX_READS_PER_TICK).onComplete((v, e) -> {
            if (!stopped) env.scheduler().schedule(ChunkServer.SCRUB_TICK_NANOS, this::tick);
        });
    }

    /** Verifies up to {@code budget} bytes in up to {@code reads} reads from the cursor on, one piece at a time. */
    private Promise<Void> step(long budget, int reads) {
        if (budget <= 0 || reads <= 0 || stopped) return Promise.completed(null);
        long[] c = offset > 0 ? store.info(cursor) : null;
        if (c == null) {
            List<long[]> next = store.nextChunks(cursor, 1);
            if (next.isEmpty()) { // end of a round: start over on the next tick
                cursor = -1;
                offset = 0;
                return Promise.completed(null);
            }
            c = next.get(0);
            cursor = c[0];
            offset = 0;
            if (store.abandoned(cursor, leaseClock.getAsLong())) {
                onAbandoned.remove(c[0], c[1]);
                return step(budget - 1, reads);
            }
        }
        long id = c[0], version = c[1], length = c[2];
        int n = (int) Math.min(PIECE, length - offset);
        if (n <= 0) { // empty chunk, or finished
            offset = 0;
            return step(budget - 1, reads);
        }
        long at = offset;
        return store.read(id, version, at, n).then((data, e) -> {
            if (e != null && CairnException.statusOf(e) == Status.CORRUPT) onCorrupt.report(id, version, "scrubber: " + e.getMessage());
            verifiedBytes += n;
            offset = e != null || at + n >= length ? 0 : at + n; // 0: on to the next chunk
            return step(budget - n, reads - 1);
        });
    }
}
