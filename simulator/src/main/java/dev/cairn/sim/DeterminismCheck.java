package dev.cairn.sim;

import java.util.Arrays;

/**
 * Runs a seed twice and compares the two event sequences (virtual time, host, kind, digest of each
 * executed event). The first run keeps one 64-bit fingerprint per event; the second compares as it goes
 * and keeps the text of the first event that differs; a third run of the first options recovers that
 * event's text on the other side. Same seed, same events is the simulator's whole promise.
 */
public final class DeterminismCheck {
    /** Events fingerprinted at most (8 bytes each). */
    static final int MAX_EVENTS = 50_000_000;

    /**
     * @param firstDiverging index of the first event that differs (-1: none)
     * @param first the first run's event there ("(none)" past its end), second likewise
     */
    public record Outcome(String hashA, String hashB, long events, long firstDiverging, String first, String second, SimResult resultA) {
        public boolean deterministic() { return firstDiverging < 0 && hashA.equals(hashB); }
    }

    private DeterminismCheck() {}

    public static Outcome run(SimOptions o) { return compare(o, o); }

    /** Compares the runs of two options (the same ones for a determinism check; different ones prove it can fail). */
    public static Outcome compare(SimOptions a, SimOptions b) {
        long[][] prints = {new long[1 << 16]};
        int[] n = {0};
        SimResult ra = SimRun.run(a, line -> {
            if (n[0] == MAX_EVENTS) return;
            if (n[0] == prints[0].length) prints[0] = Arrays.copyOf(prints[0], prints[0].length * 2);
            prints[0][n[0]++] = fingerprint(line);
        });
        long[] i = {0};
        long[] diverged = {-1};
        String[] second = {"(none)"};
        SimResult rb = SimRun.run(b, line -> {
            long at = i[0]++;
            if (diverged[0] >= 0 || at >= MAX_EVENTS) return;
            if (at >= n[0] || prints[0][(int) at] != fingerprint(line)) {
                diverged[0] = at;
                second[0] = line;
            }
        });
        if (diverged[0] < 0 && i[0] < n[0]) diverged[0] = i[0]; // the second run stopped early
        String first = "(none)";
        if (diverged[0] >= 0) {
            long target = diverged[0];
            long[] j = {0};
            String[] found = {"(none)"};
            SimRun.run(a, line -> {
                if (j[0]++ == target) found[0] = line;
            });
            first = found[0];
        }
        return new Outcome(ra.traceHash(), rb.traceHash(), ra.events(), diverged[0], first, second[0], ra);
    }

    /** FNV-1a over the event's text, finished with a SplitMix step. */
    private static long fingerprint(String line) {
        long h = 0xcbf29ce484222325L;
        for (int k = 0; k < line.length(); k++) {
            h ^= line.charAt(k);
            h *= 0x100000001b3L;
        }
        h = (h ^ (h >>> 30)) * 0xbf58476d1ce4e5b9L;
        return h ^ (h >>> 31);
    }
}
