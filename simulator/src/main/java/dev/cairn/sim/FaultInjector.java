package dev.cairn.sim;

import dev.cairn.core.chunk.ChunkFormat;
import dev.cairn.sim.SimOptions.Fault;
import dev.cairn.sim.runtime.SimDisk;
import dev.cairn.sim.runtime.SimHost;
import dev.cairn.sim.runtime.SimNetwork;
import dev.cairn.sim.runtime.Simulation;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.TreeSet;

/**
 * Injects faults from the run's mix at random moments until {@code end}, recording each in the
 * {@link FaultHistory}. Never more than {@link #MAX_DOWN} chunkservers are down at once outside a
 * cluster-wide power loss, never more than {@link #MAX_HOSTS_LOST} lost for good beyond those that
 * joined, so that every class the workload writes can still be placed. At the end every transient fault
 * is healed and every downed host restarted, so the run can be judged.
 */
final class FaultInjector {
    static final int MAX_DOWN = 2;
    static final int MAX_HOSTS_LOST = 1;
    static final int MAX_NEW_HOSTS = 2;
    static final int MAX_DISK_DEATHS = 1;
    static final int MAX_CLUSTER_POWER_LOSSES = 2;
    /** Mean gap between faults at intensity 1. */
    static final long MEAN_GAP_NANOS = 1_500_000_000L;
    static final long MIN_DOWNTIME_NANOS = 200_000_000L;
    static final long MAX_DOWNTIME_NANOS = 8_000_000_000L;
    /** Transient conditions (slowness, loss rates, partitions, full disks) last this long at most. */
    static final long MAX_EPISODE_NANOS = 15_000_000_000L;
    static final long MAX_STALL_NANOS = 60_000_000_000L;
    static final long MAX_STEP_MILLIS = 3 * 3600_000L;
    static final long MAX_DRIFT_PPM = 200;
    /** Quiet periods: faults run for a while, then pause (transient ones healed). */
    static final long MIN_ACTIVE_NANOS = 5_000_000_000L, MAX_ACTIVE_NANOS = 15_000_000_000L;
    static final long MIN_QUIET_NANOS = 3_000_000_000L, MAX_QUIET_NANOS = 8_000_000_000L;
    /**
     * Aimed faults per run at most (of them on the master, which reaches its points on every metadata change),
     * and the odds a risky point reached fires one (the kind's weight in this many).
     */
    static final int MAX_AIMED = 4, MAX_AIMED_MASTER = 1, AIMED_ODDS = 64;
    /** Aimed faults come at least this far apart (points are reached all the time: a seed's budget would go in its first second). */
    static final long AIMED_GAP_NANOS = 2_000_000_000L;

    /** A seed's fault mix: the kinds it injects and their relative weights (swarm testing). */
    record Mix(EnumMap<Fault, Integer> weights) {
        boolean has(Fault f) { return weights.containsKey(f); }

        /** Each kind of the pool is on with probability one half (at least one), at weight 1, 2 or 4. */
        static Mix draw(Set<Fault> pool, boolean swarm, SplittableRandom rnd) {
            EnumMap<Fault, Integer> w = new EnumMap<>(Fault.class);
            List<Fault> kinds = new ArrayList<>(pool);
            for (Fault f : kinds) {
                boolean on = !swarm || rnd.nextBoolean();
                int weight = 1 << rnd.nextInt(3);
                if (on) w.put(f, swarm ? weight : 1);
            }
            if (w.isEmpty() && !kinds.isEmpty()) w.put(kinds.get(rnd.nextInt(kinds.size())), 1);
            return new Mix(w);
        }

        @Override public String toString() {
            StringBuilder sb = new StringBuilder();
            for (Map.Entry<Fault, Integer> e : weights.entrySet()) {
                sb.append(sb.length() == 0 ? "" : " ").append(e.getKey().cliName());
                if (e.getValue() > 1) sb.append('×').append(e.getValue());
            }
            return sb.length() == 0 ? "none" : sb.toString();
        }
    }

