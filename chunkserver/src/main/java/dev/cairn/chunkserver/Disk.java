package dev.cairn.chunkserver;

import dev.cairn.core.async.InFlight;
import dev.cairn.core.async.Promise;
import dev.cairn.core.env.Clock;
import dev.cairn.core.env.Volume;
import dev.cairn.core.proto.CairnException;
import dev.cairn.core.proto.Status;
import dev.cairn.core.proto.Types.DiskState;
import java.util.List;
import java.util.function.Consumer;
import java.util.function.Supplier;

/**
 * One data directory (disk) of a chunkserver and its health. Every call goes through here, so this is
 * where the disk is judged:
 * <ul>
 *   <li>a failed fsync, write or other call fails the disk for good (DESIGN.md durability contract: no
 *       retry-and-hope); the store then drops its chunks and the master is told they are gone;</li>
 *   <li>a read error fails only the copy read: it is answered {@code CORRUPT}, so the copy is marked bad, never
 *       served again and repaired from the others, as a checksum failure is. A disk that keeps failing reads
 *       ({@link #READ_ERRORS_TO_FAIL} within {@link #READ_ERROR_WINDOW_NANOS}) fails for good. One unreadable sector
 *       used to write off every copy on the disk (sim seed 5064: four disks written off on one read error each, 40 to
 *       116 copies apiece, and the chunks left short were lost to the next faults). While recovery reads the disk
 *       ({@link #recovering}) any error still fails it: a header that cannot be read must not be taken for no header;</li>
 *   <li>ENOSPC marks it full: no new chunks land on it, the chunks it holds stay readable;</li>
 *   <li>each call's latency feeds a moving average, reported to the master, which compares disks
 *       across the cluster and may judge this one slow (it then gets no new chunks).</li>
 * </ul>
 * Calls to different disks never wait on each other: each volume has its own I/O queue (threads in the
 * real runtime, a FIFO per simulated disk).
 */
final class Disk implements Volume {
    /** Read errors within {@link #READ_ERROR_WINDOW_NANOS} that fail the disk for good. */
    static final int READ_ERRORS_TO_FAIL = 3;
    /** The window read errors are counted in. */
    static final long READ_ERROR_WINDOW_NANOS = 600_000_000_000L;
    /** Weight of the newest sample in the latency average (about the last ten calls count). */
    static final double LATENCY_WEIGHT = 0.1;

    private final Volume volume;
    private final Clock clock;
    private final Consumer<Disk> onFailure;
    /** A call to the volume, and when it started. */
    private static final class Call extends InFlight.Op {
        final long startNanos;

        Call(long startNanos) { this.startNanos = startNanos; }
    }

    /** Calls under way, oldest first: the oldest one's age is reported if it is over the average. */
    private final InFlight<Call> calls = new InFlight<>();
    private double averageNanos;
    /** Calls finished since the last report (an idle disk's average decays instead of standing still). */
    private int finishedSinceReport;
    private String failure;
    /** When the last {@link #READ_ERRORS_TO_FAIL} read errors happened (a ring), and how many there were in all. */
    private final long[] readErrorNanos = new long[READ_ERRORS_TO_FAIL];
    private long readErrors;
    /** Set while recovery reads the disk: every error fails it then. */
    private boolean recovering;
    private boolean full;
    /** When ENOSPC last marked it full (this server's monotonic clock). */
    private long fullSinceNanos;
    private boolean slow;
    /** What the store keeps here (chunk files and their bytes), kept by {@link ChunkStore} as it adds and drops. */
    private int chunkCount;
    private long chunkBytes;

    Disk(Volume volume, Clock clock, Consumer<Disk> onFailure) {
        this.volume = volume;
        this.clock = clock;
        this.onFailure = onFailure;
    }

    // ---------------------------------------------------------------- contents

    int chunkCount() { return chunkCount; }

    /** Chunk files kept aside on this disk ({@link ChunkStore#QUARANTINE_PREFIX}): counted at recovery, then as they are made. */
    int quarantined() { return quarantined; }

    void quarantined(int delta) { quarantined += delta; }

    private int quarantined;

    long chunkBytes() { return chunkBytes; }

