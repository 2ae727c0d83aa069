package dev.cairn.sim;

import dev.cairn.nfs.client.Nfs4Client;
import dev.cairn.sim.SimOptions.Fault;
import dev.cairn.sim.runtime.SimHost;
import dev.cairn.sim.runtime.SimNfsChannel;
import dev.cairn.sim.runtime.SimWorld;
import dev.cairn.sim.runtime.Simulation;
import dev.cairn.sim.workload.NfsLane;
import dev.cairn.sim.workload.Oracle;
import dev.cairn.sim.workload.Workload;
import java.util.List;
import java.util.function.Consumer;

/**
 * One seeded run: draw the seed's fault mix, start the cluster, run the workload with faults, stop the
 * faults and bring every host back, then judge: every acknowledged file reads back (or its loss is
 * excused by the fault history), a fresh file of every class can be written and read (liveness), and
 * within a bounded time the disks' ground truth shows every chunk at exactly its goal, no garbage, and
 * usage balanced ({@link Auditor}).
 */
public final class SimRun {
    /** When the workload starts (chunkservers have registered by then). */
    static final long WORKLOAD_START_NANOS = 1_000_000_000L;
    /** The name prefix under which a chunkserver builds a planner copy beside an older one (its ChunkStore's, package-private there). */
    static final String INCOMING_PREFIX = "incoming-";
    static final long FIRST_FAULT_NANOS = 2_000_000_000L;
    /** Quiet time after the faults stop, before the final check. */
    static final long SETTLE_NANOS = 10_000_000_000L;
    /** The read-back and the liveness probe must finish within this much virtual time. */
    static final long VERIFY_LIMIT_NANOS = 300_000_000_000L;
    /** After the probe, the ground truth must converge (goal, no garbage, balance) within this. */
    static final long CONVERGENCE_LIMIT_NANOS = 200_000_000_000L;
    static final long AUDIT_EVERY_NANOS = 1_000_000_000L;
    /** Every chunkserver advertises this much (small enough that balance is measurable). */
    static final long CAPACITY_BYTES = 1L << 30;
    static final List<String> DISKS = List.of("disk0", "disk1");
    static final int RACKS = 3;
    /** Disk labels of the first chunkservers (cs1, cs3 and cs5 carry ssd; others, and hosts that join later, none). */
    static final List<String> LABELS = List.of("ssd", "", "ssd", "", "ssd");

    private SimRun() {}

    public static SimResult run(SimOptions o) { return run(o, null, null); }

    public static SimResult run(SimOptions o, Consumer<String> trace) { return run(o, trace, null); }