    private final Simulation sim;
    private final SimCluster cluster;
    private final SimNetwork net;
    private final Mix mix;
    private final FaultHistory history;
    private final LossModel losses;
    private final long end;
    private final SplittableRandom rnd;
    /** Injectable kinds (the modifiers set at the start are not drawn again). */
    private final List<Fault> drawable = new ArrayList<>();
    private int totalWeight;
    /** Hosts whose disks had failures the chunkserver fails a disk for until restarted. */
    private final TreeSet<String> sickDisks = new TreeSet<>();
    private int hostsLost, newHosts, diskDeaths, clusterPowerLosses;
    private boolean quiet;
    /** The risky points this seed aims at (each on with probability one half), and firings left. */
    private final java.util.EnumSet<dev.cairn.core.env.Hazard> aimedAt = java.util.EnumSet.noneOf(dev.cairn.core.env.Hazard.class);
    private int aimedLeft, aimedMasterLeft;
    private long nextAimedNanos;
    /** Chance in {@link #AIMED_ODDS} that a risky point reached fires its fault (times the kind's weight). */
    private int aimedChance;

    /**
     * Messages whose arrival is a risky point too: the receiving host crashes or loses power as one comes, before
     * handling it, so the request is lost with the process (a gateway's length commit the master never made durable,
     * a sync a copy never did). A crash at a random moment lands there rarely; the writer's recovery from exactly
     * that loss is what these aim at (a gateway that let go of synced writes before their commit was answered lost
     * them once a new lease cut the copies back: NfsDataPathSimTest, planted as {@code release-before-commit}).
     */
    enum Arrival {
        COMMIT_LENGTH(dev.cairn.core.env.Hazard.Where.MASTER, dev.cairn.core.proto.MasterProtocol.CommitLength.class),
        WRITE_LEASE(dev.cairn.core.env.Hazard.Where.MASTER, dev.cairn.core.proto.MasterProtocol.WriteLease.class),
        SYNC_CHUNK(dev.cairn.core.env.Hazard.Where.CHUNKSERVER, dev.cairn.core.proto.ChunkProtocol.SyncChunk.class),
        BUMP_VERSION(dev.cairn.core.env.Hazard.Where.CHUNKSERVER, dev.cairn.core.proto.MasterProtocol.BumpVersion.class);

        final dev.cairn.core.env.Hazard.Where where;
        final Class<?> type;

        Arrival(dev.cairn.core.env.Hazard.Where where, Class<?> type) {
            this.where = where;
            this.type = type;
        }

        String cliName() { return name().toLowerCase(java.util.Locale.ROOT).replace('_', '-'); }
    }

    /** The arrivals this seed aims at (each on with probability one half), and how many faults they fired. */
    private final java.util.EnumSet<Arrival> arrivalsAimedAt = java.util.EnumSet.noneOf(Arrival.class);
    private long arrivalsFired;

    long arrivalsFired() { return arrivalsFired; }

    FaultInjector(Simulation sim, SimCluster cluster, Mix mix, FaultHistory history, LossModel losses, long end) {
        this.losses = losses;
        this.sim = sim;
        this.cluster = cluster;
        this.net = cluster.world().network();
        this.mix = mix;
        this.history = history;
        this.end = end;
        this.rnd = sim.random().split();
        for (Map.Entry<Fault, Integer> e : mix.weights().entrySet()) {
            Fault f = e.getKey();
            if (f == Fault.AIMED) {
                for (dev.cairn.core.env.Hazard h : dev.cairn.core.env.Hazard.values()) if (rnd.nextBoolean()) aimedAt.add(h);
                if (aimedAt.isEmpty()) aimedAt.add(dev.cairn.core.env.Hazard.values()[rnd.nextInt(dev.cairn.core.env.Hazard.values().length)]);
                aimedLeft = MAX_AIMED;
                aimedMasterLeft = MAX_AIMED_MASTER;
                aimedChance = e.getValue();
                sim.onHazard(this::reached);
                for (Arrival a : Arrival.values()) if (rnd.nextBoolean()) arrivalsAimedAt.add(a);
            }
            if (f == Fault.TORN_WRITES || f == Fault.CLOCK_SKEW || f == Fault.CLOCK_DRIFT || f == Fault.QUIET_PERIODS || f == Fault.AIMED) continue;
            drawable.add(f);
            totalWeight += e.getValue();
        }
    }

