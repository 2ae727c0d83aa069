package dev.cairn.sim;

import dev.cairn.sim.runtime.SimHost;
import dev.cairn.sim.runtime.SimWorld;
import dev.cairn.sim.runtime.Simulation;
import dev.cairn.sim.workload.Oracle;
import dev.cairn.sim.workload.Workload;
import java.util.function.Consumer;

/**
 * One seeded run: start the cluster, run the workload with faults, stop the faults and restart every
 * host, wait for the cluster to settle, then read back everything that was acknowledged.
 */
public final class SimRun {
    /** When the workload starts (chunkservers have registered by then). */
    static final long WORKLOAD_START_NANOS = 1_000_000_000L;
    static final long FIRST_FAULT_NANOS = 2_000_000_000L;
    /** Quiet time after the faults stop, before the final check. */
    static final long SETTLE_NANOS = 10_000_000_000L;
    /** The final check must finish within this much virtual time. */
    static final long VERIFY_LIMIT_NANOS = 300_000_000_000L;
    /** After the read-back, every readable chunk must be back at its goal (and no extras left) within this. */
    static final long REDUNDANCY_LIMIT_NANOS = 200_000_000_000L;

    private SimRun() {}

    public static SimResult run(SimOptions o) { return run(o, null); }

    /** Runs a seed; {@code trace} (if not null) receives one line per executed event. */
    public static SimResult run(SimOptions o, Consumer<String> trace) {
        long wallStart = System.nanoTime();
        Simulation sim = new Simulation(o.seed());
        if (trace != null) sim.traceTo(trace);
        SimWorld world = new SimWorld(sim, o.verbose());
        SimCluster cluster = new SimCluster(world, o.chunkservers());
        Oracle oracle = new Oracle();
        long end = WORKLOAD_START_NANOS + o.durationNanos();
        FaultInjector faults = new FaultInjector(sim, cluster.chunkservers(), o.faults(), end);
        cluster.startAll();
        SimHost clientHost = cluster.clientHost();
        Workload[] workload = new Workload[1];
        boolean[] verified = {false};
        sim.at(WORKLOAD_START_NANOS, clientHost, Simulation.Kind.CHECK, 0, () -> {
            workload[0] = new Workload(sim, cluster.client(), clientHost.env().scheduler(), oracle, sim.random().split(), end);
            workload[0].start(() -> { });
        });
        faults.start(FIRST_FAULT_NANOS);
        sim.at(end, null, Simulation.Kind.FAULT, 2, faults::healAll);
        sim.at(end + SETTLE_NANOS, clientHost, Simulation.Kind.CHECK, 1, () -> workload[0].verifyAll(() -> {
            verified[0] = true;
            awaitRedundancy(sim, cluster, sim.now() + REDUNDANCY_LIMIT_NANOS);
        }));
        sim.runUntil(end + SETTLE_NANOS + VERIFY_LIMIT_NANOS);
        if (!verified[0]) sim.violation("the final read-back did not finish within " + VERIFY_LIMIT_NANOS / 1_000_000_000L + "s of virtual time");
        return new SimResult(o.seed(), sim.trace().hex(), sim.trace().events(), sim.now(), System.nanoTime() - wallStart,
                faults.injected(), workload[0] == null ? new Workload.Stats() : workload[0].stats(),
                sim.violations(), world.recentLog());
    }

    /**
     * The repair invariant: with every host back, the planner brings every chunk that still has a readable
     * set of copies to its goal and deletes the extras, on its own. Polls the master once a second.
     */
    private static void awaitRedundancy(Simulation sim, SimCluster cluster, long deadline) {
        cluster.client().status().onComplete((s, e) -> {
            boolean done = e == null && !s.grace() && s.underGoal() - s.lost() == 0 && s.overGoal() == 0 && s.moving() == 0;
            if (done) {
                sim.stop();
            } else if (sim.now() - deadline >= 0) {
                sim.violation("the cluster did not return to full redundancy within " + REDUNDANCY_LIMIT_NANOS / 1_000_000_000L + "s: "
                        + (e != null ? e.getMessage() : "under goal " + (s.underGoal() - s.lost()) + ", over goal " + s.overGoal() + ", moving " + s.moving()));
                sim.stop();
            } else {
                cluster.clientHost().env().scheduler().schedule(1_000_000_000L, () -> awaitRedundancy(sim, cluster, deadline));
            }
        });
    }
}