    /** A chunk file of {@code bytes} came (+1) or went (-1); a chunk grew by {@code bytes} (0). */
    void account(int files, long bytes) {
        chunkCount += files;
        chunkBytes += bytes;
        assert chunkCount >= 0 && chunkBytes >= 0 : "disk " + name() + " tally went negative: " + chunkCount + " files, " + chunkBytes + " bytes";
    }

    // ---------------------------------------------------------------- health

    boolean failed() { return failure != null; }

    boolean full() { return full; }

    boolean slow() { return slow; }

    /** The master's verdict on this disk's latency. */
    void setSlow(boolean slow) { this.slow = slow; }

    /**
     * Space was freed on it (a chunk deleted), or a report is due: a full disk takes new chunks again once its
     * filesystem has {@link #REOPEN_FREE_BYTES} (or 1 % of it) free. Reopening on any delete made the flag flip
     * between full and ok every few seconds, each new chunk failing ENOSPC again. A disk that cannot say how
     * much is free reopens on any delete.
     */
    void spaceFreed() {
        if (!full) return;
        Space space = volume.space();
        if (space == null || space.freeBytes() >= Math.max(REOPEN_FREE_BYTES, space.totalBytes() / 100)) full = false;
    }

    /**
     * At a report: a full disk whose filesystem now has room (freed by others than this server) reopens. One that
     * cannot say how much is free (statvfs failing) reopens {@link #UNKNOWN_SPACE_RETRY_NANOS} after it filled: the
     * next chunk tells, and ENOSPC fills it again. Without this, such a disk freed by someone else stayed full until
     * one of its own chunks was deleted, and a host whose only working disk it was took no new chunk for good
     * (simulator seed 8234: an ec(3,1) file could not be placed on four healthy hosts).
     */
    void recheckFull() {
        if (!full || failure != null) return;
        Space space = volume.space();
        if (space == null ? clock.nanoTime() - fullSinceNanos >= UNKNOWN_SPACE_RETRY_NANOS
                : space.freeBytes() >= Math.max(REOPEN_FREE_BYTES, space.totalBytes() / 100)) full = false;
    }

    /** How long a full disk whose free space is unknown waits before it is tried again. */
    static final long UNKNOWN_SPACE_RETRY_NANOS = 60_000_000_000L;

    /** Free space a full disk needs before it takes new chunks again: a few of the largest chunks. */
    static final long REOPEN_FREE_BYTES = 256L << 20;

    /** Takes new chunks: not failed, full or slow. */
    boolean usable() { return failure == null && !full && !slow; }

    DiskState state() {
        if (failure != null) return DiskState.FAILED;
        if (full) return DiskState.FULL;
        return slow ? DiskState.SLOW : DiskState.OK;
    }

    /**
     * For the heartbeat: the moving average, or the age of the oldest unfinished call if that is longer
     * (a stalled disk finishes nothing). With no call finished since the last report the average halves,
     * so one slow call on an idle disk is not held against it forever.
     */
    long reportLatencyMicros() {
        if (finishedSinceReport == 0) averageNanos /= 2;
        finishedSinceReport = 0;
        return latencyMicros();
    }

    long latencyMicros() {
        long now = clock.nanoTime();
        Call head = calls.oldest();
        long oldest = head == null ? 0 : now - head.startNanos;
        return Math.max((long) averageNanos, oldest) / 1000;
    }

    /** Counts a read error; true if it is the {@link #READ_ERRORS_TO_FAIL}th within the window. */
    private boolean tooManyReadErrors() {
        long now = clock.nanoTime();
        readErrorNanos[(int) (readErrors % READ_ERRORS_TO_FAIL)] = now;
        readErrors++;
        // the ring's next slot holds the oldest of the last READ_ERRORS_TO_FAIL errors
        return readErrors >= READ_ERRORS_TO_FAIL && now - readErrorNanos[(int) (readErrors % READ_ERRORS_TO_FAIL)] < READ_ERROR_WINDOW_NANOS;
    }

    /** Fails the disk: every later call is refused, and the owner is told once. */
    void fail(String why) {
        if (failure != null) return;
        failure = why;
        onFailure.accept(this);
    }

    String failure() { return failure; }

    /** Recovery starts ({@code true}) or is over: while it runs, a read error fails the disk as any error does. */
    void recovering(boolean on) { recovering = on; }