    /** Modifiers that hold for the whole run: torn writes and clock drift (skew is set when hosts are made). */
    void setUp() {
        if (mix.has(Fault.TORN_WRITES)) {
            for (SimHost h : sim.hosts()) h.setTornWrites(true);
            history.record(sim.now(), Fault.TORN_WRITES, "all", "power losses tear unsynced sectors");
        }
        if (mix.has(Fault.CLOCK_DRIFT)) {
            for (SimHost h : sim.hosts()) {
                long ppm = rnd.nextLong(-MAX_DRIFT_PPM, MAX_DRIFT_PPM + 1);
                h.setDriftPpm(ppm);
                history.record(sim.now(), Fault.CLOCK_DRIFT, h.name(), ppm + " ppm");
            }
        }
        if (mix.has(Fault.CLOCK_SKEW)) history.record(sim.now(), Fault.CLOCK_SKEW, "all", "wall clocks up to 2 h apart");
    }

    void start(long firstAt) {
        if (drawable.isEmpty()) return;
        sim.at(firstAt, null, Simulation.Kind.FAULT, 0, this::inject);
        if (mix.has(Fault.QUIET_PERIODS)) sim.at(firstAt + between(MIN_ACTIVE_NANOS, MAX_ACTIVE_NANOS), null, Simulation.Kind.FAULT, 3, this::quietBegins);
    }

    private long between(long lo, long hi) { return lo + rnd.nextLong(hi - lo); }

    private void quietBegins() {
        if (sim.now() >= end) return;
        quiet = true;
        healTransient();
        history.record(sim.now(), Fault.QUIET_PERIODS, "all", "faults paused");
        sim.at(between(MIN_QUIET_NANOS, MAX_QUIET_NANOS), null, Simulation.Kind.FAULT, 4, () -> {
            quiet = false;
            sim.at(between(MIN_ACTIVE_NANOS, MAX_ACTIVE_NANOS), null, Simulation.Kind.FAULT, 3, this::quietBegins);
        });
    }

    /**
     * Node code reached a risky point: with the seed's odds, right after the step that reached it (before any
     * disk call it started can complete) the host loses power, tearing what it had not synced, or crashes; a
     * chunkserver's point may take its rack or the whole cluster down with it. Within the usual bounds.
     */
    private void reached(SimHost host, dev.cairn.core.env.Hazard point) {
        if (quiet || aimedLeft == 0 || sim.now() >= end || sim.now() < nextAimedNanos || !aimedAt.contains(point)
                || rnd.nextInt(AIMED_ODDS) >= aimedChance) return;
        if (!host.isUp() || host.isLost()) return;
        if (point.where == dev.cairn.core.env.Hazard.Where.MASTER) {
            if (aimedMasterLeft == 0) return;
            aimedMasterLeft--;
        }
        int dice = rnd.nextInt(100);
        sim.at(0, null, Simulation.Kind.FAULT, 11, () -> {
            if (!host.isUp() || sim.now() >= end) return;
            String what;
            if (point.where == dev.cairn.core.env.Hazard.Where.MASTER) {
                boolean power = dice < 70;
                takeDownAimed(host, power, true);
                what = power ? "master power lost (writes torn)" : "master killed";
            } else if (dice < 15 && clusterPowerLosses < MAX_CLUSTER_POWER_LOSSES) {
                clusterPowerLosses++;
                List<SimHost> hit = new ArrayList<>(cluster.masters());
                for (SimHost h : cluster.chunkservers()) if (h.isUp()) hit.add(h);
                for (SimHost h : hit) if (h.isUp()) h.powerLoss(true);
                sim.at(between(MIN_DOWNTIME_NANOS, 5_000_000_000L), null, Simulation.Kind.FAULT, 7, () -> {
                    for (SimHost h : hit) if (!h.isUp() && !h.isLost()) h.start();
                });
                what = "cluster power lost (writes torn)";
            } else if (dice < 35 && down() == 0 && rackSize(host) <= MAX_DOWN) {
                String rack = cluster.rackOf(host);
                for (SimHost h : upChunkservers()) {
                    if (!cluster.rackOf(h).equals(rack)) continue;
                    h.powerLoss(true);
                    restartLater(h);
                }
                what = rack + " power lost (writes torn)";
            } else if (down() < MAX_DOWN) {
                boolean power = dice < 85;
                takeDownAimed(host, power, false);
                what = power ? "power lost (writes torn)" : "process killed";
            } else {
                return;
            }
            aimedLeft--;
            nextAimedNanos = sim.now() + AIMED_GAP_NANOS;
            history.record(sim.now(), Fault.AIMED, host.name(), what + " at " + point.cliName());
        });
    }

