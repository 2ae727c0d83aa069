package dev.cairn.chaos;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;

/**
 * A chaos run for a person: the summary table (one row per scenario: operations, faults fired, acknowledged bytes
 * checked, bytes lost, time to converge, verdict) and an HTML timeline of each run (a lane per node with its
 * faults, lanes of writes and reads with their outcomes), so what happened when can be seen at a glance.
 */
public final class ChaosReport {
    private ChaosReport() { }

    public static String header() {
        return String.format(Locale.ROOT, "%-18s %6s %13s %13s %7s %12s %10s %10s  %s", "scenario", "seed", "writes ok/fail", "reads ok/fail",
                "faults", "acked MiB", "lost bytes", "converged", "verdict");
    }

    public static String row(ChaosRun.Result r) {
        return String.format(Locale.ROOT, "%-18s %6d %13s %13s %7d %12.1f %10d %10s  %s", r.config().scenario().id(), r.config().seed(),
                r.count(History.Op.WRITE, History.Outcome.OK) + "/" + r.count(History.Op.WRITE, History.Outcome.FAILED),
                r.count(History.Op.READ, History.Outcome.OK) + "/" + (r.count(History.Op.READ, History.Outcome.FAILED) + r.count(History.Op.READ, History.Outcome.WRONG_BYTES)),
                r.faults().size(), r.ackBytesChecked() / 1048576.0, r.lostBytes(),
                r.convergeMillis() < 0 ? "no" : ChaosRun.seconds(r.convergeMillis()), r.passed() ? "PASS" : "FAIL");
    }

    /** Writes {@code summary.md} and one {@code timeline-SCENARIO.html} per run into {@code dir}. */
    public static void write(Path dir, List<ChaosRun.Result> results) throws IOException {
        Files.createDirectories(dir);
        StringBuilder md = new StringBuilder("# Chaos run\n\n```\n").append(header()).append('\n');
        for (ChaosRun.Result r : results) md.append(row(r)).append('\n');
        md.append("```\n");
        for (ChaosRun.Result r : results) {
            md.append("\n## ").append(r.config().scenario().id()).append(" (seed ").append(r.config().seed()).append(")\n\n");
            md.append("Re-run: `").append(r.config().rerunCommand()).append("`\n\n");
            if (r.config().scenario().needsKernelClient()) {
                List<History.Entry> copies = r.history().stream().filter(e -> e.op() == History.Op.WRITE && e.detail().startsWith("kernel")).toList();
                long ok = copies.stream().filter(e -> e.outcome() == History.Outcome.OK).count();
                long across = copies.stream().filter(e -> e.outcome() == History.Outcome.OK && r.faults().stream()
                        .anyMatch(f -> e.startMillis() < f.appliedMillis() && e.endMillis() > f.healedMillis())).count();
                md.append("Copies the Linux kernel's NFS client fsynced through its mount (nfs-vm): ").append(ok).append(" acknowledged, ")
                        .append(copies.size() - ok).append(" failed, ").append(across).append(" of them under way across a whole gateway outage; the rest")
                        .append(" through the native client.\n");
            } else {
                md.append("Writes through the NFS gateway (OPEN, UNSTABLE WRITEs, COMMIT, CLOSE): ").append(r.nfsWrites(History.Outcome.OK))
                        .append(" acknowledged, ").append(r.nfsWrites(History.Outcome.FAILED)).append(" failed; the rest through the native client.\n");
            }
            md.append(failureReasons(r));
            md.append("\nFaults:\n\n");
            for (ChaosRun.Fired f : r.faults()) {
                long pause = pauseMillis(r, f.appliedMillis());
                String wall = java.time.Instant.ofEpochMilli(r.startWallMillis() + f.appliedMillis()).atZone(java.time.ZoneId.systemDefault())
                        .toLocalTime().toString();
                md.append("- ").append(f.fault()).append(" (at ").append(wall).append(" in the node logs")
                        .append(f.mastersInGroup() < 0 ? "" : "; " + f.mastersInGroup() + " of " + r.config().scenario().masters() + " masters in the group before it")
                        .append(')')
                        .append(f.note() == null ? "" : " (" + f.note() + ")")
                        .append(f.error() == null ? "" : " (error: " + f.error() + ")")
                        .append(pause < 0 ? "" : f.appliedMillis() + pause > r.config().durationMillis() ? "; the workload ended before clients resumed"
                                : String.format(java.util.Locale.ROOT, "; clients paused %.1f s", pause / 1e3)).append('\n');
            }
            md.append(failovers(r));
            md.append("\nHealth while coming up and converging (each change, on the run's clock):\n\n");
            for (String c : r.convergence()) md.append("- ").append(c).append('\n');
            md.append(r.violations().isEmpty() ? "\nNo violation.\n" : "\nViolations:\n\n");
            for (String v : r.violations()) md.append("- ").append(v).append('\n');
            Files.writeString(dir.resolve("timeline-" + r.config().scenario().id() + ".html"), timeline(r), StandardCharsets.UTF_8);
        }
        Files.writeString(dir.resolve("summary.md"), md.toString(), StandardCharsets.UTF_8);
    }

