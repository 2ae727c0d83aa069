package dev.cairn.core.proto;

/**
 * Write leases without clock agreement. A chunkserver takes client writes at a chunk version for
 * {@link #WINDOW_NANOS} after the master's create or bump for that version arrives, measured on its own
 * monotonic clock. The master keeps the chunk out of the planner's hands for {@link #MASTER_HOLD_NANOS}
 * after it hears the answer, measured on its own monotonic clock: the chunkserver's window began earlier
 * (before it answered) and is stretched by at most the drift bound on each clock, so once the master's
 * hold is over no write at that version can still land. Wall clocks are never consulted, so any skew or
 * step between hosts changes nothing.
 */
public final class Leases {
    /** Client writes at one chunk version are taken for this long. An upload that runs longer asks again. */
    public static final long WINDOW_NANOS = 30_000_000_000L;
    /** Worst-case rate difference between two hosts' monotonic clocks tolerated (500 ppm: 50× common quartz drift). */
    public static final double MAX_DRIFT = 500e-6;
    /** The master's hold: the window stretched by the drift on both clocks, plus a millisecond of rounding. */
    public static final long MASTER_HOLD_NANOS = WINDOW_NANOS + (long) (2 * MAX_DRIFT * WINDOW_NANOS) + 1_000_000L;

    private Leases() {}
}