    /**
     * A message was handed to {@code host}: if its kind is aimed at, with the seed's odds the host crashes or loses power
     * now, before handling it (the simulated transport then drops it). Within the same budget and bounds as risky points.
     */
    void delivered(SimHost host, dev.cairn.core.proto.Message m) {
        if (arrivalsAimedAt.isEmpty() || quiet || aimedLeft == 0 || sim.now() >= end || sim.now() < nextAimedNanos) return;
        Arrival hit = null;
        for (Arrival a : arrivalsAimedAt) if (a.type.isInstance(m)) hit = a;
        if (hit == null || rnd.nextInt(AIMED_ODDS) >= aimedChance || !host.isUp() || host.isLost()) return;
        boolean master = cluster.masters().contains(host);
        if (master != (hit.where == dev.cairn.core.env.Hazard.Where.MASTER) || !(master || cluster.chunkservers().contains(host))) return;
        boolean power = rnd.nextInt(100) < 70;
        if (master) {
            if (aimedMasterLeft == 0) return;
            aimedMasterLeft--;
        } else if (down() >= MAX_DOWN) {
            return;
        }
        takeDownAimed(host, power, master);
        aimedLeft--;
        arrivalsFired++;
        nextAimedNanos = sim.now() + AIMED_GAP_NANOS;
        history.record(sim.now(), Fault.AIMED, host.name(), (power ? "power lost (writes torn)" : "process killed") + " as a " + hit.cliName() + " arrived");
    }

    /** An aimed fault on one host: power lost (writes torn) or the process killed, and a restart after a downtime. */
    private void takeDownAimed(SimHost host, boolean power, boolean master) {
        if (power) host.powerLoss(true); else host.crash();
        if (master) sim.at(between(MIN_DOWNTIME_NANOS, 5_000_000_000L), null, Simulation.Kind.FAULT, 8, () -> { if (!host.isUp()) host.start(); });
        else restartLater(host);
    }

    private int rackSize(SimHost host) {
        int n = 0;
        for (SimHost h : upChunkservers()) if (cluster.rackOf(h).equals(cluster.rackOf(host))) n++;
        return n;
    }

    private void inject() {
        if (sim.now() >= end) return;
        if (!quiet) {
            int draw = rnd.nextInt(totalWeight);
            Fault f = null;
            for (Fault k : drawable) {
                draw -= mix.weights().get(k);
                if (draw < 0) { f = k; break; }
            }
            apply(f);
        }
        long gap = (long) (-StrictMath.log(1 - rnd.nextDouble()) * MEAN_GAP_NANOS);
        sim.at(Math.max(1, gap), null, Simulation.Kind.FAULT, 1, this::inject);
    }

    // ---------------------------------------------------------------- the faults

