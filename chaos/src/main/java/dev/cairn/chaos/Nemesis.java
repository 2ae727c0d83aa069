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
    /** The target of a fault on every node at once (the power loss of a whole site). */
    public static final String ALL = "all";
    /** Joins the nodes of a fault on several at once (a rack: {@code cs2+cs4}). */
    public static final String AND = "+";
    static final long FIRST_FAULT_MILLIS = 4_000, QUIET_TAIL_MILLIS = 4_000;
    static final long MIN_GAP_MILLIS = 2_000, MAX_GAP_MILLIS = 7_000;
    static final long MIN_FAULT_MILLIS = 2_000, MAX_FAULT_MILLIS = 9_000;

    /** The named scenarios; {@code all} runs each in turn. */
    public enum Scenario {
        /** kill -9 of chunkservers under writes, each restarted after a while. */
        CHUNKSERVER_KILL(Kind.KILL, false),
        /** kill -9 of the NFS gateway under NFS writes, restarted: what a COMMIT acknowledged must survive it. */
        GATEWAY_KILL(Kind.KILL, false),
        /**
         * kill -9 of the NFS gateway, restarted, while the Linux kernel's NFS client (nfs-vm: Debian's kernel in QEMU,
         * root only) copies files onto a mount with {@code dd conv=fsync}: every copy whose fsync returned must read
         * back byte for byte, through the mount and through the cluster. The kernel holds what it wrote in its page
         * cache, resends it when a COMMIT's verifier says the gateway restarted, and reclaims its opens in the grace
         * period (RFC 8881 §8.4.2); the gateway must lose nothing it committed and hand out nothing it did not.
         */
        KERNEL_CLIENT(Kind.KILL, false),
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
         * A Raft group of three masters; SIGSTOP of whichever leads (a GC pause or a stalled host), SIGCONT after a
         * while: the others elect a new leader meanwhile, and the old one wakes up believing it still leads, its
         * timers due at once. What it then sends chunkservers carries its old term and must be refused, and
         * nothing it proposes can commit.
         */
        LEADER_STALL(Kind.STALL, true),
        /**
         * A Raft group of three masters loses its majority: kill -9 of two of them at once (the leader among them or
         * not), restarted after a while. Until one is back no write can commit: clients must wait or fail, never be
         * told a write is done; once a majority is back, the group elects and writes go on with nothing lost.
         */
        QUORUM_LOSS(Kind.KILL, true),
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
        /**
         * Power loss: a node killed and every change its disk had not made durable undone (each node's data on
         * {@code cairn-lossyfs}, a FUSE layer that keeps POSIX's durability rules strictly: data until its file's
         * fsync, names until their directory's), then started again on what survived. One chunkserver, the master,
         * the gateway, a rack of two chunkservers, or every node at once. Root only (it mounts).
         */
        POWER_LOSS(Kind.POWER_LOSS, null),
        /**
         * Power loss under a Raft group of three masters, every node on the same layer: the leader of the moment,
         * all three masters at once, every node at once, or one chunkserver. The Raft log, its snapshots and the
         * masters' stores must keep what they acknowledged through a cut that takes everything unsynced.
         */
        GROUP_POWER_LOSS(Kind.POWER_LOSS, null),
        /**
         * A slow or stalled disk: every read, write and sync of one chunkserver's disk delayed by
         * {@link #MIN_STALL_MILLIS}–{@link #MAX_STALL_MILLIS} ms for the fault's length (the same FUSE layer).
         */
        DISK_STALL(Kind.DISK_STALL, false),
        /**
         * A dying disk: every read, write, sync and name change on one chunkserver's disk fails with EIO for the
         * fault's length; then the disk works again and the chunkserver is restarted (an operator's fix): it
         * writes the disk off, its chunks are repaired elsewhere, and after the restart its old copies must be
         * judged stale, never served over the newer ones.
         */
        DISK_ERROR(Kind.DISK_ERROR, false),
        /**
         * Network partitions under a Raft group of three masters (each node in a network namespace of its own, cut
         * off by nftables rules; root only): the leader alone, the leader with a chunkserver (a minority holding
         * data), any master, a chunkserver or two, the gateway; both ways, or one way (the target hears nothing).
         * A lone master may instead be cut from the other masters only (a split brain), and a rack of two chunkservers
         * from the masters only (the masters lose sight of 2 of the 5 servers; clients still reach them all).
         * A deposed leader on the minority side must not hand out a lease, bump a version or delete a copy the
         * majority's leader relies on; clients on the majority side go on once it has elected.
         */
        PARTITION(Kind.PARTITION, null),
        /**
         * Packet loss under a Raft group: {@link #MIN_LOSS_PERCENT}–{@link #MAX_LOSS_PERCENT} % of a node's
         * packets dropped each way (the leader, a chunkserver or the gateway; the same namespaces and rules).
         */
        PACKET_LOSS(Kind.PACKET_LOSS, null),
        /** All of the above but the full disk, the clock steps, power losses and stalled disks, drawn at random. */
        MIXED(null, null),
        /**
         * Network faults mixed with kills, stalls and power losses under a Raft group of three masters (root only: each
         * node in a network namespace of its own and on {@code cairn-lossyfs}): each fault drawn from kill -9, SIGSTOP,
         * a partition, packet loss and a power loss, with their own targets, so that they overlap on different nodes
         * (a chunkserver's power cut while the leader is partitioned away, a stalled server while another drops packets).
         */
        STORM(null, null);

        /** The kinds {@link #STORM} draws from. */
        static final Kind[] STORM_KINDS = {Kind.KILL, Kind.STALL, Kind.PARTITION, Kind.PACKET_LOSS, Kind.POWER_LOSS};

        private final Kind only;
        private final Boolean master;

        Scenario(Kind only, Boolean master) {
            this.only = only;
            this.master = master;
        }

        public String id() { return name().toLowerCase(Locale.ROOT).replace('_', '-'); }

        /** Masters the scenario runs: a group of three where the leader is the target, else one. */
        public int masters() {
            return this == LEADER_KILL || this == LEADER_STALL || this == QUORUM_LOSS || this == GROUP_POWER_LOSS || needsNetwork() ? 3 : 1;
        }

        /** Whether each node needs a network namespace of its own (the faults are nftables rules in them). */
        public boolean needsNetwork() { return only == Kind.PARTITION || only == Kind.PACKET_LOSS || this == STORM; }

        /** Whether its workload is the Linux kernel's NFS client in nfs-vm (root only). */
        public boolean needsKernelClient() { return this == KERNEL_CLIENT; }

        /** Whether its faults need libfaketime under every node. */
        public boolean stepsClocks() { return only == Kind.CLOCK_STEP; }

        /** Whether each chunkserver's data needs a small filesystem of its own (a tmpfs the run mounts). */
        public boolean fillsDisks() { return only == Kind.DISK_FULL; }

        /**
         * How the lossy disks make names durable: by POSIX's letter, except under the master group, whose Raft log
         * (Apache Ratis) makes a new segment's or metadata file's name durable only by syncing the file itself,
         * which ext4 and XFS honour (their metadata is one ordered journal) and POSIX does not promise.
         */
        public LossyDisks.Metadata metadata() { return masters() > 1 ? LossyDisks.Metadata.JOURNALED : LossyDisks.Metadata.STRICT; }

        /** Whether nodes' data need {@code cairn-lossyfs} under them (power loss, stalled disks). */
        public boolean needsLossyDisks() { return only == Kind.POWER_LOSS || only == Kind.DISK_STALL || only == Kind.DISK_ERROR || this == STORM; }

        public static Scenario parse(String s) {
            for (Scenario x : values()) if (x.id().equals(s)) return x;
            throw new IllegalArgumentException("no scenario '" + s + "'; known: all, " + String.join(", ", Arrays.stream(values()).map(Scenario::id).toList()));
        }
    }

    public enum Kind { KILL, STALL, CLOCK_STEP, DISK_FULL, POWER_LOSS, DISK_STALL, DISK_ERROR, PARTITION, PACKET_LOSS }

    /**
     * {@link Fault#amount} of a {@link Kind#PARTITION}: the target neither hears nor is heard by anyone, or only hears
     * nothing, or is cut off (both ways) from the other masters only, chunkservers, the gateway and clients still
     * reaching it (a split brain: the deposed leader still reaches the servers it commands).
     */
    public static final long BOTH_WAYS = 0, ONE_WAY = 1, FROM_MASTERS = 2;
    /** The share of a node's packets a {@link Kind#PACKET_LOSS} drops each way, in percent. */
    static final long MIN_LOSS_PERCENT = 5, MAX_LOSS_PERCENT = 40;

    /** The size of each chunkserver's filesystem in the disk-full scenario: room for the run's data four times over. */
    public static final long DISK_BYTES = 1L << 30;

    /** Largest wall-clock step: a day. */
    static final long MAX_CLOCK_STEP_SECONDS = 86_400, MIN_CLOCK_STEP_SECONDS = 3_600;
    /** The delay of each call to a stalled disk: from slow to all but stopped (a 1 MiB write takes one call or a few). */
    static final long MIN_STALL_MILLIS = 20, MAX_STALL_MILLIS = 2_000;

    /**
     * One fault: from {@code atMillis} (since the workload started) for {@code forMillis}, then healed. {@code target}
     * is a node, {@link #LEADER}, {@link #ALL}, or nodes joined by {@link #AND}. {@code amount} is the wall-clock step
     * in seconds of a {@link Kind#CLOCK_STEP}, the delay in milliseconds of each call of a {@link Kind#DISK_STALL},
     * {@link #BOTH_WAYS} or {@link #ONE_WAY} for a {@link Kind#PARTITION}, the percentage of packets a
     * {@link Kind#PACKET_LOSS} drops, and 0 otherwise.
     */
    public record Fault(long atMillis, Kind kind, String target, long forMillis, long amount) {
        public long endMillis() { return atMillis + forMillis; }

        /** The nodes it hits, of {@code every} node of the cluster (the leader is resolved before this is asked). */
        public List<String> nodes(List<String> every) {
            return target.equals(ALL) ? every : List.of(target.split("\\" + AND));
        }

        @Override public String toString() {
            String more = switch (kind) {
                case CLOCK_STEP -> String.format(Locale.ROOT, " (%+d s)", amount);
                case DISK_STALL -> String.format(Locale.ROOT, " (%d ms a call)", amount);
                case PARTITION -> amount == ONE_WAY ? " (one way: hears nothing)"
                        : amount == FROM_MASTERS ? (target.startsWith("cs") ? " (from the masters only)" : " (from the other masters only)") : " (both ways)";
                case PACKET_LOSS -> String.format(Locale.ROOT, " (%d%% of packets each way)", amount);
                default -> "";
            };
            return String.format(Locale.ROOT, "%6.1fs %-10s %-7s for %4.1fs%s", atMillis / 1e3, kind, target, forMillis / 1e3, more);
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
            Kind kind = scenario.only != null ? scenario.only
                    : scenario == Scenario.STORM ? Scenario.STORM_KINDS[r.nextInt(Scenario.STORM_KINDS.length)]
                    : (r.nextBoolean() ? Kind.KILL : Kind.STALL);
            String target = scenario == Scenario.GATEWAY_KILL || scenario == Scenario.KERNEL_CLIENT ? GATEWAY : onMaster ? (scenario.masters() > 1 ? LEADER : "master") : chunkservers.get(r.nextInt(chunkservers.size()));
            if (kind == Kind.POWER_LOSS) target = scenario.masters() > 1 ? groupPowerLossTarget(r, chunkservers) : powerLossTarget(r, chunkservers);
            if (scenario == Scenario.QUORUM_LOSS) {
                int spared = r.nextInt(3) + 1; // the one of three left running
                target = String.join(AND, java.util.stream.IntStream.rangeClosed(1, 3).filter(m -> m != spared).mapToObj(m -> "master" + m).toList());
            }
            long amount = 0;
            if (kind == Kind.CLOCK_STEP) {
                amount = r.nextLong(MIN_CLOCK_STEP_SECONDS, MAX_CLOCK_STEP_SECONDS + 1) * (r.nextBoolean() ? 1 : -1);
                length = Math.max(length, MAX_FAULT_MILLIS); // long enough for leases and heartbeats to cross the step
                if (t + length > lastEnd) break;
            }
            if (kind == Kind.DISK_STALL) amount = r.nextLong(MIN_STALL_MILLIS, MAX_STALL_MILLIS + 1);
            if (kind == Kind.PARTITION) {
                target = partitionTarget(r, chunkservers);
                int way = r.nextInt(6);
                boolean loneMaster = !target.contains(AND) && (target.equals(LEADER) || target.startsWith("master"));
                boolean rack = target.matches("cs\\d+\\" + AND + "cs\\d+");
                // a lone master or a rack cut from the masters only: a split brain, or the masters losing sight of part of
                // the servers while clients still reach every one
                amount = way < 3 ? BOTH_WAYS : way < 4 ? ONE_WAY : loneMaster || rack ? FROM_MASTERS : BOTH_WAYS;
            }
            if (kind == Kind.PACKET_LOSS) {
                int draw = r.nextInt(5);
                target = draw < 2 ? LEADER : draw < 4 ? chunkservers.get(r.nextInt(chunkservers.size())) : GATEWAY;
                amount = r.nextLong(MIN_LOSS_PERCENT, MAX_LOSS_PERCENT + 1);
            }
            if (fits(out, t, length, target, chunkservers)) out.add(new Fault(t, kind, target, length, amount));
            t += r.nextLong(MIN_GAP_MILLIS, MAX_GAP_MILLIS + 1);
        }
        out.sort(Comparator.comparingLong(Fault::atMillis));
        return out;
    }

    /** Half the time one chunkserver; else the master, the gateway, a rack of two chunkservers, or every node. */
    private static String powerLossTarget(SplittableRandom r, List<String> chunkservers) {
        int draw = r.nextInt(10);
        if (draw < 5) return chunkservers.get(r.nextInt(chunkservers.size()));
        if (draw == 5) return "master";
        if (draw == 6) return GATEWAY;
        if (draw == 9) return ALL;
        int a = r.nextInt(chunkservers.size()), b = r.nextInt(chunkservers.size() - 1);
        if (b >= a) b++;
        return chunkservers.get(Math.min(a, b)) + AND + chunkservers.get(Math.max(a, b));
    }

    /**
     * The side cut off: the leader alone (a third of the time), the leader with a chunkserver, a master named in
     * advance (the leader or not), a chunkserver, a rack of two, or the gateway.
     */
    private static String partitionTarget(SplittableRandom r, List<String> chunkservers) {
        int draw = r.nextInt(12);
        String cs = chunkservers.get(r.nextInt(chunkservers.size()));
        if (draw < 4) return LEADER;
        if (draw < 6) return LEADER + AND + cs;
        if (draw < 7) return "master" + (r.nextInt(3) + 1);
        if (draw < 9) return cs;
        if (draw < 10) {
            String other = chunkservers.get(r.nextInt(chunkservers.size()));
            return other.equals(cs) ? cs : cs + AND + other;
        }
        return GATEWAY;
    }

    /** Under a master group: the leader, every master, every node, or a chunkserver. */
    private static String groupPowerLossTarget(SplittableRandom r, List<String> chunkservers) {
        int draw = r.nextInt(10);
        if (draw < 4) return LEADER;
        if (draw < 6) return String.join(AND, List.of("master1", "master2", "master3"));
        if (draw < 8) return ALL;
        return chunkservers.get(r.nextInt(chunkservers.size()));
    }

    /** A node's name for telling overlaps: every master of a group is one (the leader may be any of them). */
    private static String overlapName(String node) { return node.equals(LEADER) || node.startsWith("master") ? "master" : node; }

    /**
     * No overlap on one node, and at most {@link #MAX_CHUNKSERVERS_AT_ONCE} chunkservers faulted at once; a fault on
     * every node overlaps no other.
     */
    private static boolean fits(List<Fault> planned, long at, long length, String target, List<String> chunkservers) {
        List<String> every = new ArrayList<>(chunkservers);
        every.addAll(List.of("master", GATEWAY, LEADER));
        List<String> mine = new Fault(at, Kind.KILL, target, length, 0).nodes(every).stream().map(Nemesis::overlapName).toList();
        long chunkserversBusy = mine.stream().filter(n -> n.startsWith("cs")).count();
        for (Fault f : planned) {
            boolean overlaps = f.atMillis < at + length && at < f.endMillis();
            if (!overlaps) continue;
            if (target.equals(ALL) || f.target.equals(ALL)) return false;
            List<String> theirs = f.nodes(every).stream().map(Nemesis::overlapName).toList();
            if (theirs.stream().anyMatch(mine::contains)) return false;
            chunkserversBusy += theirs.stream().filter(n -> n.startsWith("cs")).count();
        }
        return target.equals(ALL) || chunkserversBusy <= MAX_CHUNKSERVERS_AT_ONCE || mine.stream().noneMatch(n -> n.startsWith("cs"));
    }
}