    /** Read errors since start outside recovery, the one that failed the disk included (for tests and {@code --metrics}). */
    long readErrors() { return readErrors; }

    /** Calls held for the latency report, finished ones not yet dropped included (for tests: what it costs in memory). */
    int callsHeld() { return calls.held(); }

    // ---------------------------------------------------------------- Volume

    @Override public String name() { return volume.name(); }

    @Override public Promise<Void> write(String file, long offset, byte[] data) { return timed(Op.WRITE, () -> volume.write(file, offset, data)); }

    @Override public Promise<byte[]> read(String file, long offset, int length) { return timed(Op.READ, () -> volume.read(file, offset, length)); }

    @Override public Promise<byte[]> readFromDevice(String file, long offset, int length) {
        return timed(Op.READ, () -> volume.readFromDevice(file, offset, length));
    }

    @Override public void retiring(String file) { volume.retiring(file); }

    @Override public Space space() { return failure != null ? null : volume.space(); }

    @Override public Promise<int[]> checksums(String file, long offset, int length, int blockSize) {
        return timed(Op.READ, () -> volume.checksums(file, offset, length, blockSize));
    }

    @Override public Promise<Void> sync(String file) { return timed(Op.SYNC, () -> volume.sync(file)); }

    @Override public Promise<Void> syncDirectory() { return timed(Op.SYNC, volume::syncDirectory); }

    @Override public Promise<Void> rename(String from, String to) { return timed(Op.OTHER, () -> volume.rename(from, to)); }

    @Override public Promise<Void> delete(String file) { return timed(Op.OTHER, () -> volume.delete(file)); }

    @Override public Promise<List<String>> list() { return timed(Op.OTHER, volume::list); }

    /** What a disk call did, for its latency histogram: reads (and checksums), writes, syncs (files and the directory), the rest. */
    enum Op { READ, WRITE, SYNC, OTHER }

    /** Latency of this disk's calls by kind, since start (for {@code --metrics}); on the node's loop. */
    private final dev.cairn.core.metrics.LatencyHistogram[] latency = new dev.cairn.core.metrics.LatencyHistogram[Op.values().length];

    {
        for (int i = 0; i < latency.length; i++) latency[i] = new dev.cairn.core.metrics.LatencyHistogram();
    }

    dev.cairn.core.metrics.LatencyHistogram latency(Op op) { return latency[op.ordinal()]; }

    private <T> Promise<T> timed(Op op, Supplier<Promise<T>> call) {
        if (failure != null) return Promise.failed(new CairnException(Status.IO, "disk " + name() + " has failed (" + failure + ")"));
        Call c = new Call(clock.nanoTime());
        calls.add(c);
        Promise<T> p;
        try {
            p = call.get();
        } catch (RuntimeException e) {
            p = Promise.failed(dev.cairn.core.async.Unexpected.report(e));
        }
        Promise<T> out = new Promise<>();
        p.onComplete((v, e) -> {
            calls.finish(c);
            long took = clock.nanoTime() - c.startNanos;
            latency[op.ordinal()].record(took);
            averageNanos = averageNanos == 0 ? took : averageNanos + LATENCY_WEIGHT * (took - averageNanos);
            finishedSinceReport++;
            if (e == null) out.complete(v); else out.fail(judge(op, e));
        });
        return out;
    }

    /** Turns a volume failure into what the chunkserver answers, failing or filling the disk on the way. */
    private Throwable judge(Op op, Throwable e) {
        if (e instanceof NoSpace) {
            full = true;
            fullSinceNanos = clock.nanoTime();
            return new CairnException(Status.NO_SPACE, "disk " + name() + " is full");
        }
        if (e instanceof DiskError) {
            if (op == Op.READ && !recovering && !tooManyReadErrors()) {
                return new CairnException(Status.CORRUPT, "read error on disk " + name() + ": " + e.getMessage()
                        + " (the copy is repaired from others; " + READ_ERRORS_TO_FAIL + " such errors within "
                        + READ_ERROR_WINDOW_NANOS / 60_000_000_000L + " minutes fail the disk)");
            }
            fail(e.getMessage());
            return new CairnException(Status.IO, e.getMessage());
        }
        return e;
    }
}