    private void apply(Fault f) {
        switch (f) {
            case CRASH -> downOne(f, false);
            case POWER_LOSS -> downOne(f, true);
            case RACK_POWER_LOSS -> rackPowerLoss();
            case CLUSTER_POWER_LOSS -> clusterPowerLoss();
            case HOST_LOSS -> hostLoss();
            case NEW_HOST -> newHost();
            case MASTER_CRASH -> masterCrash();
            case GATEWAY_CRASH -> gatewayCrash();
            case PAUSE -> pause();
            case DISK_STALL -> withDisk(f, (h, d) -> {
                long nanos = between(1_000_000_000L, MAX_STALL_NANOS);
                h.stallDisk(d, nanos);
                return (nanos / 1_000_000) + " ms";
            });
            case SLOW_DISK -> withDisk(f, (h, d) -> {
                int factor = 5 + rnd.nextInt(46);
                h.slowDisk(d, factor);
                sim.at(between(1_000_000_000L, MAX_EPISODE_NANOS), null, Simulation.Kind.FAULT, 5, () -> h.slowDisk(d, 1));
                return factor + "× slower";
            });
            case READ_ERROR -> withDisk(f, (h, d) -> {
                int n = 1 + rnd.nextInt(3);
                h.failReads(d, n);
                sickDisks.add(h.name());
                return "next " + n + " reads fail";
            });
            case BIT_FLIP -> bitFlip();
            case MISDIRECTED_WRITE -> withDisk(f, (h, d) -> {
                h.misdirectWrites(d, 1);
                sickDisks.add(h.name());
                return "next write lands a sector off";
            });
            case FSYNC_FAIL -> withDisk(f, (h, d) -> {
                h.failSyncs(d, 1);
                sickDisks.add(h.name());
                return "next fsync fails";
            });
            case DISK_FULL -> withDisk(f, (h, d) -> {
                long used = h.diskOrNull(d) == null ? 0 : h.diskOrNull(d).usedBytes();
                h.setDiskCapacity(d, used + rnd.nextLong(1 << 20));
                sim.at(between(1_000_000_000L, MAX_EPISODE_NANOS), null, Simulation.Kind.FAULT, 6, () -> h.setDiskCapacity(d, Long.MAX_VALUE));
                return "full at " + used + " bytes";
            });
            case DISK_DEATH -> diskDeath();
            case MESSAGE_LOSS -> netEpisode(f, () -> net.setRates(1_000 + rnd.nextLong(20_000), 0, 0), "messages lost");
            case DELAY -> netEpisode(f, () -> net.setRates(0, 10_000 + rnd.nextLong(50_000), 0), "delay spikes");
            case DUPLICATE -> netEpisode(f, () -> net.setRates(0, 0, 5_000 + rnd.nextLong(20_000)), "duplicates");
            case PARTITION -> partition();
            case CONNECTION_RESET -> {
                if (net.resetOne(rnd.nextInt())) history.record(sim.now(), f, "network", "a connection reset");
            }
            case CLOCK_STEP -> {
                List<SimHost> all = sim.hosts();
                SimHost h = all.get(rnd.nextInt(all.size()));
                long millis = rnd.nextLong(-MAX_STEP_MILLIS, MAX_STEP_MILLIS + 1);
                h.stepWallClock(millis);
                history.record(sim.now(), f, h.name(), "wall clock " + (millis >= 0 ? "+" : "") + millis + " ms");
            }
            default -> throw new IllegalStateException("not drawable: " + f);
        }
    }

    private int down() {
        int n = 0;
        for (SimHost h : cluster.chunkservers()) if (!h.isUp() && !h.isLost()) n++;
        return n;
    }

    private List<SimHost> upChunkservers() {
        List<SimHost> out = new ArrayList<>();
        for (SimHost h : cluster.chunkservers()) if (h.isUp()) out.add(h);
        return out;
    }

    private void downOne(Fault f, boolean power) {
        List<SimHost> up = upChunkservers();
        if (up.isEmpty() || down() >= MAX_DOWN) return;
        SimHost h = up.get(rnd.nextInt(up.size()));
        if (power) h.powerLoss(); else h.crash();
        history.record(sim.now(), f, h.name(), power ? "power lost" : "process killed");
        restartLater(h);
    }

    private void restartLater(SimHost h) {
        long downtime = between(MIN_DOWNTIME_NANOS, MAX_DOWNTIME_NANOS);
        sim.at(downtime, null, Simulation.Kind.FAULT, h.index(), () -> { if (!h.isUp() && !h.isLost()) h.start(); });
    }

