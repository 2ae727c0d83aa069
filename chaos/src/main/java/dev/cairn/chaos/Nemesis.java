package dev.cairn.chaos;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.SplittableRandom;

/**
 * What a chaos run does to the cluster, drawn from its seed: the same seed and duration give the same schedule
 * (the outcomes on real processes need not repeat). Faults on one node never overlap, and at most
 * {@link #MAX_CHUNKSERVERS_AT_ONCE} chunkservers are faulted at a time, so a replicated(3) write always has a
 * place to go once its lease moves; everything is healed {@link #QUIET_TAIL_MILLIS} before the run ends.
 */
public final class Nemesis {
    public static final int MAX_CHUNKSERVERS_AT_ONCE = 2;
    /** The NFS gateway's node name. */
    public static final String GATEWAY = "nfs";
    /** The target of a fault on whichever master of a group leads when the fault fires. */
    public static final String LEADER = "leader";
    static final long FIRST_FAULT_MILLIS = 4_000, QUIET_TAIL_MILLIS = 4_000;
    static final long MIN_GAP_MILLIS = 2_000, MAX_GAP_MILLIS = 7_000;
    static final long MIN_FAULT_MILLIS = 2_000, MAX_FAULT_MILLIS = 9_000;

    /** The named scenarios; {@code all} runs each in turn. */
    public enum Scenario {
        /** kill -9 of chunkservers under writes, each restarted after a while. */
        CHUNKSERVER_KILL(Kind.KILL, false),
        /** kill -9 of the NFS gateway under NFS writes, restarted: what a COMMIT acknowledged must survive it. */
        GATEWAY_KILL(Kind.KILL, false),
        /** SIGSTOP of chunkservers under writes (a stalled host: sockets open, nothing answered), then SIGCONT. */
        CHUNKSERVER_STALL(Kind.STALL, false),
        /** kill -9 of the master under writes, restarted after a while (its clients must ride it out or fail cleanly). */
        MASTER_KILL(Kind.KILL, true),
        /**
         * A Raft group of three masters; kill -9 of whichever leads, under writes, restarted after a while: the
         * others elect a new leader and clients, chunkservers and the gateway follow it without failing a write.
         */
        LEADER_KILL(Kind.KILL, true),
        /**
         * The wall clock of a chunkserver or the master stepped by an hour to a day, forwards or back, then stepped
         * back (libfaketime; the monotonic clock is left alone, as on a host whose NTP steps).
         */
        CLOCK_STEP(Kind.CLOCK_STEP, null),
        /**
         * Each chunkserver's data on a filesystem of its own, small (a tmpfs of {@link #DISK_BYTES}; mounted by the run,
         * so as root only); one at a time, or two, filled to ENOSPC under writes, then emptied again: writes move to
         * servers with room, nothing acknowledged is lost, and the full server takes chunks again once it has room.
         */
        DISK_FULL(Kind.DISK_FULL, false),
        /** All of the above but the full disk and the clock steps, drawn at random. */
        MIXED(null, null);

        private final Kind only;
        private final Boolean master;

        Scenario(Kind only, Boolean master) {
            this.only = only;
            this.master = master;
        }

        public String id() { return name().toLowerCase(Locale.ROOT).replace('_', '-'); }

        /** Masters the scenario runs: a group of three where the leader is the target, else one. */
        public int masters() { return this == LEADER_KILL ? 3 : 1; }

        /** Whether its faults need libfaketime under every node. */
        public boolean stepsClocks() { return only == Kind.CLOCK_STEP; }

        /** Whether each chunkserver's data needs a small filesystem of its own (a tmpfs the run mounts). */
        public boolean fillsDisks() { return only == Kind.DISK_FULL; }

        public static Scenario parse(String s) {
            for (Scenario x : values()) if (x.id().equals(s)) return x;
            throw new IllegalArgumentException("no scenario '" + s + "'; known: all, " + String.join(", ", Arrays.stream(values()).map(Scenario::id).toList()));
        }
    }

    public enum Kind { KILL, STALL, CLOCK_STEP, DISK_FULL }

    /** The size of each chunkserver's filesystem in the disk-full scenario: room for the run's data four times over. */
    public static final long DISK_BYTES = 1L << 30;

    /** Largest wall-clock step: a day. */
    static final long MAX_CLOCK_STEP_SECONDS = 86_400, MIN_CLOCK_STEP_SECONDS = 3_600;

    /**
     * One fault: from {@code atMillis} (since the workload started) for {@code forMillis}, then healed;
     * {@code clockStepSeconds} is the wall-clock step of a {@link Kind#CLOCK_STEP} (0 otherwise).
     */
    public record Fault(long atMillis, Kind kind, String target, long forMillis, long clockStepSeconds) {
        public long endMillis() { return atMillis + forMillis; }

        @Override public String toString() {
            String step = kind == Kind.CLOCK_STEP ? String.format(Locale.ROOT, " (%+d s)", clockStepSeconds) : "";
            return String.format(Locale.ROOT, "%6.1fs %-10s %-7s for %4.1fs%s", atMillis / 1e3, kind, target, forMillis / 1e3, step);
        }
    }

    private Nemesis() { }

    public static List<Fault> schedule(Scenario scenario, long seed, long durationMillis, List<String> chunkservers) {
        SplittableRandom r = new SplittableRandom(seed ^ 0x5DEECE66DL ^ scenario.id().hashCode()); // by name: adding a scenario changes no other one's schedule
        List<Fault> out = new ArrayList<>();
        long t = FIRST_FAULT_MILLIS;
        long lastEnd = durationMillis - QUIET_TAIL_MILLIS;
        while (true) {
            long length = r.nextLong(MIN_FAULT_MILLIS, MAX_FAULT_MILLIS + 1);
            if (t + length > lastEnd) break;
            boolean onMaster = scenario.master != null ? scenario.master : r.nextInt(4) == 0;
            Kind kind = scenario.only != null ? scenario.only : (r.nextBoolean() ? Kind.KILL : Kind.STALL);
            String target = scenario == Scenario.GATEWAY_KILL ? GATEWAY : onMaster ? (scenario.masters() > 1 ? LEADER : "master") : chunkservers.get(r.nextInt(chunkservers.size()));
            long step = 0;
            if (kind == Kind.CLOCK_STEP) {
                step = r.nextLong(MIN_CLOCK_STEP_SECONDS, MAX_CLOCK_STEP_SECONDS + 1) * (r.nextBoolean() ? 1 : -1);
                length = Math.max(length, MAX_FAULT_MILLIS); // long enough for leases and heartbeats to cross the step
                if (t + length > lastEnd) break;
            }
            if (fits(out, t, length, target)) out.add(new Fault(t, kind, target, length, step));
            t += r.nextLong(MIN_GAP_MILLIS, MAX_GAP_MILLIS + 1);
        }
        out.sort(Comparator.comparingLong(Fault::atMillis));
        return out;
    }

    /** No overlap on one node, and at most {@link #MAX_CHUNKSERVERS_AT_ONCE} chunkservers faulted at once. */
    private static boolean fits(List<Fault> planned, long at, long length, String target) {
        int chunkserversBusy = 0;
        for (Fault f : planned) {
            boolean overlaps = f.atMillis < at + length && at < f.endMillis();
            if (!overlaps) continue;
            if (f.target.equals(target)) return false;
            if (f.target.startsWith("cs")) chunkserversBusy++;
        }
        return !target.startsWith("cs") || chunkserversBusy < MAX_CHUNKSERVERS_AT_ONCE;
    }
}
