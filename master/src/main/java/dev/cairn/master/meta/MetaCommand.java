package dev.cairn.master.meta;

import dev.cairn.core.proto.StorageClass;
import dev.cairn.core.proto.Types.FileAttr;
import java.util.List;

/**
 * A mutation of the master's durable state. Commands are applied in log order by every replica of the
 * state machine, so they carry everything non-deterministic (the leader's wall time) as data.
 *
 * @param <R> what applying the command returns to its submitter
 */
public sealed interface MetaCommand<R> {
    record Mkdir(String path, long mtimeMillis) implements MetaCommand<FileAttr> {}

    record CreateFile(String path, int chunkSize, StorageClass storageClass, long mtimeMillis) implements MetaCommand<FileAttr> {}

    /** Removes a file (returning its chunk ids) or an empty directory. */
    record Remove(String path) implements MetaCommand<List<Long>> {}

    /** Returns the chunk at (inode, index), allocating it at version 1 if it does not exist. */
    record AllocChunk(long inode, int index) implements MetaCommand<ChunkRecord> {}

    /** Bumps a chunk's version (a new write lease) and returns the new record. */
    record BumpVersion(long chunkId) implements MetaCommand<ChunkRecord> {}

    record SetLength(long inode, long length, long mtimeMillis) implements MetaCommand<FileAttr> {}

    /**
     * Sets the storage class of a file, or the class a directory hands to files and directories created
     * under it. A file holding data may change its copy count, domain or disk label, not between
     * replicated and erasure-coded (that needs its data rewritten).
     */
    record SetClass(String path, StorageClass storageClass) implements MetaCommand<FileAttr> {}
}
