package dev.cairn.core.metrics;

import java.util.HashSet;
import java.util.Locale;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * Metrics written in Prometheus's text exposition format (version 0.0.4): each family's {@code # HELP} and
 * {@code # TYPE} once, before its first sample, then {@code name{label="value",...} value} lines. Label values are
 * escaped as the format requires (backslash, double quote, newline). A node fills one of these on its own loop
 * ({@link MetricsSource}); the real runtime serves the text over HTTP.
 */
public final class MetricsText {
    private static final Pattern NAME = Pattern.compile("[a-zA-Z_:][a-zA-Z0-9_:]*");
    private static final Pattern LABEL = Pattern.compile("[a-zA-Z_][a-zA-Z0-9_]*");
    /** A family's samples must be written together: one written again after another family is a bug. */
    private final Set<String> declared = new HashSet<>();
    private final StringBuilder out = new StringBuilder(4096);
    private String current;

    /** A value that goes up and down. {@code labels}: name, value, name, value, ... */
    public MetricsText gauge(String name, String help, double value, String... labels) { return sample("gauge", name, help, value, labels); }

    /** A count that only goes up (restarting from 0 with the process); by convention its name ends in {@code _total}. */
    public MetricsText counter(String name, String help, double value, String... labels) {
        if (!name.endsWith("_total")) throw new IllegalArgumentException("counter " + name + " does not end in _total");
        return sample("counter", name, help, value, labels);
    }

    private MetricsText sample(String type, String name, String help, double value, String[] labels) {
        if (!NAME.matcher(name).matches()) throw new IllegalArgumentException("metric name " + name);
        if (labels.length % 2 != 0) throw new IllegalArgumentException("labels of " + name + " are not name/value pairs");
        if (!name.equals(current)) {
            if (!declared.add(name)) throw new IllegalStateException("samples of " + name + " written apart");
            current = name;
            out.append("# HELP ").append(name).append(' ').append(help.replace("\\", "\\\\").replace("\n", "\\n")).append('\n');
            out.append("# TYPE ").append(name).append(' ').append(type).append('\n');
        }
        line(name, value, labels);
        return this;
    }

    /** One labelled series of a histogram family. */
    public record Series(LatencyHistogram histogram, String... labels) {}

    /**
     * A histogram family in seconds: for each series its cumulative {@code _bucket{le="..."}} lines, then {@code _sum}
     * and {@code _count}; all under one {@code # TYPE name histogram}.
     */
    public MetricsText histogram(String name, String help, java.util.List<Series> series) {
        if (!NAME.matcher(name).matches()) throw new IllegalArgumentException("metric name " + name);
        if (!declared.add(name)) throw new IllegalStateException("samples of " + name + " written apart");
        current = name;
        out.append("# HELP ").append(name).append(' ').append(help.replace("\\", "\\\\").replace("\n", "\\n")).append('\n');
        out.append("# TYPE ").append(name).append(" histogram\n");
        for (Series s : series) {
            long[] counts = s.histogram().counts();
            long cumulative = 0;
            for (int i = 0; i < counts.length; i++) {
                cumulative += counts[i];
                String le = i < LatencyHistogram.BOUNDS.length ? format(LatencyHistogram.BOUNDS[i]) : "+Inf";
                line(name + "_bucket", cumulative, withLabel(s.labels(), "le", le));
            }
            line(name + "_sum", s.histogram().sumSeconds(), s.labels());
            line(name + "_count", cumulative, s.labels());
        }
        return this;
    }

    private static String[] withLabel(String[] labels, String name, String value) {
        String[] out = java.util.Arrays.copyOf(labels, labels.length + 2);
        out[labels.length] = name;
        out[labels.length + 1] = value;
        return out;
    }

    private void line(String name, double value, String[] labels) {
        if (labels.length % 2 != 0) throw new IllegalArgumentException("labels of " + name + " are not name/value pairs");
        out.append(name);
        if (labels.length > 0) {
            out.append('{');
            for (int i = 0; i < labels.length; i += 2) {
                if (!LABEL.matcher(labels[i]).matches()) throw new IllegalArgumentException("label name " + labels[i] + " of " + name);
                if (i > 0) out.append(',');
                out.append(labels[i]).append("=\"").append(escape(labels[i + 1])).append('"');
            }
            out.append('}');
        }
        out.append(' ').append(format(value)).append('\n');
    }

    private static String escape(String v) {
        return v.replace("\\", "\\\\").replace("\"", "\\\"").replace("\n", "\\n");
    }

    private static String format(double v) {
        if (Double.isNaN(v)) return "NaN";
        if (Double.isInfinite(v)) return v > 0 ? "+Inf" : "-Inf";
        if (v == Math.rint(v) && Math.abs(v) < 1e15) return Long.toString((long) v);
        // plain decimals where they are short (0.0005, not 5.0E-4); both parse, the plain one reads better
        if (Math.abs(v) >= 1e-9 && Math.abs(v) < 1e15) return java.math.BigDecimal.valueOf(v).stripTrailingZeros().toPlainString();
        return String.format(Locale.ROOT, "%s", v);
    }

    public String text() { return out.toString(); }
}
