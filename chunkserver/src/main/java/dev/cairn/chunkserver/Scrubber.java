package dev.cairn.chunkserver;

import dev.cairn.core.async.Promise;
import dev.cairn.core.env.Env;
import dev.cairn.core.proto.CairnException;
import dev.cairn.core.proto.Status;

/**
 * Re-reads every stored chunk in the background and verifies its block checksums. Chunks are walked in id
 * order, one round after another, each round spread over the scrub interval (as Ceph spreads deep
 * scrubs over a week) so a small disk is not re-read over and over; within that pace a tick (once a
 * second) reads at most a second's worth of the rate cap in at most {@link #MAX_READS_PER_TICK} reads, so
 * client I/O keeps the disk. A disk too big to finish a round in the interval at the cap takes longer.
 * A block that fails is reported through {@code onCorrupt}; the chunk is then never served and the master
 * repairs it from good copies or parity.
 *
 * <p>Every {@link #ABANDON_SWEEP_NANOS} it also looks, in memory, for copies abandoned before they were
 * ever synced ({@link ChunkStore#abandoned}) and removes them: that must not wait for a scrub round,
 * which on a big disk takes days.
 */
final class Scrubber {
    /** Bytes read per request (one checksum-verified read; the volume checksums them, nothing is kept). */
    static final int PIECE = 1 << 20;
    /**
     * Reads per tick, whatever their size. Each read of a small chunk costs a seek, so a byte budget
     * alone would let a disk full of small chunks spend hundreds of IOPS a second on scrubbing; this caps
     * it at a few percent of a spinning disk's.
     */
    static final int MAX_READS_PER_TICK = 16;
    /** How often the store is searched for abandoned copies (a copy goes on the second search in a row that finds it). */
    static final long ABANDON_SWEEP_NANOS = 30_000_000_000L;

    interface CorruptionSink { void report(long chunkId, long version, String why); }

    /** Copies found abandoned before they were ever synced ({@link ChunkStore#abandoned}): removed. */
    interface AbandonedSink { void remove(long chunkId, long version); }

    private final Env env;
    private final ChunkStore store;
    private final long bytesPerTick;
    /** Shortest time a round takes (0: no pacing, as fast as the cap allows). */
    private final long intervalNanos;
    private final CorruptionSink onCorrupt;
    private final java.util.function.LongSupplier leaseClock;
    private final AbandonedSink onAbandoned;
    private long cursor = -1;
    private long offset;
    /** The round under way: when it started (monotonic), and what it has read. */
    private boolean inRound;
    /** No round yet since start: the first begins on the first tick, whatever the interval. */
    private boolean started;
    private long roundStart;
    private long doneChunks, doneBytes;
    private long verifiedBytes;
    private boolean stopped;

    /**
     * Verifies at most {@code bytesPerSecond}, each round spread over at least {@code intervalNanos}; also
     * removes, through {@code onAbandoned}, copies abandoned unsynced (judged on {@code leaseClock}, the lease
     * windows' clock).
     */
    Scrubber(Env env, ChunkStore store, long bytesPerSecond, long intervalNanos, CorruptionSink onCorrupt,
             java.util.function.LongSupplier leaseClock, AbandonedSink onAbandoned) {
        if (intervalNanos < 0) throw new IllegalArgumentException("negative scrub interval");
        this.env = env;
        this.store = store;
        this.bytesPerTick = bytesPerSecond * ChunkServer.SCRUB_TICK_NANOS / 1_000_000_000L;
        this.intervalNanos = intervalNanos;
        this.onCorrupt = onCorrupt;
        this.leaseClock = leaseClock;
        this.onAbandoned = onAbandoned;
    }

    void start() {
        if (bytesPerTick > 0) env.scheduler().schedule(ChunkServer.SCRUB_TICK_NANOS, this::tick);
        env.scheduler().schedule(ABANDON_SWEEP_NANOS, this::sweepAbandoned);
    }

    void stop() { stopped = true; }

    /** Bytes verified since start (for tests and status). */
    long verifiedBytes() { return verifiedBytes; }

    private void tick() {
        if (stopped) return;
        long now = env.clock().nanoTime();
        if (!inRound && (!started || now - roundStart >= intervalNanos)) {
            inRound = started = true;
            roundStart = now;
            doneChunks = doneBytes = 0;
        }
        Promise<Void> work = inRound ? step(bytesPerTick, MAX_READS_PER_TICK, dueBy(now + ChunkServer.SCRUB_TICK_NANOS)) : Promise.completed(null);
        work.onComplete((v, e) -> {
            if (!stopped) env.scheduler().schedule(ChunkServer.SCRUB_TICK_NANOS, this::tick);
        });
    }

    /** The share of this round that should be done by {@code time} (1: all of it; no pacing past that). */
    private double dueBy(long time) {
        return intervalNanos == 0 ? 1 : Math.min(1.0, (double) (time - roundStart) / intervalNanos);
    }

    /**
     * Whether the round is ahead of its pace, for a share {@code due} of it due. The share is of what the
     * store holds now, not when the round began: a disk that starts empty and fills (a new server) is
     * scrubbed on pace, not one interval late.
     */
    private boolean ahead(double due) {
        return due < 1 && doneChunks >= Math.ceil(store.count() * due) && doneBytes >= store.dataBytes() * due;
    }

    /** Verifies up to {@code budget} bytes in up to {@code reads} reads from the cursor on, one piece at a time, until ahead of pace. */
    private Promise<Void> step(long budget, int reads, double due) {
        if (budget <= 0 || reads <= 0 || stopped || ahead(due)) return Promise.completed(null);
        long[] c = offset > 0 ? store.info(cursor) : null;
        if (c == null) {
            long[] next = store.nextChunk(cursor);
            if (next == null) { // end of a round: the next starts on a tick once the interval since this one's start is over
                cursor = -1;
                offset = 0;
                inRound = false;
                return Promise.completed(null);
            }
            c = next;
            cursor = c[0];
            offset = 0;
        }
        long id = c[0], version = c[1], length = c[2];
        int n = (int) Math.min(PIECE, length - offset);
        if (n <= 0) { // empty chunk, or finished
            offset = 0;
            doneChunks++;
            return step(budget - 1, reads, due);
        }
        long at = offset;
        return store.verify(id, version, at, n).then((v, e) -> {
            if (e != null && CairnException.statusOf(e) == Status.CORRUPT) onCorrupt.report(id, version, "scrubber: " + e.getMessage());
            verifiedBytes += n;
            doneBytes += n;
            offset = e != null || at + n >= length ? 0 : at + n; // 0: on to the next chunk
            if (offset == 0) doneChunks++;
            return step(budget - n, reads - 1, due);
        });
    }

    /** Removes the copies a second search in a row finds abandoned (never synced, no write window open, untouched since). */
    private void sweepAbandoned() {
        if (stopped) return;
        for (long[] c : store.abandoned(leaseClock.getAsLong())) onAbandoned.remove(c[0], c[1]);
        env.scheduler().schedule(ABANDON_SWEEP_NANOS, this::sweepAbandoned);
    }
}
