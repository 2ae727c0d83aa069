package dev.cairn.master;

import java.util.ArrayDeque;
import java.util.List;

/**
 * The cluster's health and space over the last minutes, for the dashboard's plots: one sample every
 * {@link #EVERY_NANOS} at most, taken by the planner's pass (so it adds no event of its own), the last
 * {@link #KEPT} kept — ten minutes.
 */
public final class ClusterHistory {
    public static final long EVERY_NANOS = 5_000_000_000L;
    public static final int KEPT = 120;

    /** One moment: when (wall clock, for labels only), bytes used on live servers, chunk counts, planner copies so far. */
    public record Sample(long wallMillis, long usedBytes, long chunks, long underGoal, long endangered, long lost, long moving,
                         long copiesMade, int serversAlive) {}

    private final ArrayDeque<Sample> samples = new ArrayDeque<>();
    private long lastNanos;
    private boolean any;

    /** Records {@code s} if the last sample is {@link #EVERY_NANOS} old (or there is none). */
    void offer(long nowNanos, Sample s) {
        if (any && nowNanos - lastNanos < EVERY_NANOS) return;
        any = true;
        lastNanos = nowNanos;
        samples.addLast(s);
        if (samples.size() > KEPT) samples.removeFirst();
        assert samples.size() <= KEPT;
    }

    /** Oldest first. */
    public List<Sample> samples() { return List.copyOf(samples); }
}
