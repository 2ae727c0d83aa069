package dev.cairn.sim;

import dev.cairn.core.env.Plant;
import java.util.EnumSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.stream.Collectors;

/**
 * What one simulated run does.
 *
 * @param seed everything random in the run derives from it
 * @param durationNanos how long (virtual) the workload and the faults run before the quiet check
 * @param chunkservers number of chunkserver hosts at the start
 * @param faults the fault kinds a run may inject (with {@code swarm}, each seed draws its own subset and rates)
 * @param swarm draw a per-seed mix from {@code faults} (swarm testing) rather than use them all at even rates
 * @param plants bugs planted in the node code (to prove the checkers catch them)
 * @param verbose echo node logs
 * @param workload the client load: the sweep's (heavy, data path) or a steady trickle (the speed benchmark's)
 * @param masters 1 (a single master on its local log) or a group of 3 or 5 over the simulated Raft log ({@link dev.cairn.sim.runtime.SimRaft})
 */
public record SimOptions(long seed, long durationNanos, int chunkservers, Set<Fault> faults, boolean swarm, Set<Plant> plants, boolean verbose,
                         dev.cairn.sim.workload.Workload.Profile workload, int masters) {
    /** The fault catalog (DESIGN.md "Simulator"). */
    public enum Fault {
        // hosts
        /** Kill a chunkserver process; it restarts later with its disks as written. */
        CRASH(Group.HOST),
        /** Cut a chunkserver's power: unsynced writes on its disks are lost; it restarts later. */
        POWER_LOSS(Group.HOST),
        /** Cut the power of every chunkserver in one rack at once. */
        RACK_POWER_LOSS(Group.HOST),
        /** Cut the power of the master and every chunkserver at once. */
        CLUSTER_POWER_LOSS(Group.HOST),
        /** A chunkserver is lost for good with its disks. */
        HOST_LOSS(Group.HOST),
        /** A new, empty chunkserver joins. */
        NEW_HOST(Group.HOST),
        /** The master crashes or loses power, and restarts. */
        MASTER_CRASH(Group.HOST),
        /** The NFS gateway crashes or loses power, and restarts: its clients' uncommitted writes are gone (the write verifier changes). */
        GATEWAY_CRASH(Group.HOST),
        /**
         * A process stops (as SIGSTOP, or a long GC or VM pause) for 1 to 45 s and continues: a chunkserver, the
         * master or the client; its timers fire late, messages to it wait, and it wakes to a clock that jumped.
         */
        PAUSE(Group.HOST),
        /**
         * Crashes and power losses (tearing unsynced writes) fired where the node code marks a risky point
         * ({@link dev.cairn.core.env.Hazard}: between a data fsync and the header write, between the header
         * fsync and the answer, mid-chain, around version bumps and log commits), with raised probability.
         */
        AIMED(Group.HOST),
        // disks
        /** Power losses tear unsynced writes at 4 KiB sectors (old, new, or garbage where the file grew). */
        TORN_WRITES(Group.DISK),
        /** A disk stops answering for seconds to a minute. */
        DISK_STALL(Group.DISK),
        /** A disk becomes 5 to 50 times slower for a while. */
        SLOW_DISK(Group.DISK),
        /** A disk's next reads fail with an I/O error. */
        READ_ERROR(Group.DISK),
        /** A bit of a chunk file flips silently. */
        BIT_FLIP(Group.DISK),
        /** A write lands one sector away from its target. */
        MISDIRECTED_WRITE(Group.DISK),
        /** An fsync fails and the pages it covered are dropped. */
        FSYNC_FAIL(Group.DISK),
        /** A disk is full for a while (ENOSPC). */
        DISK_FULL(Group.DISK),
        /** A disk dies for good with what it held. */
        DISK_DEATH(Group.DISK),
        // network
        /** Messages are lost for a while (each loss resets its connection, as TCP would). */
        MESSAGE_LOSS(Group.NETWORK),
        /** Delay spikes of up to 3 s for a while. */
        DELAY(Group.NETWORK),
        /** Messages are delivered twice, the copy late and out of order, for a while. */
        DUPLICATE(Group.NETWORK),
        /** Two hosts cannot reach each other (both ways, or one way) for a while. */
        PARTITION(Group.NETWORK),
        /** An open connection is reset. */
        CONNECTION_RESET(Group.NETWORK),
        // clocks
        /** Wall clocks start up to two hours apart. */
        CLOCK_SKEW(Group.CLOCK),
        /** Clocks run up to 200 ppm fast or slow. */
        CLOCK_DRIFT(Group.CLOCK),
        /** A wall clock jumps forward or back by up to three hours. */
        CLOCK_STEP(Group.CLOCK),
        // liveness
        /** Faults pause now and then (transient ones healed) so progress can be judged. */
        QUIET_PERIODS(Group.QUIET);

        public enum Group { HOST, DISK, NETWORK, CLOCK, QUIET }

        public final Group group;

        Fault(Group group) { this.group = group; }

        public String cliName() { return name().toLowerCase(Locale.ROOT).replace('_', '-'); }

        /** Parses a comma-separated list: fault names, group names (host, disk, network, clock), {@code all} or {@code none}. */
        public static Set<Fault> parseList(List<String> names) {
            Set<Fault> out = EnumSet.noneOf(Fault.class);
            for (String n : names) {
                String t = n.trim().toLowerCase(Locale.ROOT);
                if (t.isEmpty() || t.equals("none")) continue;
                if (t.equals("all")) { out.addAll(EnumSet.allOf(Fault.class)); continue; }
                boolean found = false;
                for (Fault f : values()) {
                    if (f.cliName().equals(t) || f.group.name().equalsIgnoreCase(t)) { out.add(f); found = true; }
                }
                if (!found) {
                    throw new IllegalArgumentException("unknown fault '" + n + "' (all, none, host, disk, network, clock, or one of: "
                            + EnumSet.allOf(Fault.class).stream().map(Fault::cliName).collect(Collectors.joining(", ")) + ")");
                }
            }
            return out;
        }

        /** The text {@link #parseList} reads back. */
        public static String format(Set<Fault> faults) {
            if (faults.isEmpty()) return "none";
            if (faults.containsAll(EnumSet.allOf(Fault.class))) return "all";
            return faults.stream().map(Fault::cliName).collect(Collectors.joining(","));
        }
    }

    public static final long DEFAULT_DURATION_NANOS = 60_000_000_000L;
    public static final int DEFAULT_CHUNKSERVERS = 5;

    public SimOptions {
        if (chunkservers < 1) throw new IllegalArgumentException("need at least one chunkserver");
        if (durationNanos <= 0) throw new IllegalArgumentException("duration must be positive");
        if (masters != 1 && masters != 3 && masters != 5) throw new IllegalArgumentException("masters must be 1, 3 or 5");
        faults = faults.isEmpty() ? EnumSet.noneOf(Fault.class) : EnumSet.copyOf(faults);
        plants = plants.isEmpty() ? EnumSet.noneOf(Plant.class) : EnumSet.copyOf(plants);
    }

    public SimOptions(long seed, long durationNanos, int chunkservers, Set<Fault> faults, boolean verbose) {
        this(seed, durationNanos, chunkservers, faults, true, Set.of(), verbose, dev.cairn.sim.workload.Workload.Profile.SWEEP, 1);
    }

    public SimOptions(long seed, long durationNanos, int chunkservers, Set<Fault> faults, boolean swarm, Set<Plant> plants, boolean verbose) {
        this(seed, durationNanos, chunkservers, faults, swarm, plants, verbose, dev.cairn.sim.workload.Workload.Profile.SWEEP, 1);
    }

    /** The full catalog, swarmed per seed. */
    public static SimOptions defaults(long seed) {
        return new SimOptions(seed, DEFAULT_DURATION_NANOS, DEFAULT_CHUNKSERVERS, EnumSet.allOf(Fault.class), true, Set.of(), false);
    }

    public SimOptions withDuration(long nanos) { return new SimOptions(seed, nanos, chunkservers, faults, swarm, plants, verbose, workload, masters); }

    public SimOptions withFaults(Set<Fault> f) { return new SimOptions(seed, durationNanos, chunkservers, f, swarm, plants, verbose, workload, masters); }

    public SimOptions withSwarm(boolean s) { return new SimOptions(seed, durationNanos, chunkservers, faults, s, plants, verbose, workload, masters); }

    public SimOptions withPlants(Set<Plant> p) { return new SimOptions(seed, durationNanos, chunkservers, faults, swarm, p, verbose, workload, masters); }

    public SimOptions withSeed(long s) { return new SimOptions(s, durationNanos, chunkservers, faults, swarm, plants, verbose, workload, masters); }

    public SimOptions withWorkload(dev.cairn.sim.workload.Workload.Profile w) { return new SimOptions(seed, durationNanos, chunkservers, faults, swarm, plants, verbose, w, masters); }

    public SimOptions withMasters(int n) { return new SimOptions(seed, durationNanos, chunkservers, faults, swarm, plants, verbose, workload, n); }

    public SimOptions withVerbose(boolean v) { return new SimOptions(seed, durationNanos, chunkservers, faults, swarm, plants, v, workload, masters); }

    /** The one command that replays this run. */
    public String replayCommand() {
        StringBuilder sb = new StringBuilder(String.format(Locale.ROOT, "./cairn sim --seed %d --duration %ds --faults %s --chunkservers %d",
                seed, durationNanos / 1_000_000_000L, Fault.format(faults), chunkservers));
        if (!swarm) sb.append(" --no-swarm");
        if (masters != 1) sb.append(" --masters ").append(masters);
        if (workload != dev.cairn.sim.workload.Workload.Profile.SWEEP) sb.append(" --workload ").append(workload.name().toLowerCase(Locale.ROOT));
        for (Plant p : plants) sb.append(" --plant ").append(p.cliName());
        return sb.toString();
    }
}
