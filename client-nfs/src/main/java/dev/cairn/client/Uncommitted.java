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
    /** Chunk id -> the newest version written. */
    private final Map<Long, Long> versions = new TreeMap<>();

    /** {@code version} of chunk {@code chunkId} is durable on every copy its lease named. */
    void written(long chunkId, long version) { versions.merge(chunkId, version, Math::max); }

    /** Everything written, in chunk order, handed to a commit (and forgotten here). */
    List<ChunkVersion> take() {
        List<ChunkVersion> out = new ArrayList<>(versions.size());
        for (Map.Entry<Long, Long> e : versions.entrySet()) out.add(new ChunkVersion(e.getKey(), e.getValue()));
        versions.clear();
        return out;
    }

    /** A commit of {@code taken} failed: they go with the next one. */
    void restore(List<ChunkVersion> taken) {
        for (ChunkVersion v : taken) written(v.chunkId(), v.version());
    }

    public boolean isEmpty() { return versions.isEmpty(); }
}
