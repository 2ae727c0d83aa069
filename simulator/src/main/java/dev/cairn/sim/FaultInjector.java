package dev.cairn.sim;

import dev.cairn.sim.SimOptions.Fault;
import dev.cairn.sim.runtime.SimHost;
import dev.cairn.sim.runtime.Simulation;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;

/**
 * Injects the enabled faults on chunkservers at random moments until {@code end}, never taking down more
 * than {@link #MAX_DOWN} at once, and restarts every downed host at the end so the run can be judged.
 */
final class FaultInjector {
    static final int MAX_DOWN = 2;
    static final long MEAN_GAP_NANOS = 2_000_000_000L;
    static final long MIN_DOWNTIME_NANOS = 200_000_000L;
    static final long MAX_DOWNTIME_NANOS = 8_000_000_000L;

    private final Simulation sim;
    private final List<SimHost> targets;
    private final List<Fault> kinds;
    private final long end;
    private int injected;

    FaultInjector(Simulation sim, List<SimHost> targets, Set<Fault> kinds, long end) {
        this.sim = sim;
        this.targets = targets;
        this.kinds = new ArrayList<>(kinds);
        this.end = end;
    }

    int injected() { return injected; }

    void start(long firstAt) {
        if (!kinds.isEmpty()) sim.at(firstAt, null, Simulation.Kind.FAULT, 0, this::inject);
    }

    private void inject() {
        if (sim.now() >= end) return;
        int down = 0;
        for (SimHost h : targets) if (!h.isUp()) down++;
        SimHost h = targets.get(sim.random().nextInt(targets.size()));
        if (h.isUp() && down < MAX_DOWN) {
            Fault f = kinds.get(sim.random().nextInt(kinds.size()));
            injected++;
            if (f == Fault.CRASH) h.crash(); else h.powerLoss();
            long downtime = MIN_DOWNTIME_NANOS + sim.random().nextLong(MAX_DOWNTIME_NANOS - MIN_DOWNTIME_NANOS);
            sim.at(downtime, null, Simulation.Kind.FAULT, h.index(), () -> { if (!h.isUp()) h.start(); });
        }
        long gap = (long) (-StrictMath.log(1 - sim.random().nextDouble()) * MEAN_GAP_NANOS);
        sim.at(Math.max(1, gap), null, Simulation.Kind.FAULT, 1, this::inject);
    }

    /** Faults are over: bring everything back. */
    void healAll() {
        for (SimHost h : targets) if (!h.isUp()) h.start();
    }
}
