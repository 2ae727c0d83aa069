package dev.cairn.core.ec;

import java.util.Map;
import java.util.TreeMap;

/**
 * One node's erasure codecs, one per k+m profile, on the best engine that loads: coding tables are
 * prepared once per profile. Used from the node's own event loop only (not thread-safe).
 */
public final class CodecCache {
    private final Map<Integer, ErasureCodec> codecs = new TreeMap<>();

    public ErasureCodec get(int k, int m) {
        Vandermonde.check(k, m);
        return codecs.computeIfAbsent(k * 64 + m, x -> new ErasureCodec(k, m, Engines.best()));
    }
}
