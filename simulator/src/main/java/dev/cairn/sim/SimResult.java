package dev.cairn.sim;

import dev.cairn.sim.SimOptions.Fault;
import dev.cairn.sim.runtime.Simulation;
import dev.cairn.sim.workload.Workload;
import java.util.EnumMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;

/** The outcome of one simulated run. */
public record SimResult(long seed, SimOptions options, String mix, String traceHash, long events, long virtualNanos, long wallNanos,
                        Map<Fault, Integer> faultCounts, Workload.Stats stats, int chunksAudited,
                        List<String> violations, List<String> excuses, List<String> recentLog, long masterElections, long snapshotInstalls) {
    public SimResult {
        faultCounts = new EnumMap<>(faultCounts.isEmpty() ? new EnumMap<>(Fault.class) : faultCounts);
    }

    public boolean passed() { return violations.isEmpty(); }

    /** The same result without the log lines (a sweep keeps thousands of passing results). */
    public SimResult withoutLog() {
        return new SimResult(seed, options, mix, traceHash, events, virtualNanos, wallNanos, faultCounts, stats, chunksAudited, violations, excuses, List.of(), masterElections, snapshotInstalls);
    }

    public int faults() {
        int n = 0;
        for (int c : faultCounts.values()) n += c;
        return n;
    }

    /** Violations counted by kind (durability, corrupt-read, convergence, garbage, balance, liveness, ...). */
    public Map<String, Integer> violationKinds() {
        Map<String, Integer> out = new TreeMap<>();
        for (String v : violations) out.merge(Simulation.kindOf(v), 1, Integer::sum);
        return out;
    }

    /** The fault named in an excuse ({@code t=12.345s host-loss on cs2 ...}): host-loss, disk-death, bit-flip or misdirected-write; lost-before-ack for a chunk faults took before a write of it was acknowledged; unseen-damage for one whose sound copy a planner deleted, trusting copies faults had damaged unseen. */
    public static String excuseKind(String excuse) {
        String[] w = excuse.split(" ", 3);
        return w.length > 1 ? w[1] : "other";
    }

    /** The human summary printed by {@code cairn sim}. */
    public String summary() {
        StringBuilder sb = new StringBuilder();
        sb.append(String.format(Locale.ROOT, "seed %d: %s%n", seed, passed() ? "PASS" : "FAIL"));
        sb.append(String.format(Locale.ROOT, "  fault mix: %s%s%n", mix,
                options.plants().isEmpty() ? "" : "; planted: " + options.plants().stream().map(p -> p.cliName()).toList()));
        sb.append(String.format(Locale.ROOT, "  virtual time %.1fs, wall time %.2fs, %d events, %d faults %s%n",
                virtualNanos / 1e9, wallNanos / 1e9, events, faults(), faultCounts));
        sb.append(String.format(Locale.ROOT, "  files: %d written (%d erasure-coded, %d failed, %d syncs mid-file), %d bytes acknowledged; %d reads (%d errors); %d removes; %d verified at the end, %d lost with an excuse; %d probed; %d chunks audited%n",
                stats.commits, stats.ecCommits, stats.writeFailures, stats.midSyncs, stats.bytesCommitted, stats.reads, stats.readErrors,
                stats.removes, stats.verified, stats.excusedLosses, stats.probed, chunksAudited));
        if (options.masters() > 1) {
            sb.append(String.format(Locale.ROOT, "  masters: a group of %d, %d leader elections, %d snapshots installed%n", options.masters(), masterElections, snapshotInstalls));
        }
        if (stats.nfsReconnects > 0) {
            sb.append(String.format(Locale.ROOT, "  nfs: %d created, %d changed in place (%d of erasure-coded files; %d writes, %d COMMITs (%d amid writes), %d FILE_SYNC writes and %d DEALLOCATEs acknowledged, %d resent after a"
                            + " verifier change), %d reads, %d removes, %d xattr changes (%d acknowledged), %d given up, %d calls retried, %d sessions%n",
                    stats.nfsCreates, stats.nfsUpdates, stats.nfsEcUpdates, stats.nfsWrites, stats.nfsCommits + stats.nfsCommitsAmid, stats.nfsCommitsAmid, stats.nfsSyncWrites, stats.nfsDeallocates, stats.nfsResends, stats.nfsReads,
                    stats.nfsRemoves, stats.nfsXattrChanges, stats.nfsXattrsAcknowledged, stats.nfsFailures, stats.nfsRetries, stats.nfsReconnects));
        }
        if (stats.aimedAtArrivals > 0) sb.append(String.format(Locale.ROOT, "  aimed: %d of the faults as a message arrived%n", stats.aimedAtArrivals));
        if (stats.nfsWritesBesideRetries > 0) sb.append(String.format(Locale.ROOT, "  nfs: %d WRITEs sent again before a failed COMMIT's retry%n", stats.nfsWritesBesideRetries));
        if (stats.nfsPrefixReads > 0) sb.append(String.format(Locale.ROOT, "  nfs: %d reads stopped after two pieces%n", stats.nfsPrefixReads));
        if (stats.drains + stats.classChanges + stats.retired > 0) {
            sb.append(String.format(Locale.ROOT, "  operator: %d drains (%d taken back), %d class changes, %d servers retired%n",
                    stats.drains, stats.undrains, stats.classChanges, stats.retired));
        }
        for (String x : excuses) sb.append("  excused loss: ").append(x).append('\n');
        for (String v : violations) sb.append("  VIOLATION ").append(v).append('\n');
        sb.append("  trace hash ").append(traceHash).append('\n');
        return sb.toString();
    }
}
