package dev.cairn.master.meta;

/** The durable record of a chunk: which file and index it belongs to and its current version. */
public record ChunkRecord(long chunkId, long version, long inode, int index) {
    /** True for a record AllocChunk just created (no copy holds data yet). */
    public boolean isNew() { return version == 1; }
}