    /**
     * What clients felt of a fault at {@code atMillis}: the gap between the last operation acknowledged before it
     * and the first acknowledged after it (writes and reads of every writer and the reader together); -1 if
     * nothing was acknowledged on one side.
     */
    public static long pauseMillis(ChaosRun.Result r, long atMillis) {
        long before = -1, after = -1;
        for (History.Entry e : r.history()) {
            if (e.outcome() != History.Outcome.OK) continue;
            if (e.endMillis() <= atMillis) before = Math.max(before, e.endMillis());
            else if (after < 0 || e.endMillis() < after) after = e.endMillis();
        }
        return before < 0 || after < 0 ? -1 : after - before;
    }

    /** How many failed calls of the run's clients a report lists the reasons of (the commonest first). */
    static final int REASONS_LISTED = 5;

    /** The commonest reasons the run's failed writes and reads gave (a write failing is allowed; why is worth knowing). */
    static String failureReasons(ChaosRun.Result r) {
        java.util.Map<String, Long> count = new java.util.TreeMap<>();
        for (History.Entry e : r.history()) {
            if (e.outcome() != History.Outcome.FAILED) continue;
            String why = e.op() + " " + e.detail().replaceAll("\\d+", "N");
            count.merge(why.length() > 200 ? why.substring(0, 200) + "…" : why, 1L, Long::sum);
        }
        if (count.isEmpty()) return "";
        StringBuilder out = new StringBuilder("\nWhy calls failed (commonest first, numbers as N):\n\n");
        count.entrySet().stream().sorted(java.util.Map.Entry.<String, Long>comparingByValue().reversed()).limit(REASONS_LISTED)
                .forEach(e -> out.append("- ").append(e.getValue()).append(" × ").append(e.getKey()).append('\n'));
        return out.toString();
    }

    /**
     * For faults on the leader (kills, power losses, partitions): the pauses clients felt, apart for kills that found every master in the group (a
     * failover: a majority is left) and kills that found one still restarting (no majority until it is back; a
     * kill waits a bounded time for the group to be whole, see {@code ChaosRun.awaitWholeGroup}).
     */
    static String failovers(ChaosRun.Result r) {
        List<Long> whole = new ArrayList<>(), short_ = new ArrayList<>();
        int masters = r.config().scenario().masters();
        for (ChaosRun.Fired f : r.faults()) {
            long pause = pauseMillis(r, f.appliedMillis());
            // a kill near the end is followed by the end of the workload, not by a resumption
            if (f.mastersInGroup() < 0 || pause < 0 || f.appliedMillis() + pause > r.config().durationMillis()) continue;
            (f.mastersInGroup() >= masters ? whole : short_).add(pause);
        }
        if (whole.isEmpty() && short_.isEmpty()) return "";
        return String.format(Locale.ROOT, "%nClient pauses after a fault on the leader: with every master in the group before it (a failover) %s;"
                + " with one still rejoining (no majority left until it is back) %s.%n", stats(whole), stats(short_));
    }

    private static String stats(List<Long> pauses) {
        if (pauses.isEmpty()) return "none";
        List<Long> s = new ArrayList<>(pauses);
        java.util.Collections.sort(s);
        return String.format(Locale.ROOT, "%d faults, median %.1f s, max %.1f s", s.size(), s.get(s.size() / 2) / 1e3, s.get(s.size() - 1) / 1e3);
    }

    static final int WIDTH = 1200, LANE = 22, LEFT = 90;

