package dev.cairn.core.metrics;

/**
 * Durations counted in fixed buckets (Prometheus's cumulative {@code le} buckets, from 0.5 ms to 10 s), with their
 * sum: a few longs, whatever the number of samples. Written on its node's loop, read there by a scrape.
 */
public final class LatencyHistogram {
    /** Upper bounds of the buckets, in seconds; a last bucket takes everything longer ({@code +Inf}). */
    static final double[] BOUNDS = {0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10};
    private static final long[] BOUND_NANOS = new long[BOUNDS.length];

    static {
        for (int i = 0; i < BOUNDS.length; i++) BOUND_NANOS[i] = Math.round(BOUNDS[i] * 1e9);
    }

    private final long[] counts = new long[BOUNDS.length + 1];
    private long sumNanos;

    public void record(long nanos) {
        long n = Math.max(0, nanos);
        int i = 0;
        while (i < BOUND_NANOS.length && n > BOUND_NANOS[i]) i++;
        counts[i]++;
        sumNanos += n;
    }

    public long count() {
        long n = 0;
        for (long c : counts) n += c;
        return n;
    }

    long[] counts() { return counts.clone(); }

    double sumSeconds() { return sumNanos / 1e9; }
}
