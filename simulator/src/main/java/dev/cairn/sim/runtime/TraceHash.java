package dev.cairn.sim.runtime;

/**
 * A running 64-bit hash over every event the simulation executes (virtual time, host, kind, digest).
 * Two runs with the same seed must fold the same sequence; the first event where they differ is where
 * determinism broke.
 */
public final class TraceHash {
    private long h = 0xcbf29ce484222325L;
    private long events;

    public void fold(long time, int host, int kind, long digest) {
        h = mix(h ^ time);
        h = mix(h ^ ((long) host << 32 | (kind & 0xffffffffL)));
        h = mix(h ^ digest);
        events++;
    }

    public long value() { return h; }

    public long events() { return events; }

    public String hex() { return String.format(java.util.Locale.ROOT, "%016x", h); }

    /** A strong 64-bit finaliser (from SplitMix64) so neighbouring inputs diverge. */
    static long mix(long z) {
        z = (z ^ (z >>> 30)) * 0xbf58476d1ce4e5b9L;
        z = (z ^ (z >>> 27)) * 0x94d049bb133111ebL;
        return z ^ (z >>> 31);
    }
}
