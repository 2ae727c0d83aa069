package dev.cairn.sim;

import dev.cairn.client.CairnClient;
import dev.cairn.core.env.Scheduler;
import dev.cairn.core.proto.StorageClass;
import dev.cairn.sim.runtime.SimDisk;
import dev.cairn.sim.runtime.SimHost;
import dev.cairn.sim.runtime.Simulation;
import dev.cairn.sim.workload.Oracle;
import dev.cairn.sim.workload.Workload;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.TreeSet;

/**
 * What an operator does while the cluster works, drawn per seed like the faults: drains a chunkserver and
 * takes the drain back, changes the class of files that hold data (more or fewer copies, another failure
 * domain, a disk label), and retires a drained server for good once its disks hold no chunk. The planner's
 * moves, tidying and repair then run under the faults, where their bugs bite: a copy dropped before its
 * replacement exists, a leaving copy counted, a drain that never empties a server.
 */
final class AdminWorkload {
    /** Mean gap between operator actions. */
    static final long MEAN_GAP_NANOS = 3_000_000_000L;
    /** Classes a replicated file may be moved to (its copies up or down, another domain, a label with overflow). */
    static final StorageClass[] REPLICATED_TARGETS = {
        StorageClass.replicated(2), StorageClass.replicated(3), StorageClass.parse("replicated(2,domain=rack)"),
        StorageClass.parse("replicated(2,disk=ssd,full=overflow)"),
    };
    /** A server is retired only while at least this many others remain (the widest class needs four). */
    static final int MIN_SERVERS_LEFT = 5;

    /** Which operator actions a seed draws, each on with probability one half. */
    enum Action { DRAIN, CLASS_CHANGE, RETIRE }

    private final Simulation sim;
    private final SimCluster cluster;
    private final CairnClient client;
    private final Scheduler scheduler;
    private final Oracle oracle;
    private final SplittableRandom rnd;
    private final long end;
    private final java.util.EnumSet<Action> mix = java.util.EnumSet.noneOf(Action.class);
    private final TreeSet<String> draining = new TreeSet<>();
    /**
     * Every server a drain was ever asked for: a drain request delivered again late (the network duplicates
     * messages) can put a server back into draining after its drain was taken back (sim seed 4542), so the end
     * takes back every drain ever asked for, not only the ones the workload thinks are in force.
     */
    private final TreeSet<String> everDrained = new TreeSet<>();
    private final Workload.Stats stats;
    private boolean stopped;

    AdminWorkload(Simulation sim, SimCluster cluster, CairnClient client, Scheduler scheduler, Oracle oracle, SplittableRandom rnd, long end,
                  Workload.Stats stats) {
        this.sim = sim;
        this.cluster = cluster;
        this.client = client;
        this.scheduler = scheduler;
        this.oracle = oracle;
        this.rnd = rnd;
        this.end = end;
        this.stats = stats;
        for (Action a : Action.values()) if (rnd.nextBoolean()) mix.add(a);
    }

    String mix() { return mix.isEmpty() ? "none" : mix.toString(); }

    void start() {
        if (!mix.isEmpty()) next();
    }

    private void next() {
        long gap = (long) (-StrictMath.log(1 - rnd.nextDouble()) * MEAN_GAP_NANOS);
        scheduler.schedule(Math.max(1, gap), () -> {
            if (stopped || sim.now() >= end) return;
            List<Action> on = new ArrayList<>(mix);
            switch (on.get(rnd.nextInt(on.size()))) {
                case DRAIN -> drainOrUndrain();
                case CLASS_CHANGE -> changeClass();
                case RETIRE -> retire();
            }
            next();
        });
    }

    /** Drains one server (one at a time), or takes the drain back. */
    private void drainOrUndrain() {
        if (!draining.isEmpty() && rnd.nextBoolean()) {
            String id = draining.first();
            client.drain(id, false).onComplete((v, e) -> { if (e == null) draining.remove(id); });
            stats.undrains++;
            return;
        }
        if (!draining.isEmpty()) return;
        List<SimHost> up = new ArrayList<>();
        for (SimHost h : cluster.chunkservers()) if (h.isUp()) up.add(h);
        if (up.size() < MIN_SERVERS_LEFT) return;
        String id = up.get(rnd.nextInt(up.size())).name();
        draining.add(id); // counted at once: the master may have taken it though the answer is lost
        everDrained.add(id);
        client.drain(id, true);
        stats.drains++;
    }

    /** Moves a committed replicated file (not being written) to another replicated class. */
    private void changeClass() {
        String path = oracle.pick(rnd.nextInt());
        if (path == null) return;
        client.lookup(path).onComplete((attr, e) -> {
            if (e != null || attr.storageClass().isEc() || !oracle.isCommitted(path)) return;
            StorageClass to = REPLICATED_TARGETS[rnd.nextInt(REPLICATED_TARGETS.length)];
            if (to.equals(attr.storageClass())) return;
            oracle.writing(path); // not picked for a write meanwhile (removes wait too)
            client.setClass(path, to).onComplete((a, e2) -> {
                oracle.written(path);
                if (e2 == null) stats.classChanges++;
            });
        });
    }

    /**
     * Retires a drained server for good once its disks (ground truth) hold no chunk file: a drain that left
     * a copy behind would lose it here, and the checkers count it as the planner's loss, not a fault's.
     */
    private void retire() {
        if (draining.isEmpty()) return;
        String id = draining.first();
        SimHost h = null;
        int others = 0;
        for (SimHost x : cluster.chunkservers()) {
            if (x.name().equals(id)) h = x;
            else if (!x.isLost()) others++;
        }
        if (h == null || h.isLost() || !h.isUp() || others < MIN_SERVERS_LEFT) return;
        for (SimDisk d : h.disks()) {
            for (String f : d.files()) if (dev.cairn.core.chunk.ChunkFormat.chunkIdOf(f) >= 0) return; // not empty yet
        }
        h.destroy();
        draining.remove(id);
        stats.retired++;
    }

    /** The faults are over: every drain is taken back (the final checks expect every server in service). */
    void finish(Runnable done) {
        stopped = true;
        undrainAll(new ArrayList<>(everDrained), 0, 1, done);
    }

    /** Tries each undrain up to this many times, a second apart (the master may be restarting). */
    static final int UNDRAIN_ATTEMPTS = 30;

    private void undrainAll(List<String> ids, int i, int attempt, Runnable done) {
        if (i == ids.size()) { done.run(); return; }
        client.drain(ids.get(i), false).onComplete((v, e) -> {
            // NOT_FOUND: the master knows neither the server (lost for good before it restarted) nor a drain mark for
            // it (the drain request never took): nothing to take back
            if (e != null && dev.cairn.core.proto.CairnException.statusOf(e) == dev.cairn.core.proto.Status.NOT_FOUND) e = null;
            if (e != null && attempt < UNDRAIN_ATTEMPTS) {
                scheduler.schedule(1_000_000_000L, () -> undrainAll(ids, i, attempt + 1, done));
                return;
            }
            if (e != null) sim.violation("liveness", "the drain of " + ids.get(i) + " could not be taken back in " + UNDRAIN_ATTEMPTS + " tries: " + e.getMessage());
            draining.remove(ids.get(i));
            undrainAll(ids, i + 1, 1, done);
        });
    }
}
