package dev.cairn.sim;

import dev.cairn.sim.runtime.SimHost;
import dev.cairn.sim.runtime.Simulation;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * The timeline page of one run ({@code ./cairn sim --seed N --trace-html FILE}): a lane per host with the
 * faults that hit it, a lane of client operations (green done, red failed), the network's faults, and the
 * violations as red rules; tables of every fault and violation below. Self-contained HTML with inline SVG.
 */
public final class Timeline {
    static final int WIDTH = 1400, LANE = 28, LEFT = 110, TOP = 30;
    /** Client operations drawn at most (a long run has tens of thousands). */
    static final int MAX_OPS = 20_000;

    private record Op(long start, long end, String op, String path, String error) {}

    private final List<Op> ops = new ArrayList<>();
    private String html = "";

    public Timeline() {}

    void operation(long start, long end, String op, String path, String error) {
        if (ops.size() < MAX_OPS) ops.add(new Op(start, end, op, path, error));
    }

    void finish(Simulation sim, FaultHistory history, SimCluster cluster) {
        List<String> lanes = new ArrayList<>();
        for (SimHost h : sim.hosts()) lanes.add(h.name());
        lanes.add("network");
        lanes.add("client ops");
        double span = Math.max(1, sim.now()) / 1e9;
        double scale = (WIDTH - LEFT - 20) / span;
        int height = TOP + LANE * lanes.size() + 30;
        StringBuilder svg = new StringBuilder();
        svg.append(String.format(Locale.ROOT, "<svg width=\"%d\" height=\"%d\" font-family=\"monospace\" font-size=\"11\">", WIDTH, height));
        for (int i = 0; i < lanes.size(); i++) {
            int y = TOP + i * LANE;
            svg.append(String.format(Locale.ROOT, "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"%s\"/>", LEFT, y, WIDTH - LEFT - 20, LANE - 2,
                    i % 2 == 0 ? "#f4f4f4" : "#ebebeb"));
            svg.append(String.format(Locale.ROOT, "<text x=\"4\" y=\"%d\">%s</text>", y + 17, esc(lanes.get(i))));
        }
        for (int s = 0; s <= span; s += Math.max(1, (int) (span / 20))) {
            double x = LEFT + s * scale;
            svg.append(String.format(Locale.ROOT, "<text x=\"%.1f\" y=\"20\">%ds</text><line x1=\"%.1f\" y1=\"24\" x2=\"%.1f\" y2=\"%d\" stroke=\"#ccc\"/>",
                    x, s, x, x, height - 30));
        }
        int clientLane = lanes.size() - 1, netLane = lanes.size() - 2;
        for (Op o : ops) {
            double x = LEFT + o.start / 1e9 * scale, w = Math.max(1, (o.end - o.start) / 1e9 * scale);
            int y = TOP + clientLane * LANE + (o.op.equals("write") ? 2 : o.op.equals("read") ? 10 : 18);
            svg.append(String.format(Locale.ROOT, "<rect x=\"%.1f\" y=\"%d\" width=\"%.1f\" height=\"6\" fill=\"%s\"><title>%s %s %.3fs-%.3fs%s</title></rect>",
                    x, y, w, o.error == null ? "#3a3" : "#d33", o.op, esc(o.path), o.start / 1e9, o.end / 1e9, o.error == null ? "" : ": " + esc(o.error)));
        }
        for (FaultHistory.Event e : history.events()) {
            int lane = netLane;
            for (int i = 0; i < lanes.size() - 2; i++) {
                String t = e.target();
                if (t.equals(lanes.get(i)) || t.startsWith(lanes.get(i) + "/") || t.startsWith(lanes.get(i) + "<") || t.startsWith(lanes.get(i) + "-")) lane = i;
            }
            double x = LEFT + e.timeNanos() / 1e9 * scale;
            int y = TOP + lane * LANE;
            svg.append(String.format(Locale.ROOT, "<rect x=\"%.1f\" y=\"%d\" width=\"3\" height=\"%d\" fill=\"%s\"><title>%.3fs %s %s: %s</title></rect>",
                    x, y, LANE - 2, color(e.kind()), e.timeNanos() / 1e9, e.kind().cliName(), esc(e.target()), esc(e.detail())));
        }
        for (String v : sim.violations()) {
            double t = parseTime(v);
            double x = LEFT + t * scale;
            svg.append(String.format(Locale.ROOT, "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" stroke=\"red\" stroke-width=\"2\"><title>%s</title></line>",
                    x, TOP, x, height - 30, esc(v)));
        }
        svg.append("</svg>");
        StringBuilder page = new StringBuilder();
        page.append("<!doctype html><html><head><meta charset=\"utf-8\"><title>cairn sim seed ").append(sim.seed()).append("</title>")
                .append("<style>body{font-family:sans-serif;margin:16px}td,th{font-family:monospace;font-size:12px;padding:1px 8px;text-align:left}"
                        + "tr:nth-child(even){background:#f4f4f4}.bad{color:#c00}</style></head><body>");
        page.append("<h2>Seed ").append(sim.seed()).append(sim.violations().isEmpty() ? " passed" : " <span class=\"bad\">failed</span>").append("</h2>");
        page.append("<p>trace hash ").append(sim.trace().hex()).append(", ").append(sim.trace().events()).append(" events, ")
                .append(String.format(Locale.ROOT, "%.1f", sim.now() / 1e9)).append(" s of virtual time. Hover a mark for details.</p>");
        page.append(svg);
        if (!sim.violations().isEmpty()) {
            page.append("<h3 class=\"bad\">Violations</h3><ul>");
            for (String v : sim.violations()) page.append("<li>").append(esc(v)).append("</li>");
            page.append("</ul>");
        }
        page.append("<h3>Faults (").append(history.total()).append(")</h3><table><tr><th>time</th><th>fault</th><th>target</th><th>detail</th></tr>");
        for (FaultHistory.Event e : history.events()) {
            page.append(String.format(Locale.ROOT, "<tr><td>%.3fs</td><td>%s</td><td>%s</td><td>%s</td></tr>", e.timeNanos() / 1e9, e.kind().cliName(),
                    esc(e.target()), esc(e.detail())));
        }
        page.append("</table></body></html>\n");
        html = page.toString();
    }

    public String html() { return html; }

    private static double parseTime(String violation) {
        try {
            return Double.parseDouble(violation.substring(2, violation.indexOf('s')));
        } catch (RuntimeException e) {
            return 0;
        }
    }

    private static String color(SimOptions.Fault f) {
        return switch (f.group) {
            case HOST -> "#c0392b";
            case DISK -> "#8e44ad";
            case NETWORK -> "#2471a3";
            case CLOCK -> "#d68910";
            case QUIET -> "#27ae60";
        };
    }

    private static String esc(String s) {
        return s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace("\"", "&quot;");
    }
}
