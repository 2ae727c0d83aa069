package dev.cairn.cli;

import dev.cairn.core.proto.MasterProtocol.ServerStatus;
import dev.cairn.core.proto.MasterProtocol.StatusReply;
import dev.cairn.core.proto.Types.DiskReport;
import dev.cairn.core.proto.Types.DiskState;
import dev.cairn.master.ClusterHistory;
import dev.cairn.master.Master;
import dev.cairn.master.MasterReplica;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.List;
import java.util.Locale;
import java.util.function.ToDoubleFunction;

/**
 * The master's web page (at {@code /} of its {@code --metrics} address), in the manner of MooseFS's CGI pages: the
 * cluster's health at a glance, each chunkserver and disk with its state, and the last ten minutes of space, repair
 * and copies as plots. Plain HTML and inline SVG, no script, reloaded every {@link #REFRESH_SECONDS}: it works in any
 * browser and from {@code curl}. Made on the master's own loop from what {@code cairn status} answers.
 */
final class Dashboard {
    static final int REFRESH_SECONDS = 5;
    static final int PLOT_WIDTH = 560, PLOT_HEIGHT = 110;
    private static final DateTimeFormatter CLOCK = DateTimeFormatter.ofPattern("HH:mm:ss").withZone(ZoneOffset.UTC);

    private Dashboard() {}

    /** The page for a master node ({@link Master}, or a {@link MasterReplica} of a group); null for other nodes. */
    static String of(Object node) {
        if (node instanceof Master m) return page(m.statusNow(), m.history().samples(), "single master");
        if (node instanceof MasterReplica r) {
            var role = r.role();
            if (r.master() != null) return page(r.master().statusNow(), r.master().history().samples(), "leader of the master group, term " + role.term());
            return shell("Cairn master (follower)", "<p>This master follows the group's leader"
                    + (role.leader() == null ? " (none known yet)" : " at <b>" + esc(role.leader().toString()) + "</b>")
                    + ", term " + role.term() + ". The cluster's page is served by the leader's metrics address.</p>");
        }
        return null;
    }

    static String page(StatusReply s, List<ClusterHistory.Sample> history, String role) {
        StringBuilder b = new StringBuilder(16 * 1024);
        String health = s.lost() > 0 ? "LOST" : s.endangered() > 0 || s.underGoal() > 0 ? "DEGRADED" : s.grace() ? "STARTING" : "HEALTHY";
        String color = switch (health) {
            case "LOST" -> "#c9302c";
            case "DEGRADED" -> "#ec971f";
            case "STARTING" -> "#5bc0de";
            default -> "#449d44";
        };
        b.append("<p>").append(esc(role)).append(" &middot; <span class='badge' style='background:").append(color).append("'>")
                .append(health).append("</span></p>\n");
        b.append("<h2>Chunks</h2>\n<table class='kv'>");
        row(b, "chunks", s.chunks());
        row(b, "under goal", s.underGoal());
        row(b, "over goal", s.overGoal());
        row(b, "endangered (one failure from loss)", s.endangered());
        row(b, "lost", s.lost());
        row(b, "stale copies", s.staleCopies());
        row(b, "copies being made", s.moving());
        row(b, "copies made / deleted by the planner", s.copiesMade() + " / " + s.copiesDeleted());
        row(b, "copies marked bad", s.copiesMarkedBad());
        row(b, "grace after start", s.grace() ? "yes (nothing repaired or deleted yet)" : "over");
        b.append("</table>\n");

        b.append("<h2>Chunkservers</h2>\n<table class='grid' id='servers'><tr><th>server</th><th>address</th><th>state</th><th>used</th>"
                + "<th>capacity</th><th>chunks</th><th>stale</th><th>disks</th></tr>\n");
        for (ServerStatus v : s.servers()) {
            String state = !v.alive() ? "<span class='bad'>down</span>" : v.draining() ? "<span class='warn'>draining</span>" : "up";
            b.append("<tr><td>").append(esc(v.id())).append("</td><td>").append(esc(String.valueOf(v.address()))).append("</td><td>").append(state)
                    .append("</td><td>").append(bytes(v.usedBytes())).append(v.capacityBytes() > 0 ? String.format(Locale.ROOT, " (%.1f %%)", 100.0 * v.usedBytes() / v.capacityBytes()) : "")
                    .append("</td><td>").append(bytes(v.capacityBytes())).append("</td><td>").append(v.chunks()).append("</td><td>").append(v.staleChunks())
                    .append("</td><td>");
            for (DiskReport d : v.disks()) {
                String cls = d.state() == DiskState.OK ? "ok" : d.state() == DiskState.SLOW ? "warn" : "bad";
                b.append("<span class='disk ").append(cls).append("' title='").append(d.chunks()).append(" chunks, ").append(bytes(d.usedBytes()))
                        .append(d.quarantined() > 0 ? ", " + d.quarantined() + " kept aside" : "").append("'>").append(esc(d.name())).append(' ')
                        .append(d.state().name().toLowerCase(Locale.ROOT)).append(String.format(Locale.ROOT, " %.1f ms", d.latencyMicros() / 1000.0)).append("</span> ");
            }
            b.append("</td></tr>\n");
        }
        b.append("</table>\n");

        long span = history.size() < 2 ? 0 : (history.get(history.size() - 1).wallMillis() - history.get(0).wallMillis()) / 1000;
        b.append("<h2>Recent history").append(span == 0 ? "" : span < 120 ? " (the last " + span + " s)" : " (the last " + span / 60 + " minutes)")
                .append("</h2>\n");
        if (history.size() < 2) {
            b.append("<p>(plots after two samples, ").append(ClusterHistory.EVERY_NANOS / 1_000_000_000L).append(" s apart)</p>\n");
        } else {
            plot(b, "space used on live chunkservers", history, x -> x.usedBytes(), true);
            plot(b, "chunks under goal", history, x -> x.underGoal(), false);
            plot(b, "chunks endangered", history, x -> x.endangered(), false);
            plot(b, "copies being made", history, x -> x.moving(), false);
            plot(b, "chunkservers alive", history, x -> x.serversAlive(), false);
        }
        return shell("Cairn cluster", b.toString());
    }

