package dev.cairn.cli;

import java.util.Locale;

/** Parses durations such as {@code 60s}, {@code 2m}, {@code 500ms}, {@code 1h} (a bare number is seconds). */
final class Durations {
    private Durations() {}

    static long parseNanos(String s) {
        String t = s.trim().toLowerCase(Locale.ROOT);
        long unit;
        String num;
        if (t.endsWith("ms")) { unit = 1_000_000L; num = t.substring(0, t.length() - 2); }
        else if (t.endsWith("s")) { unit = 1_000_000_000L; num = t.substring(0, t.length() - 1); }
        else if (t.endsWith("m")) { unit = 60_000_000_000L; num = t.substring(0, t.length() - 1); }
        else if (t.endsWith("h")) { unit = 3_600_000_000_000L; num = t.substring(0, t.length() - 1); }
        else { unit = 1_000_000_000L; num = t; }
        try {
            double v = Double.parseDouble(num);
            if (!(v > 0) || v * unit > Long.MAX_VALUE / 2) throw new NumberFormatException();
            return (long) (v * unit);
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("bad duration '" + s + "' (use e.g. 60s, 2m, 500ms)");
        }
    }
}
