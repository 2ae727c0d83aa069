package dev.cairn.client;

import dev.cairn.core.proto.Types.ChunkVersion;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * The chunk versions one writer of one file has made durable on every copy and not yet committed: what its
 * next {@link CairnClient#commitLength commit} names. Each writer keeps its own, never one per file shared by
 * every writer on the client: a commit vouches for the writer's own view of the file (its length, the holes
 * it grew over), and a version another writer left behind after a failed commit is not part of that view (sim
 * seed 3145: a gateway commit took a failed writer's last chunk along, at a length past that chunk's copies,
 * and the master rightly counted every copy short, leaving none to read).
 */
public final class Uncommitted {
    /** Chunk id -> the newest version written, not yet committed. */
    private final Map<Long, Long> versions = new TreeMap<>();
    /** Chunk id -> where the chunk starts in the file (kept past a commit: a failed one restores its versions). */
    private final Map<Long, Long> starts = new java.util.HashMap<>();

    /**
     * {@code version} of chunk {@code chunkId} (starting at byte {@code start} of the file) is durable on every copy its
     * lease named. Another chunk id at the same start is an earlier upload of an erasure-coded chunk written afresh
     * (each rewrite gets an id of its own): this one holds everything it held, and supersedes it.
     */
    public void written(long chunkId, long start, long version) {
        versions.keySet().removeIf(id -> id != chunkId && starts.get(id) == start);
        versions.merge(chunkId, version, Math::max);
        starts.put(chunkId, start);
    }

    /**
     * What a commit of {@code length} bytes names, in chunk order, forgotten here: the chunks that start below the
     * length. A chunk wholly past it waits for a commit that reaches it: a commit vouches only for chunks its
     * length covers. Naming one past it let the chunk count as holding committed data that no committed length
     * reached; when the writer's later commit was lost (a master power loss), a file grown over that chunk by
     * another writer required its copies to reach the file's end, which they never did (sim seed 1677 at 10 s).
     */
    List<ChunkVersion> take(long length) {
        List<ChunkVersion> out = new ArrayList<>(versions.size());
        for (var it = versions.entrySet().iterator(); it.hasNext(); ) {
            Map.Entry<Long, Long> e = it.next();
            if (starts.get(e.getKey()) >= length) continue;
            out.add(new ChunkVersion(e.getKey(), e.getValue()));
            it.remove();
        }
        return out;
    }

    /** A commit of {@code taken} failed: they go with the next one. */
    void restore(List<ChunkVersion> taken) {
        for (ChunkVersion v : taken) {
            long start = starts.get(v.chunkId());
            // superseded meanwhile by a newer upload of the same erasure-coded chunk
            if (versions.keySet().stream().anyMatch(id -> id != v.chunkId() && starts.get(id) == start)) continue;
            versions.merge(v.chunkId(), v.version(), Math::max);
        }
    }

    public boolean isEmpty() { return versions.isEmpty(); }
}