    /** One self-contained page: an SVG with a lane per node (faults) and lanes for writes, reads and the checks. */
    static String timeline(ChaosRun.Result r) {
        long end = r.config().durationMillis();
        for (History.Entry e : r.history()) end = Math.max(end, e.endMillis());
        double scale = (WIDTH - LEFT - 10) / (double) Math.max(1, end);
        Set<String> lanes = new LinkedHashSet<>();
        lanes.add("master");
        for (int i = 1; i <= r.config().chunkservers(); i++) lanes.add("cs" + i);
        lanes.add(Nemesis.GATEWAY);
        List<String> opLanes = List.of("WRITE", "READ", "CHECK", "NEW_FILE");
        List<String> all = new ArrayList<>(lanes);
        all.addAll(opLanes);
        int height = all.size() * LANE + 40;
        StringBuilder svg = new StringBuilder();
        svg.append(String.format(Locale.ROOT, "<svg xmlns='http://www.w3.org/2000/svg' width='%d' height='%d' font-family='monospace' font-size='11'>", WIDTH, height));
        for (int i = 0; i < all.size(); i++) {
            int y = 10 + i * LANE;
            svg.append(String.format(Locale.ROOT, "<text x='4' y='%d'>%s</text><line x1='%d' y1='%d' x2='%d' y2='%d' stroke='#ddd'/>",
                    y + 14, esc(all.get(i).toLowerCase(Locale.ROOT)), LEFT, y + LANE - 2, WIDTH - 10, y + LANE - 2));
        }
        for (long s = 0; s <= end; s += 10_000) {
            double x = LEFT + s * scale;
            svg.append(String.format(Locale.ROOT, "<line x1='%.1f' y1='6' x2='%.1f' y2='%d' stroke='#eee'/><text x='%.1f' y='%d' fill='#888'>%ds</text>",
                    x, x, height - 24, x + 2, height - 8, s / 1000));
        }
        for (ChaosRun.Fired f : r.faults()) for (String node : f.fault().nodes(List.copyOf(lanes))) {
            int lane = all.indexOf(node);
            if (lane < 0) continue;
            String color = switch (f.fault().kind()) {
                case KILL -> "#d9534f";
                case STALL -> "#f0ad4e";
                case CLOCK_STEP -> "#8e6cc0";
                case DISK_FULL -> "#5b8fd6";
                case POWER_LOSS -> "#333";
                case DISK_STALL -> "#c8a000";
                case DISK_ERROR -> "#a0522d";
                case PARTITION -> "#2a9d8f";
                case PACKET_LOSS -> "#7fb8b0";
            };
            svg.append(String.format(Locale.ROOT, "<rect x='%.1f' y='%d' width='%.1f' height='%d' fill='%s'><title>%s%s</title></rect>",
                    LEFT + f.appliedMillis() * scale, 12 + lane * LANE, Math.max(1, (f.healedMillis() - f.appliedMillis()) * scale), LANE - 6, color,
                    esc(f.fault().toString()), f.error() == null ? "" : esc(" error: " + f.error())));
        }
        for (History.Entry e : r.history()) {
            int lane = all.indexOf(e.op().name());
            String color = switch (e.outcome()) {
                case OK -> "#5cb85c";
                case FAILED -> "#999";
                case WRONG_BYTES -> "#d9534f";
            };
            svg.append(String.format(Locale.ROOT, "<rect x='%.1f' y='%d' width='%.1f' height='%d' fill='%s' opacity='0.6'><title>%s %s %d bytes %s-%s %s %s</title></rect>",
                    LEFT + e.startMillis() * scale, 12 + lane * LANE + (e.file() % 3) * 5, Math.max(1, (e.endMillis() - e.startMillis()) * scale), 5, color,
                    e.op(), esc(e.path()), e.bytes(), ChaosRun.seconds(e.startMillis()), ChaosRun.seconds(e.endMillis()), e.outcome(), esc(e.detail())));
        }
        svg.append("</svg>");
        StringBuilder html = new StringBuilder("<!doctype html><html><head><meta charset='utf-8'><title>cairn chaos ")
                .append(esc(r.config().scenario().id())).append(" seed ").append(r.config().seed()).append(r.passed() ? " PASS" : " FAIL")
                .append("</title></head><body style='font-family:sans-serif'><h2>")
                .append(esc(r.config().scenario().id())).append(", seed ").append(r.config().seed()).append(": ").append(r.passed() ? "pass" : "FAIL")
                .append("</h2><p>Red: a process killed (kill -9) until restarted; orange: stopped (SIGSTOP) until continued; purple: wall clock stepped until stepped back. "
                        + "Operations: green succeeded, grey failed (allowed: not acknowledged), red returned bytes never written. Hover for details.</p>")
                .append(svg).append("<pre>").append(esc(ChaosReport.header())).append('\n').append(esc(row(r))).append("</pre>");
        if (!r.violations().isEmpty()) {
            html.append("<h3>Violations</h3><ul>");
            for (String v : r.violations()) html.append("<li>").append(esc(v)).append("</li>");
            html.append("</ul>");
        }
        html.append("<p>Re-run: <code>").append(esc(r.config().rerunCommand())).append("</code></p></body></html>\n");
        return html.toString();
    }

    static String esc(String s) {
        return s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace("'", "&#39;");
    }
}
