package dev.cairn.cli;

import dev.cairn.sim.SimOptions;
import dev.cairn.sim.SimOptions.Fault;
import dev.cairn.sim.SimResult;
import dev.cairn.sim.SimRun;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.stream.Collectors;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/** {@code cairn sim}: run one seed (replay) or sweep a range of seeds in the deterministic simulator. */
@Command(name = "sim", description = "Run the deterministic simulator: one seed (--seed) or a sweep (--seeds A..B).")
final class SimCommand implements Callable<Integer> {
    @Option(names = "--seed", description = "Run (or replay) this one seed.")
    Long seed;

    @Option(names = "--seeds", description = "Sweep a range, e.g. 1..100.")
    String seeds;

    @Option(names = "--duration", defaultValue = "60s", description = "Virtual time of workload and faults (default: ${DEFAULT-VALUE}).")
    String duration;

    @Option(names = "--faults", defaultValue = "crash,power-loss", split = ",",
            description = "Fault kinds: crash, power-loss, none (default: ${DEFAULT-VALUE}).")
    List<String> faults;

    @Option(names = "--chunkservers", defaultValue = "5", description = "Chunkserver hosts (default: ${DEFAULT-VALUE}).")
    int chunkservers;

    @Option(names = "--trace", description = "Write every executed event (time, host, kind, digest) to FILE (single seed).")
    Path trace;

    @Option(names = "--check-determinism", description = "Run the seed twice and fail, naming the first diverging event, if the two runs differ.")
    boolean checkDeterminism;

    @Option(names = "--verbose", description = "Print node logs with virtual time.")
    boolean verbose;

    @Option(names = "--jobs", defaultValue = "1", description = "Seeds run in parallel in a sweep (default: ${DEFAULT-VALUE}).")
    int jobs;

    @Override public Integer call() throws Exception {
        long nanos = Durations.parseNanos(duration);
        Set<Fault> kinds = parseFaults(faults);
        if ((seed == null) == (seeds == null)) throw new IllegalArgumentException("give exactly one of --seed N or --seeds A..B");
        if (checkDeterminism && seed == null) throw new IllegalArgumentException("--check-determinism takes one --seed");
        if (seed != null && checkDeterminism) {
            SimOptions o = new SimOptions(seed, nanos, chunkservers, kinds, false);
            dev.cairn.sim.DeterminismCheck.Outcome c = dev.cairn.sim.DeterminismCheck.run(o);
            if (c.deterministic()) {
                System.out.printf(Locale.ROOT, "seed %d is deterministic: two runs, %d events each, trace hash %s%n", seed, c.events(), c.hashA());
                return c.resultA().passed() ? 0 : 1;
            }
            System.out.printf(Locale.ROOT, "seed %d is NOT deterministic: hashes %s and %s; first diverging event #%d:%n  run 1: %s%n  run 2: %s%n",
                    seed, c.hashA(), c.hashB(), c.firstDiverging(), c.first(), c.second());
            return 1;
        }
        if (seed != null) {
            SimOptions o = new SimOptions(seed, nanos, chunkservers, kinds, verbose);
            SimResult r;
            if (trace != null) {
                try (PrintWriter w = new PrintWriter(Files.newBufferedWriter(trace))) {
                    r = SimRun.run(o, w::println);
                }
            } else {
                r = SimRun.run(o);
            }
            System.out.print(r.summary());
            if (!r.passed()) printFailure(r, o);
            return r.passed() ? 0 : 1;
        }
        return sweep(nanos, kinds);
    }

    private int sweep(long nanos, Set<Fault> kinds) throws Exception {
        String[] ab = seeds.split("\\.\\.");
        if (ab.length != 2) throw new IllegalArgumentException("--seeds takes A..B, e.g. 1..100");
        long a = Long.parseLong(ab[0].trim()), b = Long.parseLong(ab[1].trim());
        if (b < a) throw new IllegalArgumentException("empty seed range " + seeds);
        if (jobs < 1 || jobs > 64) throw new IllegalArgumentException("--jobs must be 1..64");
        long t0 = System.nanoTime();
        ExecutorService pool = Executors.newFixedThreadPool(jobs);
        List<Future<SimResult>> futures = new ArrayList<>();
        for (long s = a; s <= b; s++) {
            SimOptions o = new SimOptions(s, nanos, chunkservers, kinds, false);
            futures.add(pool.submit(() -> SimRun.run(o)));
        }
        int done = 0, failed = 0;
        long virtual = 0;
        List<SimResult> failures = new ArrayList<>();
        for (Future<SimResult> f : futures) {
            SimResult r = f.get();
            done++;
            virtual += r.virtualNanos();
            if (!r.passed()) {
                failed++;
                failures.add(r);
            }
            progress(done, futures.size(), failed);
        }
        pool.shutdown();
        if (System.console() != null) System.out.println();
        System.out.printf(Locale.ROOT, "%d seeds run, %d failed; %.0fs of virtual time in %.1fs of wall time%n",
                done, failed, virtual / 1e9, (System.nanoTime() - t0) / 1e9);
        for (SimResult r : failures) {
            System.out.println("seed " + r.seed() + ":");
            r.violations().stream().limit(5).forEach(v -> System.out.println("  " + v));
            System.out.println("  replay: " + replay(r.seed(), nanos, kinds));
        }
        return failed == 0 ? 0 : 1;
    }

    private void printFailure(SimResult r, SimOptions o) {
        System.out.println("last log lines:");
        List<String> log = r.recentLog();
        log.subList(Math.max(0, log.size() - 40), log.size()).forEach(l -> System.out.println("  " + l));
        System.out.println("replay: " + replay(o.seed(), o.durationNanos(), o.faults()));
    }

    private String replay(long s, long nanos, Set<Fault> kinds) {
        String f = kinds.isEmpty() ? "none" : kinds.stream().map(k -> k.name().toLowerCase(Locale.ROOT).replace('_', '-')).collect(Collectors.joining(","));
        return String.format(Locale.ROOT, "./cairn sim --seed %d --duration %ds --faults %s --chunkservers %d", s, nanos / 1_000_000_000L, f, chunkservers);
    }

    private static void progress(int done, int total, int failed) {
        if (System.console() == null) {
            // not a terminal (CI, a pipe): a line per tenth instead of a redrawn bar
            if (done == total || done % Math.max(1, total / 10) == 0) System.out.printf(Locale.ROOT, "%d/%d seeds, %d failed%n", done, total, failed);
            return;
        }
        int width = 40;
        int filled = (int) ((long) done * width / total);
        System.out.printf(Locale.ROOT, "\r[%s%s] %d/%d seeds, %d failed", "#".repeat(filled), " ".repeat(width - filled), done, total, failed);
        System.out.flush();
    }

    static Set<Fault> parseFaults(List<String> names) {
        Set<Fault> out = EnumSet.noneOf(Fault.class);
        for (String n : names) {
            String t = n.trim().toLowerCase(Locale.ROOT);
            switch (t) {
                case "none" -> { }
                case "crash" -> out.add(Fault.CRASH);
                case "power-loss", "powerloss" -> out.add(Fault.POWER_LOSS);
                default -> throw new IllegalArgumentException("unknown fault '" + n + "' (crash, power-loss, none)");
            }
        }
        return out;
    }

}