    /**
     * Runs a seed; {@code trace} (if not null) receives one line per executed event, {@code timeline}
     * (if not null) the run's faults, client operations and verdicts for the HTML page.
     */
    public static SimResult run(SimOptions o, Consumer<String> trace, Timeline timeline) {
        long wallStart = System.nanoTime();
        Simulation sim = new Simulation(o.seed());
        if (trace != null) sim.traceTo(trace);
        sim.plant(o.plants());
        FaultInjector.Mix mix = FaultInjector.Mix.draw(o.faults(), o.swarm(), sim.random().split());
        SimWorld world = new SimWorld(sim, o.verbose());
        SimCluster cluster = new SimCluster(world, o.chunkservers(), DISKS, CAPACITY_BYTES, LABELS, RACKS, mix.has(Fault.CLOCK_SKEW), o.masters());
        FaultHistory history = new FaultHistory();
        Oracle oracle = new Oracle();
        Holdings holdings = new Holdings();
        LossModel losses = new LossModel(cluster, oracle, holdings);
        Witness witness = new Witness(sim, cluster, history, losses, holdings);
        sim.onDamage((h, disk, file) -> {
            long id = chunkOfCopy(file);
            if (id < 0) return;
            losses.beforeDestroying(sim.now(), h, disk, List.of(id), "misdirected-write");
            losses.misdirected(sim.now(), h, disk, id);
            history.destroyed(sim.now(), id, h.name());
        });
        Auditor auditor = new Auditor(cluster, losses, oracle, holdings);
        BadCopyNotices notices = new BadCopyNotices(cluster);
        DurableStateChecks durable = new DurableStateChecks(sim, cluster, history, losses, oracle, holdings, notices);
        sim.onTear(durable::powerLoss);
        sim.onDelete((h, disk, file) -> {
            durable.deleting(h, disk, file);
            long id = chunkOfCopy(file);
            if (id >= 0) losses.copyDeleted(h.name(), disk.name(), id);
        });
        sim.onWrite(durable::writing);
        long end = WORKLOAD_START_NANOS + o.durationNanos();
        boolean nfs = o.workload() == Workload.Profile.SWEEP;
        if (nfs) cluster.addGateway();
        FaultInjector faults = new FaultInjector(sim, cluster, mix, history, losses, end);
        sim.onDeliver((to, m) -> {
            notices.delivered(sim.now(), to, m);
            faults.delivered(to, m);
        });
        cluster.startAll();
        faults.setUp();
        SimHost clientHost = cluster.clientHost();
        Workload[] workload = new Workload[1];
        AdminWorkload[] admin = new AdminWorkload[1];
        NfsLane[] lane = new NfsLane[1];
        boolean[] verified = {false};
        Auditor.Report[] lastAudit = {null};
        sim.at(WORKLOAD_START_NANOS, clientHost, Simulation.Kind.CHECK, 0, () -> {
            workload[0] = new Workload(sim, cluster.client(), clientHost.env().scheduler(), oracle, sim.random().split(), end, o.workload());
            workload[0].lossJudge(auditor::excuse);
            workload[0].ackObserver(witness::acknowledged);
            if (timeline != null) workload[0].observe(timeline::operation);
            workload[0].start(() -> { });
            if (o.workload() == Workload.Profile.SWEEP) {
                admin[0] = new AdminWorkload(sim, cluster, cluster.client(), clientHost.env().scheduler(), oracle, sim.random().split(), end, workload[0].stats());
                admin[0].start();
            }
            if (nfs) {
                Nfs4Client nfsClient = new Nfs4Client(new SimNfsChannel(clientHost, cluster.gateway()), 0, 0, "sweep-nfs-client");
                lane[0] = new NfsLane(sim, nfsClient, clientHost.env().scheduler(), oracle, sim.random().split(), end, workload[0].stats(),
                        witness::acknowledged, timeline != null ? timeline::operation : (s, e, op, path, err) -> { });
                lane[0].start(cluster.client());
            }
        });
        faults.start(FIRST_FAULT_NANOS);
        sim.at(end, null, Simulation.Kind.FAULT, 2, faults::healAll);
        sim.at(end + SETTLE_NANOS, clientHost, Simulation.Kind.CHECK, 1, () -> finishAdmin(admin[0], () -> finishLane(sim, lane[0], end, () -> workload[0].verifyAll(() -> workload[0].probe(() -> {
            verified[0] = true;
            awaitConvergence(sim, cluster, auditor, lastAudit, sim.now() + CONVERGENCE_LIMIT_NANOS);
        })))));
        sim.runUntil(end + SETTLE_NANOS + NFS_LANE_LIMIT_NANOS + VERIFY_LIMIT_NANOS + CONVERGENCE_LIMIT_NANOS + REPLICA_CATCH_UP_NANOS);
        if (!verified[0]) sim.violation("liveness", "the final read-back did not finish within " + VERIFY_LIMIT_NANOS / 1_000_000_000L + "s of virtual time");
        if (timeline != null) timeline.finish(sim, history, cluster);
        Auditor.Report a = lastAudit[0];
        if (workload[0] != null) workload[0].stats().aimedAtArrivals = faults.arrivalsFired();
        return new SimResult(o.seed(), o, mix.toString(), sim.trace().hex(), sim.trace().events(), sim.now(), System.nanoTime() - wallStart,
                history.counts(), workload[0] == null ? new Workload.Stats() : workload[0].stats(),
                a == null ? 0 : a.chunksChecked(), sim.violations(), workload[0] == null ? List.of() : List.copyOf(workload[0].excuses()), world.recentLog(),
                cluster.raft() == null ? 0 : cluster.raft().elections(), cluster.raft() == null ? 0 : cluster.raft().installs());
    }

