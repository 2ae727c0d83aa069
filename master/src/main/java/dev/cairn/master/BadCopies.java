package dev.cairn.master;

import dev.cairn.core.proto.Types.ChunkReport;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * Copies chunkservers reported corrupt, remembered across their restarts. A chunkserver keeps its mark on a corrupt
 * copy in memory only, so once restarted it reports the copy whole again; taken at its word, the master counted it
 * current, stopped repairing the chunk, and could drop a good copy as extra in its favour. A copy reported again at
 * the version it was reported bad at stays bad until it is deleted or replaced by another version. Bounded (the
 * oldest marks go first); lost with the master's own restart, after which the scrubber finds the copy again.
 */
final class BadCopies {
    /** Marks kept at most: a few bytes each, far more than a cluster repairs at once. */
    static final int MAX_MARKS = 1 << 16;

    private record Key(String serverId, long chunkId) {}

    private final Map<Key, Long> marks = new LinkedHashMap<>(16, 0.75f, false) {
        @Override protected boolean removeEldestEntry(Map.Entry<Key, Long> eldest) { return size() > MAX_MARKS; }
    };

    /** {@code serverId} reported its copy of the chunk at {@code version} corrupt. */
    void add(String serverId, long chunkId, long version) { marks.put(new Key(serverId, chunkId), version); }

    /** The copy is gone from {@code serverId} (deleted, or the server's disk with it). */
    void forget(String serverId, long chunkId) { marks.remove(new Key(serverId, chunkId)); }

    /**
     * The report as the master judges it: marked bad if the server reported this copy bad before (a report of it as bad
     * is remembered); a new version clears the mark.
     */
    ChunkReport judge(String serverId, ChunkReport c) {
        if (c.bad()) {
            add(serverId, c.chunkId(), c.version());
            return c;
        }
        if (marks.isEmpty()) return c;
        Key k = new Key(serverId, c.chunkId());
        Long version = marks.get(k);
        if (version == null) return c;
        if (version != c.version()) {
            marks.remove(k);
            return c;
        }
        return new ChunkReport(c.chunkId(), c.version(), c.length(), c.part(), true, c.writable());
    }

    int size() { return marks.size(); }
}