    /** One series as an SVG polyline with its range and time span labelled. */
    private static void plot(StringBuilder b, String title, List<ClusterHistory.Sample> h, ToDoubleFunction<ClusterHistory.Sample> f, boolean inBytes) {
        double max = 0;
        for (ClusterHistory.Sample x : h) max = Math.max(max, f.applyAsDouble(x));
        double top = max == 0 ? 1 : max;
        StringBuilder points = new StringBuilder();
        for (int i = 0; i < h.size(); i++) {
            double px = 40 + (PLOT_WIDTH - 50) * (double) i / (h.size() - 1);
            double py = 10 + (PLOT_HEIGHT - 30) * (1 - f.applyAsDouble(h.get(i)) / top);
            points.append(String.format(Locale.ROOT, "%.1f,%.1f ", px, py));
        }
        String last = inBytes ? bytes((long) f.applyAsDouble(h.get(h.size() - 1))) : String.valueOf((long) f.applyAsDouble(h.get(h.size() - 1)));
        b.append("<figure><figcaption>").append(esc(title)).append(": now ").append(last).append("</figcaption>")
                .append("<svg class='plot' width='").append(PLOT_WIDTH).append("' height='").append(PLOT_HEIGHT).append("' role='img' aria-label='")
                .append(esc(title)).append("'>")
                .append("<line x1='40' y1='10' x2='40' y2='").append(PLOT_HEIGHT - 20).append("' stroke='#999'/>")
                .append("<line x1='40' y1='").append(PLOT_HEIGHT - 20).append("' x2='").append(PLOT_WIDTH - 10).append("' y2='").append(PLOT_HEIGHT - 20).append("' stroke='#999'/>")
                .append("<text x='2' y='14' font-size='10'>").append(inBytes ? bytes((long) max) : String.valueOf((long) max)).append("</text>")
                .append("<text x='2' y='").append(PLOT_HEIGHT - 20).append("' font-size='10'>0</text>")
                .append("<text x='40' y='").append(PLOT_HEIGHT - 5).append("' font-size='10'>").append(CLOCK.format(Instant.ofEpochMilli(h.get(0).wallMillis()))).append("</text>")
                .append("<text x='").append(PLOT_WIDTH - 80).append("' y='").append(PLOT_HEIGHT - 5).append("' font-size='10'>")
                .append(CLOCK.format(Instant.ofEpochMilli(h.get(h.size() - 1).wallMillis()))).append(" UTC</text>")
                .append("<polyline fill='none' stroke='#337ab7' stroke-width='2' points='").append(points.toString().trim()).append("'/></svg></figure>\n");
    }

    private static void row(StringBuilder b, String name, Object value) {
        b.append("<tr><th>").append(esc(name)).append("</th><td>").append(esc(String.valueOf(value))).append("</td></tr>");
    }

    private static String shell(String title, String body) {
        return "<!DOCTYPE html>\n<html lang='en'><head><meta charset='utf-8'><meta http-equiv='refresh' content='" + REFRESH_SECONDS + "'>"
                + "<title>" + esc(title) + "</title><style>"
                + "body{font-family:sans-serif;margin:1.5em;color:#222} table{border-collapse:collapse;margin-bottom:1em}"
                + " td,th{padding:3px 10px;text-align:left} .grid td,.grid th{border:1px solid #ddd} .kv th{font-weight:normal;color:#555}"
                + " .badge{color:#fff;padding:2px 8px;border-radius:3px;font-weight:bold} .disk{padding:1px 5px;border-radius:3px;margin-right:3px}"
                + " .ok{background:#dff0d8} .warn{background:#fcf8e3} .bad{background:#f2dede} figure{margin:0 0 1em 0}"
                + " figcaption{font-size:90%;color:#555}</style></head><body>\n<h1>" + esc(title) + "</h1>\n" + body
                + "<p style='color:#888;font-size:85%'>Reloads every " + REFRESH_SECONDS + " s. Metrics for Prometheus: <a href='/metrics'>/metrics</a>.</p>"
                + "</body></html>\n";
    }

    static String bytes(long n) {
        if (n < 1024) return n + " B";
        String[] units = {"KiB", "MiB", "GiB", "TiB", "PiB"};
        double v = n;
        int u = -1;
        while (v >= 1024 && u < units.length - 1) {
            v /= 1024;
            u++;
        }
        return String.format(Locale.ROOT, "%.1f %s", v, units[u]);
    }

    static String esc(String s) {
        return s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace("'", "&#39;").replace("\"", "&quot;");
    }
}
