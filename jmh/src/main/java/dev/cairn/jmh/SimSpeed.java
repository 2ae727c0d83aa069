package dev.cairn.jmh;

import dev.cairn.sim.SimOptions;
import dev.cairn.sim.SimResult;
import dev.cairn.sim.SimRun;
import dev.cairn.sim.workload.Workload;
import java.util.EnumSet;
import java.util.Locale;

/**
 * {@code ./cairn bench sim}: how fast the simulator runs on this machine. Fault-free runs of a master, five
 * chunkservers and a client per workload profile (steady: a small file every 100 ms; sweep: the heavy load
 * the sweeps use) report simulated seconds per wall second: {@link #WARMUPS} warm-up runs (the JIT), then
 * {@link #ITERATIONS} measured ones, of which the median and the best are printed (the machine is shared:
 * the median is the figure to quote, the best shows what the code does undisturbed). Then a short sweep
 * with the full fault catalog reports seeds per minute on one thread.
 *
 * <p>Arguments: {@code [SECONDS [SEEDS [PROFILE]]]}; PROFILE runs one workload only (for a profiler).
 */
public final class SimSpeed {
    /** Warm-up runs, then measured ones: after only two the JIT was still compiling and the measured runs kept speeding up. */
    static final int WARMUPS = 4, ITERATIONS = 5;

    private SimSpeed() {}

    public static void main(String[] args) {
        long seconds = args.length > 0 ? Long.parseLong(args[0]) : 600;
        int seeds = args.length > 1 ? Integer.parseInt(args[1]) : 20;
        String only = args.length > 2 ? args[2].toUpperCase(Locale.ROOT) : null; // one workload profile, e.g. steady
        System.out.printf(Locale.ROOT, "%-8s %10s %10s %10s %10s %12s %10s%n", "workload", "virtual s", "wall s", "median", "best", "events/s", "files");
        for (Workload.Profile p : Workload.Profile.values()) {
            if (only != null && !p.name().equals(only)) continue;
            SimOptions o = SimOptions.defaults(1).withFaults(EnumSet.noneOf(SimOptions.Fault.class)).withWorkload(p).withDuration(seconds * 1_000_000_000L);
            for (int i = 0; i < WARMUPS; i++) SimRun.run(o);
            SimResult[] runs = new SimResult[ITERATIONS];
            for (int i = 0; i < ITERATIONS; i++) runs[i] = SimRun.run(o);
            java.util.Arrays.sort(runs, java.util.Comparator.comparingLong(SimResult::wallNanos)); // same seed: same virtual time and events
            SimResult best = runs[0], median = runs[ITERATIONS / 2];
            double virtual = median.virtualNanos() / 1e9, wall = median.wallNanos() / 1e9;
            System.out.printf(Locale.ROOT, "%-8s %10.0f %10.2f %9.0f× %9.0f× %12.0f %10d%n", p.name().toLowerCase(Locale.ROOT), virtual, wall,
                    virtual / wall, virtual / (best.wallNanos() / 1e9), median.events() / wall, median.stats().commits);
        }
        long t0 = System.nanoTime();
        double virtual = 0;
        int failed = 0;
        for (int s = 1; s <= seeds; s++) {
            SimResult r = SimRun.run(SimOptions.defaults(s).withDuration(10_000_000_000L));
            virtual += r.virtualNanos() / 1e9;
            if (!r.passed()) failed++;
        }
        double wall = (System.nanoTime() - t0) / 1e9;
        System.out.printf(Locale.ROOT, "sweep: %d seeds (10 s of faults each, full catalog, one thread) in %.1f s: %.1f seeds/min, %.0f× real time, %d failed%n",
                seeds, wall, seeds / wall * 60, virtual / wall, failed);
    }
}