    private void rackPowerLoss() {
        if (down() > 0) return;
        String rack = "rack" + rnd.nextInt(cluster.racks());
        List<SimHost> hit = new ArrayList<>();
        for (SimHost h : upChunkservers()) if (cluster.rackOf(h).equals(rack)) hit.add(h);
        if (hit.isEmpty() || hit.size() > MAX_DOWN) return;
        for (SimHost h : hit) {
            h.powerLoss();
            restartLater(h);
        }
        history.record(sim.now(), Fault.RACK_POWER_LOSS, rack, hit.size() + " chunkservers");
    }

    private void clusterPowerLoss() {
        if (clusterPowerLosses >= MAX_CLUSTER_POWER_LOSSES) return;
        clusterPowerLosses++;
        List<SimHost> hit = new ArrayList<>(cluster.masters());
        for (SimHost h : cluster.chunkservers()) if (h.isUp()) hit.add(h);
        if (cluster.gateway() != null && cluster.gateway().isUp()) hit.add(cluster.gateway());
        for (SimHost h : hit) h.powerLoss();
        long downtime = between(MIN_DOWNTIME_NANOS, 5_000_000_000L);
        sim.at(downtime, null, Simulation.Kind.FAULT, 7, () -> {
            for (SimHost h : hit) if (!h.isUp() && !h.isLost()) h.start();
        });
        history.record(sim.now(), Fault.CLUSTER_POWER_LOSS, "cluster", hit.size() + " hosts");
    }

    private void hostLoss() {
        if (hostsLost >= MAX_HOSTS_LOST + newHosts) return;
        List<SimHost> candidates = new ArrayList<>();
        for (SimHost h : cluster.chunkservers()) if (!h.isLost()) candidates.add(h);
        if (candidates.size() <= SimCluster.MIN_LIVE_CHUNKSERVERS) return;
        SimHost h = candidates.get(rnd.nextInt(candidates.size()));
        List<Long> ids = new ArrayList<>();
        for (String d : h.diskNames()) ids.addAll(GroundTruth.chunkIds(h, d));
        losses.beforeDestroying(sim.now(), h, null, ids, "host-loss");
        for (long id : ids) history.destroyed(sim.now(), id, h.name());
        h.destroy();
        hostsLost++;
        history.record(sim.now(), Fault.HOST_LOSS, h.name(), "lost for good with its disks");
    }

    private void newHost() {
        if (newHosts >= MAX_NEW_HOSTS) return;
        newHosts++;
        SimHost h = cluster.addChunkserver();
        if (mix.has(Fault.TORN_WRITES)) h.setTornWrites(true);
        history.record(sim.now(), Fault.NEW_HOST, h.name(), "joined empty");
    }

    /** The NFS gateway (if the run has one) is killed or loses power, and restarts after a downtime. */
    private void gatewayCrash() {
        SimHost g = cluster.gateway();
        if (g == null || !g.isUp()) return;
        boolean power = rnd.nextBoolean();
        if (power) g.powerLoss(); else g.crash();
        restartLater(g);
        history.record(sim.now(), Fault.GATEWAY_CRASH, g.name(), power ? "power lost" : "process killed");
    }

    private void masterCrash() {
        if (cluster.raft() != null) {
            groupMasterFault();
            return;
        }
        SimHost m = cluster.master();
        if (!m.isUp()) return;
        boolean power = rnd.nextBoolean();
        if (power) m.powerLoss(); else m.crash();
        long downtime = between(MIN_DOWNTIME_NANOS, 5_000_000_000L);
        sim.at(downtime, null, Simulation.Kind.FAULT, 8, () -> { if (!m.isUp()) m.start(); });
        history.record(sim.now(), Fault.MASTER_CRASH, m.name(), power ? "power lost" : "process killed");
    }

