package dev.cairn.sim;

import dev.cairn.sim.workload.Workload;
import java.util.List;
import java.util.Locale;

/** The outcome of one simulated run. */
public record SimResult(long seed, String traceHash, long events, long virtualNanos, long wallNanos,
                        int faults, Workload.Stats stats, List<String> violations, List<String> recentLog) {
    public boolean passed() { return violations.isEmpty(); }

    /** The human summary printed by {@code cairn sim}. */
    public String summary() {
        StringBuilder sb = new StringBuilder();
        sb.append(String.format(Locale.ROOT, "seed %d: %s%n", seed, passed() ? "PASS" : "FAIL"));
        sb.append(String.format(Locale.ROOT, "  virtual time %.1fs, wall time %.2fs, %d events, %d faults%n",
                virtualNanos / 1e9, wallNanos / 1e9, events, faults));
        sb.append(String.format(Locale.ROOT, "  files: %d written (%d erasure-coded, %d failed, %d syncs mid-file), %d bytes acknowledged; %d reads (%d errors); %d removes; %d verified at the end%n",
                stats.commits, stats.ecCommits, stats.writeFailures, stats.midSyncs, stats.bytesCommitted, stats.reads, stats.readErrors, stats.removes, stats.verified));
        for (String v : violations) sb.append("  VIOLATION ").append(v).append('\n');
        sb.append("  trace hash ").append(traceHash).append('\n');
        return sb.toString();
    }
}
