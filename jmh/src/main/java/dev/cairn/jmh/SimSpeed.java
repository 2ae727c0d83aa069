package dev.cairn.jmh;

import dev.cairn.sim.SimOptions;
import dev.cairn.sim.SimResult;
import dev.cairn.sim.SimRun;
import dev.cairn.sim.workload.Workload;
import java.lang.management.CompilationMXBean;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.util.EnumSet;
import java.util.Locale;

/**
 * {@code ./cairn bench sim}: how fast the simulator runs on this machine. Fault-free runs of a master, five
 * chunkservers and a client per workload profile (steady: a small file every 100 ms; sweep: the heavy load
 * the sweeps use) report simulated seconds per wall second once the JIT has settled: warm-up runs for at
 * least {@link #WARMUP_NANOS} and until a run compiles less than {@link #SETTLED_JIT_SHARE} of its own time,
 * then {@link #ITERATIONS} measured ones, of which the median and the best are printed (the machine is
 * shared: the median is the figure to quote, the best shows what the code does undisturbed). The first run
 * of each profile is printed too; for the first profile it is cold, as a single replayed seed runs, where a
 * sweep (one JVM per job) runs at the settled speed. The "cpu" column is the median per CPU second of the
 * simulating thread instead of per wall second: on a shared machine a wall figure well below it means a
 * neighbour had the CPU, not that the code got slower. Then a short sweep with the full fault catalog
 * reports seeds per minute on one thread.
 *
 * <p>Arguments: {@code [SECONDS [SEEDS [PROFILE]]]}; PROFILE runs one workload only (for a profiler).
 */
public final class SimSpeed {
    /**
     * Warm-up, then measured runs. Four warm-up runs of the steady workload (under 2 s) left the JIT compiling
     * as much CPU time as the simulation took, on the machine's other core, and the settled code ran 1.4–1.5×
     * faster than after them; it took about 10 s to settle (JMH's default warm-up is 5 × 10 s).
     */
    static final long WARMUP_NANOS = 12_000_000_000L, MAX_WARMUP_NANOS = 60_000_000_000L;
    static final int MIN_WARMUPS = 2, ITERATIONS = 7;
    /** Settled: a run during which the JIT compiled for less than this share of the run's wall time. */
    static final double SETTLED_JIT_SHARE = 0.05;

    private SimSpeed() {}

    public static void main(String[] args) {
        long seconds = args.length > 0 ? Long.parseLong(args[0]) : 600;
        int seeds = args.length > 1 ? Integer.parseInt(args[1]) : 20;
        String only = args.length > 2 ? args[2].toUpperCase(Locale.ROOT) : null; // one workload profile, e.g. steady
        CompilationMXBean jit = ManagementFactory.getCompilationMXBean();
        ThreadMXBean threads = ManagementFactory.getThreadMXBean();
        System.out.printf(Locale.ROOT, "%-8s %10s %10s %10s %10s %10s %10s %12s %10s %8s%n",
                "workload", "virtual s", "wall s", "median", "best", "first", "cpu", "events/s", "files", "warm-up");
        for (Workload.Profile p : Workload.Profile.values()) {
            if (only != null && !p.name().equals(only)) continue;
            SimOptions o = SimOptions.defaults(1).withFaults(EnumSet.noneOf(SimOptions.Fault.class)).withWorkload(p).withDuration(seconds * 1_000_000_000L);
            SimResult first = SimRun.run(o);
            long warmStart = System.nanoTime();
            int warmups = 0;
            boolean settled = false;
            while (!settled || warmups < MIN_WARMUPS || System.nanoTime() - warmStart < WARMUP_NANOS) {
                if (System.nanoTime() - warmStart > MAX_WARMUP_NANOS) break; // a JIT that never settles: measure anyway
                long jit0 = jit.getTotalCompilationTime();
                SimResult r = SimRun.run(o);
                settled = (jit.getTotalCompilationTime() - jit0) * 1e6 < SETTLED_JIT_SHARE * r.wallNanos();
                warmups++;
            }
            double warmSeconds = (System.nanoTime() - warmStart) / 1e9;
            long jit0 = jit.getTotalCompilationTime();
            SimResult[] runs = new SimResult[ITERATIONS];
            long[] cpu = new long[ITERATIONS];
            for (int i = 0; i < ITERATIONS; i++) {
                long cpu0 = threads.getCurrentThreadCpuTime();
                runs[i] = SimRun.run(o);
                cpu[i] = threads.getCurrentThreadCpuTime() - cpu0;
            }
            long jitMs = jit.getTotalCompilationTime() - jit0;
            java.util.Arrays.sort(cpu);
            java.util.Arrays.sort(runs, java.util.Comparator.comparingLong(SimResult::wallNanos)); // same seed: same virtual time and events
            SimResult best = runs[0], median = runs[ITERATIONS / 2];
            double virtual = median.virtualNanos() / 1e9, wall = median.wallNanos() / 1e9;
            System.out.printf(Locale.ROOT, "%-8s %10.0f %10.2f %9.0f× %9.0f× %9.0f× %9.0f× %12.0f %10d %7.0fs%n", p.name().toLowerCase(Locale.ROOT), virtual, wall,
                    virtual / wall, virtual / (best.wallNanos() / 1e9), virtual / (first.wallNanos() / 1e9), virtual / (cpu[ITERATIONS / 2] / 1e9), median.events() / wall,
                    median.stats().commits, warmSeconds);
            if (jitMs * 1e6 > SETTLED_JIT_SHARE * ITERATIONS * median.wallNanos()) {
                System.out.printf(Locale.ROOT, "         (the JIT compiled for %d ms during the measured runs: not settled)%n", jitMs);
            }
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