    /**
     * A fault on a master group: most often on the leader of the moment (its crash or power loss, or its
     * isolation from the other masters, both ways or one way, for up to an episode), else a crash of any master.
     */
    private void groupMasterFault() {
        dev.cairn.sim.runtime.SimRaft raft = cluster.raft();
        SimHost leader = raft.leader();
        int dice = rnd.nextInt(10);
        if (leader != null && leader.isUp() && dice < 3) {
            boolean both = rnd.nextBoolean();
            for (SimHost m : cluster.masters()) if (m != leader) net.partition(leader, m, both);
            long nanos = between(1_000_000_000L, MAX_EPISODE_NANOS);
            sim.at(nanos, null, Simulation.Kind.FAULT, 10, net::healPartitions);
            history.record(sim.now(), Fault.MASTER_CRASH, leader.name(), "leader cut off from the other masters " + (both ? "both ways" : "one way")
                    + " for " + nanos / 1_000_000 + " ms (term " + raft.term() + ")");
            return;
        }
        SimHost m = leader != null && leader.isUp() && dice < 8 ? leader : cluster.masters().get(rnd.nextInt(cluster.masters().size()));
        if (!m.isUp()) return;
        if (dice == 9 && othersUp(m)) {
            // its disk replaced: it comes back empty and catches up from the others (by a snapshot once the log is purged);
            // only while the other masters are up, so that a majority's disks still hold the log
            m.wipeStore();
            raft.storeWiped(m.name());
            long downtime = between(MIN_DOWNTIME_NANOS, 5_000_000_000L);
            sim.at(downtime, null, Simulation.Kind.FAULT, 8, () -> { if (!m.isUp() && !m.isLost()) m.start(); });
            history.record(sim.now(), Fault.MASTER_CRASH, m.name(), (m == leader ? "the leader (term " + raft.term() + "): " : "")
                    + "store wiped (disk replaced), back empty in " + downtime / 1_000_000 + " ms");
            return;
        }
        boolean power = rnd.nextBoolean();
        if (power) m.powerLoss(); else m.crash();
        long downtime = between(MIN_DOWNTIME_NANOS, 5_000_000_000L);
        sim.at(downtime, null, Simulation.Kind.FAULT, 8, () -> { if (!m.isUp() && !m.isLost()) m.start(); });
        history.record(sim.now(), Fault.MASTER_CRASH, m.name(), (m == leader ? "the leader (term " + raft.term() + "): " : "")
                + (power ? "power lost" : "process killed"));
    }

    private boolean othersUp(SimHost m) {
        for (SimHost o : cluster.masters()) if (o != m && (!o.isUp() || o.isLost())) return false;
        return true;
    }

    /** Longest pause: past the 30 s write window, so a writer stopped mid-lease wakes to an expired one. */
    static final long MAX_PAUSE_NANOS = 45_000_000_000L;

    private void pause() {
        List<SimHost> candidates = new ArrayList<>(upChunkservers());
        for (SimHost m : cluster.masters()) if (m.isUp()) candidates.add(m);
        candidates.add(cluster.clientHost());
        if (cluster.gateway() != null) candidates.add(cluster.gateway());
        SimHost h = candidates.get(rnd.nextInt(candidates.size()));
        if (!h.isUp() || h.isPaused()) return;
        // over by the end of the faults, like every transient fault (the read-back after them must find it running)
        long nanos = Math.min(between(1_000_000_000L, MAX_PAUSE_NANOS), end - sim.now());
        if (nanos < 1_000_000_000L) return;
        h.pause(sim.now() + nanos);
        history.record(sim.now(), Fault.PAUSE, h.name(), "process stopped for " + nanos / 1_000_000 + " ms");
    }

    private interface DiskFault { String apply(SimHost h, String disk); }

    /** Applies a fault to a random disk of a random live chunkserver. */
    private void withDisk(Fault f, DiskFault fault) {
        List<SimHost> up = upChunkservers();
        if (up.isEmpty()) return;
        SimHost h = up.get(rnd.nextInt(up.size()));
        List<String> disks = h.diskNames();
        if (disks.isEmpty()) return;
        String d = disks.get(rnd.nextInt(disks.size()));
        if (h.diskOrNull(d).isDead()) return;
        history.record(sim.now(), f, h.name() + "/" + d, fault.apply(h, d));
    }

