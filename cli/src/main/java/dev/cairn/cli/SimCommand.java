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

    @Option(names = "--faults", defaultValue = "all", split = ",",
            description = "Fault kinds a run may draw from: all, none, a group (host, disk, network, clock) or names such as "
                    + "crash, power-loss, rack-power-loss, cluster-power-loss, host-loss, new-host, master-crash, gateway-crash, torn-writes, disk-stall, "
                    + "slow-disk, read-error, bit-flip, misdirected-write, fsync-fail, disk-full, disk-death, message-loss, delay, duplicate, "
                    + "partition, connection-reset, clock-skew, clock-drift, clock-step, quiet-periods (default: ${DEFAULT-VALUE}).")
    List<String> faults;

    @Option(names = "--workload", defaultValue = "sweep", description = "Client load: sweep (heavy, the default) or steady (a small file every 100 ms).")
    String workload;

    @Option(names = "--no-swarm", description = "Use every listed fault kind at even rates, instead of a per-seed random mix (swarm testing).")
    boolean noSwarm;

    @Option(names = "--plant", description = "Plant a bug in the node code to show the checkers catch it (repeatable): "
            + "ack-before-fsync, delete-unchecked, two-on-one-host, wall-clock-leases, chain-sync-early, tidy-below-goal, "
            + "current-without-lower-bound, header-over-durable-slot, header-not-synced, dir-not-synced, header-before-data, "
            + "commit-not-awaited, log-not-synced, last-block-unverified, copy-length-unjudged, lease-window-ignored, gateway-verifier-reused, deallocate-not-synced, overwrite-in-place, sync-covers-later-writes, release-before-commit; with --masters 3: snapshot-not-durable, install-over-old-state.")
    List<String> plants = new ArrayList<>();

    @Option(names = "--trace-html", description = "Write a timeline page (hosts, faults, client operations, violations) to FILE (single seed).")
    Path traceHtml;

    @Option(names = "--chunkservers", defaultValue = "5", description = "Chunkserver hosts (default: ${DEFAULT-VALUE}).")
    int chunkservers;

    @Option(names = "--masters", defaultValue = "1", description = "Masters: 1, or a group of 3 or 5 over the simulated Raft log"
            + " (leader crashes, power losses, pauses and partitions among them; default: ${DEFAULT-VALUE}).")
    int masters;

    @Option(names = "--trace", description = "Write every executed event (time, host, kind, digest) to FILE (single seed).")
    Path trace;

    @Option(names = "--check-determinism", description = "Run the seed twice and fail, naming the first diverging event, if the two runs differ.")
    boolean checkDeterminism;

    @Option(names = "--verbose", description = "Print node logs with virtual time.")
    boolean verbose;

    @Option(names = "--excuses", description = "In a sweep, print every excused loss with its seed and reason "
            + "(without it, the seeds with the most).")
    boolean excuses;

    @Option(names = "--jobs", defaultValue = "1", description = "Seeds run in parallel in a sweep (default: ${DEFAULT-VALUE}).")
    int jobs;

    /** Seeds named after a sweep as those with the most excused losses. */
    private static final int MOST_EXCUSED_SHOWN = 10;

    @Override public Integer call() throws Exception {
        long nanos = Durations.parseNanos(duration);
        Set<Fault> kinds = Fault.parseList(faults);
        Set<dev.cairn.core.env.Plant> planted = EnumSet.noneOf(dev.cairn.core.env.Plant.class);
        for (String p : plants) planted.add(dev.cairn.core.env.Plant.parse(p));
        SimOptions base = new SimOptions(0, nanos, chunkservers, kinds, !noSwarm, planted, false,
                dev.cairn.sim.workload.Workload.Profile.valueOf(workload.trim().toUpperCase(Locale.ROOT)), masters);
        if ((seed == null) == (seeds == null)) throw new IllegalArgumentException("give exactly one of --seed N or --seeds A..B");
        if (checkDeterminism && seed == null) throw new IllegalArgumentException("--check-determinism takes one --seed");
        if (seed != null && checkDeterminism) {
            SimOptions o = base.withSeed(seed);
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
            SimOptions o = base.withSeed(seed).withVerbose(verbose);
            dev.cairn.sim.Timeline timeline = traceHtml == null ? null : new dev.cairn.sim.Timeline();
            SimResult r;
            if (trace != null) {
                try (PrintWriter w = new PrintWriter(Files.newBufferedWriter(trace))) {
                    r = SimRun.run(o, w::println, timeline);
                }
            } else {
                r = SimRun.run(o, null, timeline);
            }
            if (timeline != null) Files.writeString(traceHtml, timeline.html());
            System.out.print(r.summary());
            if (!r.passed()) printFailure(r, o);
            return r.passed() ? 0 : 1;
        }
        return sweep(base);
    }

    private int sweep(SimOptions base) throws Exception {
        String[] ab = seeds.split("\\.\\.");
        if (ab.length != 2) throw new IllegalArgumentException("--seeds takes A..B, e.g. 1..100");
        long a = Long.parseLong(ab[0].trim()), b = Long.parseLong(ab[1].trim());
        if (b < a) throw new IllegalArgumentException("empty seed range " + seeds);
        if (jobs < 1 || jobs > 64) throw new IllegalArgumentException("--jobs must be 1..64");
        long t0 = System.nanoTime();
        ExecutorService pool = Executors.newFixedThreadPool(jobs);
        List<Future<SimResult>> futures = new ArrayList<>();
        for (long s = a; s <= b; s++) {
            SimOptions o = base.withSeed(s);
            futures.add(pool.submit(() -> {
                SimResult r = SimRun.run(o);
                return r.passed() ? r.withoutLog() : r;
            }));
        }
        int done = 0, failed = 0;
        long virtual = 0;
        List<SimResult> failures = new ArrayList<>();
        java.util.Map<String, Integer> kinds = new java.util.TreeMap<>();
        java.util.Map<Fault, Long> coverage = new java.util.EnumMap<>(Fault.class);
        long excused = 0, verified = 0, elections = 0, installs = 0;
        java.util.Map<String, Integer> excuseKinds = new java.util.TreeMap<>();
        List<SimResult> excusing = new ArrayList<>();
        for (Future<SimResult> f : futures) {
            SimResult r = f.get();
            done++;
            virtual += r.virtualNanos();
            excused += r.stats().excusedLosses;
            for (String x : r.excuses()) excuseKinds.merge(SimResult.excuseKind(x), 1, Integer::sum);
            if (!r.excuses().isEmpty()) excusing.add(r);
            verified += r.stats().verified;
            elections += r.masterElections();
            installs += r.snapshotInstalls();
            r.faultCounts().forEach((k, c) -> coverage.merge(k, (long) c, Long::sum));
            if (!r.passed()) {
                failed++;
                failures.add(r);
                r.violationKinds().forEach((k, c) -> kinds.merge(k, c, Integer::sum));
            }
            progress(done, futures.size(), failed, t0);
        }
        pool.shutdown();
        if (System.console() != null) System.out.println();
        double wall = (System.nanoTime() - t0) / 1e9;
        System.out.printf(Locale.ROOT, "%d seeds run, %d failed; %.0fs of virtual time in %.1fs of wall time (%.0f× real time, %.0f seeds/min)%n",
                done, failed, virtual / 1e9, wall, virtual / 1e9 / wall, done / wall * 60);
        System.out.printf(Locale.ROOT, "files verified at the end: %d; chunks lost with an excuse (a fault took their last readable copies): %d%s%n",
                verified, excused, excuseKinds.isEmpty() ? "" : " " + excuseKinds);
        printExcuses(excusing);
        if (elections > 0) System.out.printf(Locale.ROOT, "master groups: %d leader elections, %d snapshots installed on masters behind the purged log%n", elections, installs);
        System.out.println("violations by kind: " + (kinds.isEmpty() ? "none" : kinds));
        StringBuilder cov = new StringBuilder();
        coverage.forEach((k, c) -> cov.append(cov.length() == 0 ? "" : ", ").append(k.cliName()).append(' ').append(c));
        System.out.println("faults injected: " + (cov.length() == 0 ? "none" : cov));
        for (SimResult r : failures) {
            System.out.println("seed " + r.seed() + " (" + r.mix() + "):");
            r.violations().stream().limit(5).forEach(v -> System.out.println("  " + v));
            System.out.println("  replay: " + r.options().replayCommand());
        }
        return failed == 0 ? 0 : 1;
    }

    /** Every excused loss with its seed (--excuses), or the seeds with the most, each with its replay command. */
    private void printExcuses(List<SimResult> excusing) {
        if (excusing.isEmpty()) return;
        if (excuses) {
            for (SimResult r : excusing) for (String x : r.excuses()) System.out.println("  seed " + r.seed() + ": " + x);
            return;
        }
        List<SimResult> most = new ArrayList<>(excusing);
        most.sort(java.util.Comparator.comparingInt((SimResult r) -> -r.excuses().size()).thenComparingLong(SimResult::seed));
        StringBuilder sb = new StringBuilder();
        for (SimResult r : most.subList(0, Math.min(MOST_EXCUSED_SHOWN, most.size()))) {
            sb.append(sb.length() == 0 ? "" : ", ").append(r.seed()).append(" (").append(r.excuses().size()).append(')');
        }
        System.out.printf(Locale.ROOT, "seeds with the most excused losses (each reason: --seed N, or --excuses for all): %s%n", sb);
    }

    private void printFailure(SimResult r, SimOptions o) {
        System.out.println("last log lines:");
        List<String> log = r.recentLog();
        log.subList(Math.max(0, log.size() - 40), log.size()).forEach(l -> System.out.println("  " + l));
        System.out.println("replay: " + o.replayCommand());
    }

    private static void progress(int done, int total, int failed, long t0) {
        double wall = (System.nanoTime() - t0) / 1e9;
        long eta = done == 0 ? 0 : Math.round(wall / done * (total - done));
        if (System.console() == null) {
            // not a terminal (CI, a pipe): a line per tenth instead of a redrawn bar
            if (done == total || done % Math.max(1, total / 10) == 0) System.out.printf(Locale.ROOT, "%d/%d seeds, %d failed, %.0fs%n", done, total, failed, wall);
            return;
        }
        int width = 40;
        int filled = (int) ((long) done * width / total);
        System.out.printf(Locale.ROOT, "\r[%s%s] %d/%d seeds, %d failed, eta %ds ", "#".repeat(filled), " ".repeat(width - filled), done, total, failed, eta);
        System.out.flush();
    }


}
