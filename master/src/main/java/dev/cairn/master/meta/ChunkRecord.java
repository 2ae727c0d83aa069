package dev.cairn.master.meta;

/**
 * The durable record of a chunk: which file and index it belongs to, its version (the last write lease's)
 * and its data version (the lease version of the last write a commit acknowledged; 0 until one is: a chunk
 * allocated and never committed holds nothing anyone was told is durable, be it past the file's end or in a
 * hole the file grew over).
 *
 * <p>Why two versions: a lease bumps only the copies its writer can reach. A copy left out stays at its
 * version; it holds every acknowledged byte until a write under a later lease is committed, and only then
 * becomes outdated. If the bumped copies die before anything is written, the left-out ones still hold the
 * file's data and must be read, not thrown away as stale. So a replicated copy is current from
 * {@code dataVersion} to {@code version}. An erasure-coded part must be at {@code version} exactly: parts
 * of two placements must never be mixed in one stripe.
 */
public record ChunkRecord(long chunkId, long version, long inode, int index, long dataVersion) {
    public ChunkRecord {
        assert 0 <= dataVersion && dataVersion <= version : "chunk " + chunkId + " data version " + dataVersion + " outside 0..v" + version;
    }

    /** True once a commit acknowledged a write to this chunk. */
    public boolean committed() { return dataVersion > 0; }

    /** True for a record AllocChunk just created (no copy holds data yet). */
    public boolean isNew() { return version == 1; }

    public ChunkRecord withVersion(long v) { return new ChunkRecord(chunkId, v, inode, index, dataVersion); }

    public ChunkRecord withDataVersion(long v) { return new ChunkRecord(chunkId, version, inode, index, v); }

    /** Whether a copy at {@code copyVersion} holds every acknowledged byte (length and integrity aside). */
    public boolean current(long copyVersion, boolean erasureCoded) {
        return erasureCoded ? copyVersion == version : dataVersion <= copyVersion && copyVersion <= version;
    }
}