    private void bitFlip() {
        List<SimHost> hosts = new ArrayList<>();
        for (SimHost h : cluster.chunkservers()) if (!h.isLost()) hosts.add(h);
        SimHost h = hosts.get(rnd.nextInt(hosts.size()));
        List<String> disks = h.diskNames();
        if (disks.isEmpty()) return;
        String d = disks.get(rnd.nextInt(disks.size()));
        SimDisk disk = h.diskOrNull(d);
        List<String> files = new ArrayList<>();
        for (String file : disk.files()) if (ChunkFormat.chunkIdOf(file) >= 0) files.add(file);
        if (files.isEmpty() || disk.isDead()) return;
        String file = files.get(rnd.nextInt(files.size()));
        byte[] bytes = disk.peek(file);
        if (bytes.length <= ChunkFormat.DATA_OFFSET) return;
        long offset = ChunkFormat.DATA_OFFSET + rnd.nextLong(bytes.length - ChunkFormat.DATA_OFFSET);
        losses.beforeDestroying(sim.now(), h, d, List.of(ChunkFormat.chunkIdOf(file)), "bit-flip");
        h.flipBit(d, file, offset, rnd.nextInt(8));
        history.destroyed(sim.now(), ChunkFormat.chunkIdOf(file), h.name());
        history.record(sim.now(), Fault.BIT_FLIP, h.name() + "/" + d, file + " byte " + offset);
    }

    private void diskDeath() {
        if (diskDeaths >= MAX_DISK_DEATHS) return;
        List<SimHost> hosts = new ArrayList<>();
        for (SimHost h : cluster.chunkservers()) if (!h.isLost() && h.diskNames().size() > 1) hosts.add(h);
        if (hosts.isEmpty()) return;
        SimHost h = hosts.get(rnd.nextInt(hosts.size()));
        List<String> disks = h.diskNames();
        String d = disks.get(rnd.nextInt(disks.size()));
        for (String other : disks) if (!other.equals(d) && h.diskOrNull(other).isDead()) return; // keep one disk per host alive
        diskDeaths++;
        List<Long> ids = GroundTruth.chunkIds(h, d);
        losses.beforeDestroying(sim.now(), h, d, ids, "disk-death");
        for (long id : ids) history.destroyed(sim.now(), id, h.name());
        h.killDisk(d);
        history.record(sim.now(), Fault.DISK_DEATH, h.name() + "/" + d, "dead for good");
    }

    private void netEpisode(Fault f, Runnable set, String what) {
        set.run();
        long nanos = between(1_000_000_000L, MAX_EPISODE_NANOS);
        sim.at(nanos, null, Simulation.Kind.FAULT, 9, () -> net.setRates(0, 0, 0));
        history.record(sim.now(), f, "network", what + " for " + nanos / 1_000_000 + " ms");
    }

    private void partition() {
        List<SimHost> all = new ArrayList<>();
        for (SimHost h : sim.hosts()) if (!h.isLost()) all.add(h);
        SimHost a = all.get(rnd.nextInt(all.size()));
        SimHost b = all.get(rnd.nextInt(all.size()));
        if (a == b) return;
        boolean both = rnd.nextBoolean();
        net.partition(a, b, both);
        long nanos = between(1_000_000_000L, MAX_EPISODE_NANOS);
        sim.at(nanos, null, Simulation.Kind.FAULT, 10, net::healPartitions);
        history.record(sim.now(), Fault.PARTITION, a.name() + (both ? "<->" : "->") + b.name(), "for " + nanos / 1_000_000 + " ms");
    }

    // ---------------------------------------------------------------- healing

    /** Ends transient faults: network rates and partitions, disk slowness, stalls and capacity; downed hosts restart. */
    private void healTransient() {
        net.setRates(0, 0, 0);
        net.healPartitions();
        for (SimHost h : sim.hosts()) {
            if (h.isLost()) continue;
            h.healDisks();
            if (!h.isUp()) h.start();
        }
    }

    /**
     * Faults are over: heal everything transient, and restart the chunkservers whose disks saw read
     * errors, failed fsyncs or misdirected writes (a chunkserver keeps such a disk failed until it
     * restarts: the operator's part).
     */
    void healAll() {
        quiet = true;
        healTransient();
        for (SimHost h : cluster.chunkservers()) {
            if (sickDisks.contains(h.name()) && h.isUp()) {
                h.crash();
                h.start();
            }
        }
    }
}