    /** How long after convergence every master replica may take to apply the last committed entries. */
    static final long REPLICA_CATCH_UP_NANOS = 5_000_000_000L;

    /**
     * With a master group: once every up replica has applied the whole committed log (or the catch-up time is
     * over), each must hold exactly the committed state ({@link CommittedState#checkReplicas}).
     */
    private static void awaitReplicas(Simulation sim, SimCluster cluster, long deadline) {
        long committed = cluster.raft().committed().size();
        boolean behind = false;
        for (SimHost h : cluster.masters()) {
            if (h.isUp() && h.node() instanceof dev.cairn.master.MasterReplica r && r.appliedIndex() < committed) behind = true;
        }
        if (!behind || sim.now() - deadline >= 0) {
            cluster.committed().checkReplicas(cluster.masters(), committed, sim);
            sim.stop();
        } else {
            cluster.clientHost().env().scheduler().schedule(100_000_000L, () -> awaitReplicas(sim, cluster, deadline));
        }
    }

    /**
     * How long after the faults end the NFS lane may still be finishing its last operation: a hard mount retries
     * until {@link NfsLane#HARD_MOUNT_NANOS} after them, so past that a call is unanswered with every host up.
     */
    static final long NFS_LANE_LIMIT_NANOS = NfsLane.HARD_MOUNT_NANOS + 30_000_000_000L;

    /** Waits for the NFS lane's last operation (if the run has a lane); one that never ends is a liveness violation (a hung request). */
    private static void finishLane(Simulation sim, NfsLane lane, long end, Runnable then) {
        if (lane == null || lane.quiet()) { then.run(); return; }
        if (sim.now() - (end + NFS_LANE_LIMIT_NANOS) >= 0) {
            sim.violation("liveness", "the NFS lane's " + lane.current() + " is still unanswered " + (sim.now() - end) / 1_000_000_000L
                    + " s after the faults ended, with every host up");
            then.run();
            return;
        }
        sim.at(1_000_000_000L, null, Simulation.Kind.CHECK, 3, () -> finishLane(sim, lane, end, then));
    }

    /** The operator's drains are taken back before the final checks (which expect every server in service). */
    private static void finishAdmin(AdminWorkload admin, Runnable then) {
        if (admin == null) then.run(); else admin.finish(then);
    }

    /**
     * Convergence: with every host back, the disks must show every chunk at exactly its goal, no garbage
     * and usage balanced, on the planner's own initiative. Audits the ground truth once a second.
     */
    private static void awaitConvergence(Simulation sim, SimCluster cluster, Auditor auditor, Auditor.Report[] last, long deadline) {
        Auditor.Report r = auditor.audit(true);
        last[0] = r;
        if (r.clean()) {
            if (cluster.committed() == null) sim.stop();
            else awaitReplicas(sim, cluster, sim.now() + REPLICA_CATCH_UP_NANOS);
        } else if (sim.now() - deadline >= 0) {
            for (String line : r.lines()) {
                String kind = line.substring(0, line.indexOf(':'));
                sim.violation(kind, "after " + CONVERGENCE_LIMIT_NANOS / 1_000_000_000L + "s of quiet: " + line.substring(line.indexOf(':') + 2));
            }
            sim.stop();
        } else {
            cluster.clientHost().env().scheduler().schedule(AUDIT_EVERY_NANOS, () -> awaitConvergence(sim, cluster, auditor, last, deadline));
        }
    }

    /**
     * The chunk a copy's file holds, or -1: a copy being made is written under its incoming name and renamed into place
     * damage and all (seed 1990: a rebuilt part written a sector off, unrecorded, made its chunk's loss look unexcused).
     */
    static long chunkOfCopy(String file) {
        return dev.cairn.core.chunk.ChunkFormat.chunkIdOf(file.startsWith(INCOMING_PREFIX) ? file.substring(INCOMING_PREFIX.length()) : file);
    }

}
