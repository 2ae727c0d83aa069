package dev.cairn.cli;

import dev.cairn.chaos.ChaosReport;
import dev.cairn.chaos.ChaosRun;
import dev.cairn.chaos.Nemesis;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code cairn chaos}: scenarios of faults on a cluster of real processes (see {@link ChaosRun}), with the
 * history checked afterwards and a report written. Exits 1 if any scenario found a violation.
 */
@Command(name = "chaos",
        description = "Run chaos scenarios on a local cluster of real processes (kill -9, SIGSTOP, restarts) under writes and reads; "
                + "then heal, let it converge and check every acknowledged byte.")
final class ChaosCommand implements Callable<Integer> {
    @Option(names = "--scenario", defaultValue = "all",
            description = "chunkserver-kill, gateway-kill, kernel-client (needs root and nfs-vm), chunkserver-stall, master-kill, leader-kill, leader-stall, "
                    + "quorum-loss, clock-step (needs libfaketime), disk-full (needs root), power-loss, group-power-loss, disk-stall and disk-error "
                    + "(need root and FUSE), partition and packet-loss (need root and network namespaces), mixed, storm (all of kill, stop, "
                    + "partition, packet loss and power loss under a master group: needs root, FUSE and network namespaces), or all (default: ${DEFAULT-VALUE}).")
    String scenario;

    @Option(names = "--seed", defaultValue = "1", description = "Seed of the fault schedule and the data (default: ${DEFAULT-VALUE}).")
    long seed;

    @Option(names = "--duration", defaultValue = "60s", description = "Workload and faults per scenario, e.g. 45s, 30m (default: ${DEFAULT-VALUE}).")
    String duration;

    @Option(names = "--chunkservers", defaultValue = "5", description = "Chunkserver processes (default: ${DEFAULT-VALUE}).")
    int chunkservers;

    @Option(names = "--keep-data", description = "Keep the nodes' data directories of scenarios that passed (those of a failed one are always kept).")
    boolean keepData;

    @Option(names = "--report", defaultValue = "cairn-chaos", description = "Directory for the report, the timelines, and each run's data and logs (default: ${DEFAULT-VALUE}).")
    Path report;

    @Override public Integer call() throws Exception {
        List<Nemesis.Scenario> scenarios = scenario.equals("all") ? List.of(Nemesis.Scenario.values()) : List.of(Nemesis.Scenario.parse(scenario));
        long millis = Durations.parseNanos(duration) / 1_000_000;
        List<ChaosRun.Result> results = new ArrayList<>();
        System.out.println(ChaosReport.header());
        boolean mounts = scenarios.stream().anyMatch(Nemesis.Scenario::fillsDisks) && ChaosRun.canFillDisks();
        String noLossyDisks = ChaosRun.cannotLoseDisks();
        String noNetworks = ChaosRun.cannotPartition();
        String noKernelClient = ChaosRun.cannotRunKernelClient();
        for (Nemesis.Scenario s : scenarios) {
            if (s.fillsDisks() && !mounts && scenarios.size() > 1) {
                System.out.println("(" + s.id() + " skipped: it mounts a small filesystem per chunkserver, which needs root allowed to mount)");
                continue;
            }
            if (s.needsLossyDisks() && noLossyDisks != null && scenarios.size() > 1) {
                System.out.println("(" + s.id() + " skipped: " + noLossyDisks + ")");
                continue;
            }
            if (s.needsNetwork() && noNetworks != null && scenarios.size() > 1) {
                System.out.println("(" + s.id() + " skipped: " + noNetworks + ")");
                continue;
            }
            if (s.needsKernelClient() && noKernelClient != null && scenarios.size() > 1) {
                System.out.println("(" + s.id() + " skipped: " + noKernelClient + ")");
                continue;
            }
            Path dir = report.resolve(s.id());
            if (Files.exists(dir)) throw new IllegalArgumentException(dir + " exists: give another --report directory or remove it");
            String rerun = "./cairn chaos --scenario " + s.id() + " --seed " + seed + " --duration " + duration + " --chunkservers " + chunkservers;
            ChaosRun.Result r = ChaosRun.run(new ChaosRun.Config(s, seed, millis, chunkservers, dir, ProcessCluster.javaCommand(ProcessCluster.CHUNKSERVER_HEAP), rerun));
            results.add(r);
            if (r.passed() && !keepData) ChaosRun.deleteNodeData(dir); // gigabytes of chunks; the logs stay
            System.out.println(ChaosReport.row(r));
            for (String v : r.violations()) System.out.println("    " + v);
        }
        ChaosReport.write(report, results);
        System.out.println("report: " + report.resolve("summary.md") + " and timeline-*.html; data and node logs under " + report + "/SCENARIO/");
        return results.stream().allMatch(ChaosRun.Result::passed) ? 0 : 1;
    }
}
