package dev.cairn.master;

import dev.cairn.core.env.Address;

/**
 * The master's settings.
 *
 * @param listen where clients and chunkservers reach it
 * @param defaultGoal copies of each chunk when a file does not say (capped by live servers)
 * @param heartbeatTimeoutNanos a chunkserver silent this long (on the master's monotonic clock) is dead
 */
public record MasterConfig(Address listen, int defaultGoal, long heartbeatTimeoutNanos) {
    public static final long DEFAULT_HEARTBEAT_TIMEOUT_NANOS = 5_000_000_000L;
    /** Copies of a chunk of a file whose class is the default ({@code replicated(0)}). */
    public static final int DEFAULT_GOAL = 3;

    public static MasterConfig defaults(Address listen) {
        return new MasterConfig(listen, DEFAULT_GOAL, DEFAULT_HEARTBEAT_TIMEOUT_NANOS);
    }
}
