package dev.cairn.sim;

import java.util.EnumSet;
import java.util.Set;

/**
 * What one simulated run does.
 *
 * @param seed everything random in the run derives from it
 * @param durationNanos how long (virtual) the workload and the faults run before the quiet check
 * @param chunkservers number of chunkserver hosts
 * @param faults which fault kinds are injected
 * @param verbose echo node logs
 */
public record SimOptions(long seed, long durationNanos, int chunkservers, Set<Fault> faults, boolean verbose) {
    /** The fault kinds of this version of the simulator. */
    public enum Fault {
        /** Kill a chunkserver process; it restarts later with its disks as written. */
        CRASH,
        /** Cut a chunkserver's power: unsynced writes on its disks are lost; it restarts later. */
        POWER_LOSS
    }

    public static final long DEFAULT_DURATION_NANOS = 60_000_000_000L;

    public SimOptions {
        if (chunkservers < 1) throw new IllegalArgumentException("need at least one chunkserver");
        if (durationNanos <= 0) throw new IllegalArgumentException("duration must be positive");
        faults = faults.isEmpty() ? EnumSet.noneOf(Fault.class) : EnumSet.copyOf(faults);
    }

    public static SimOptions defaults(long seed) {
        return new SimOptions(seed, DEFAULT_DURATION_NANOS, 5, EnumSet.allOf(Fault.class), false);
    }

    public SimOptions withDuration(long nanos) { return new SimOptions(seed, nanos, chunkservers, faults, verbose); }

    public SimOptions withFaults(Set<Fault> f) { return new SimOptions(seed, durationNanos, chunkservers, f, verbose); }

    public SimOptions withVerbose(boolean v) { return new SimOptions(seed, durationNanos, chunkservers, faults, v); }
}
