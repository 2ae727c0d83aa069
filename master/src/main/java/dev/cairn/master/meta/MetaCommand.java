package dev.cairn.master.meta;

import dev.cairn.core.proto.StorageClass;
import dev.cairn.core.proto.Types.AttrChange;
import dev.cairn.core.proto.Types.ChunkVersion;
import dev.cairn.core.proto.Types.FileAttr;
import dev.cairn.core.proto.Types.FileType;
import java.util.List;

/**
 * A mutation of the master's durable state. Commands are applied in log order by every replica of the
 * state machine, so they carry everything non-deterministic (the leader's wall time) as data.
 *
 * @param <R> what applying the command returns to its submitter
 */
public sealed interface MetaCommand<R> {
    /**
     * A command made for a client operation that is not idempotent, under the op id the client keeps across
     * retries ({@link dev.cairn.core.proto.MasterProtocol}, 0: none). Applying it records its outcome with its
     * change; applying it again (a retry that reached a new leader) changes nothing and returns that outcome.
     */
    sealed interface Op permits Mkdir, CreateFile, Remove, CreateIn, Unlink, Rename, Link, SetXattr {
        long op();
    }

    record Mkdir(String path, long mtimeMillis, long op) implements MetaCommand<FileAttr>, Op {
        public Mkdir(String path, long mtimeMillis) { this(path, mtimeMillis, 0); }
    }

    record CreateFile(String path, int chunkSize, StorageClass storageClass, long mtimeMillis, long op) implements MetaCommand<FileAttr>, Op {
        public CreateFile(String path, int chunkSize, StorageClass storageClass, long mtimeMillis) { this(path, chunkSize, storageClass, mtimeMillis, 0); }
    }

    /** Removes a file (returning its chunk ids) or an empty directory. */
    record Remove(String path, long op) implements MetaCommand<List<Long>>, Op {
        public Remove(String path) { this(path, 0); }
    }

    /**
     * Creates {@code name} in directory {@code parent}: a file, a directory or a symlink to {@code target}.
     * With a non-zero {@code verifier} (NFS exclusive create) an existing file made with the same verifier
     * is the answer rather than EXISTS, so a retransmitted create succeeds.
     */
    record CreateIn(long parent, String name, FileType type, int mode, int uid, int gid, String target, int chunkSize,
                    StorageClass storageClass, long verifier, long timeMillis, long op) implements MetaCommand<Changed>, Op {
        public CreateIn(long parent, String name, FileType type, int mode, int uid, int gid, String target, int chunkSize,
                        StorageClass storageClass, long verifier, long timeMillis) {
            this(parent, name, type, mode, uid, gid, target, chunkSize, storageClass, verifier, timeMillis, 0);
        }
    }

    /** Removes a name: a file's inode (and its chunks, returned) goes with its last name; a directory must be empty. */
    record Unlink(long parent, String name, long timeMillis, long op) implements MetaCommand<Changed>, Op {
        public Unlink(long parent, String name, long timeMillis) { this(parent, name, timeMillis, 0); }
    }

    /**
     * Moves a name, replacing what the target name held as POSIX rename does (a directory only by an empty
     * directory, a file only by a non-directory). Returns the chunks of a file that lost its last name.
     */
    record Rename(long fromDir, String fromName, long toDir, String toName, long timeMillis, long op) implements MetaCommand<Changed>, Op {
        public Rename(long fromDir, String fromName, long toDir, String toName, long timeMillis) { this(fromDir, fromName, toDir, toName, timeMillis, 0); }
    }

    /** Gives a file (not a directory) another name. */
    record Link(long inode, long dir, String name, long timeMillis, long op) implements MetaCommand<Changed>, Op {
        public Link(long inode, long dir, String name, long timeMillis) { this(inode, dir, name, timeMillis, 0); }
    }

    /** Changes mode, owner, times or size; a shorter size drops the chunks past it (returned). */
    record SetAttr(long inode, AttrChange change, long timeMillis) implements MetaCommand<AttrResult> {}

    record AttrResult(FileAttr attr, List<Long> freedChunks) {}

    /**
     * Sets or removes an extended attribute of an inode ({@code how}: {@link dev.cairn.core.proto.MasterProtocol#XATTR_EITHER}
     * and the rest), within the limits there; the inode's ctime and change attribute move. Returns its attributes.
     */
    record SetXattr(long inode, String name, byte[] value, int how, long timeMillis, long op) implements MetaCommand<FileAttr>, Op {
        // a record compares arrays by identity: a command read back from the log must equal the one written
        @Override public boolean equals(Object o) {
            return o instanceof SetXattr x && x.inode == inode && x.name.equals(name) && java.util.Arrays.equals(x.value, value) && x.how == how
                    && x.timeMillis == timeMillis && x.op == op;
        }

        @Override public int hashCode() { return java.util.Objects.hash(inode, name, java.util.Arrays.hashCode(value), how, timeMillis, op); }

        @Override public String toString() {
            return "SetXattr[inode=" + inode + ", name=" + name + ", " + value.length + " bytes, how=" + how + ", time=" + timeMillis + ", op=" + op + "]";
        }
    }

    /**
     * What a namespace change did: the inode it made, named or moved ({@link dev.cairn.core.proto.Types#NO_ATTR}
     * for a removal), the directories it changed as they are now (in the command's order: source, then
     * target), and the chunks of a file that lost its last name.
     */
    record Changed(FileAttr attr, List<FileAttr> dirs, List<Long> freedChunks) {}

    /** Returns the chunk at (inode, index), allocating it at version 1 if it does not exist. */
    record AllocChunk(long inode, int index) implements MetaCommand<ChunkRecord> {}

    /** Bumps a chunk's version above every version handed out (a new write lease) and returns the new record. */
    record BumpVersion(long chunkId) implements MetaCommand<ChunkRecord> {}

    /**
     * Reserves the next version of a chunk for a bump sent to its holders before it is recorded, and returns it.
     * Durable before any holder hears of it: a master that loses power after a holder took the bump and before
     * recording it must never hand the same version out again with other writes (a copy at that version would
     * count as current without them).
     */
    record ReserveVersion(long chunkId) implements MetaCommand<Long> {}

    /**
     * A chunkserver holds the chunk at a higher version than recorded: a bump reached it and the master
     * lost power before recording it (bumps go to the chunkservers first). The record takes that version.
     */
    record AdoptVersion(long chunkId, long version) implements MetaCommand<ChunkRecord> {}

    /**
     * A writer committed {@code length} bytes: the size becomes at least that (a commit never shrinks a file),
     * and each listed chunk's data version becomes the version it was written at. Refused if a listed chunk
     * has been leased again since (see {@link ChunkRecord}).
     */
    record SetLength(long inode, long length, long mtimeMillis, List<ChunkVersion> chunks) implements MetaCommand<FileAttr> {}

    /**
     * A writer committed {@code length} bytes, some of them in erasure-coded chunks it wrote afresh under new ids
     * ({@code rewritten}; an erasure-coded chunk is never written twice in place). Each new chunk takes the place of
     * its file's chunk at its index, refused ({@code STALE}) unless that is still the chunk the rewrite started from,
     * at the same version (no other writer changed it meanwhile); then the rest as {@link SetLength}, in one step.
     * Returns the ids of the chunks replaced, to be deleted.
     */
    record CommitRewrite(long inode, long length, long mtimeMillis, List<ChunkVersion> chunks, List<Rewritten> rewritten)
            implements MetaCommand<List<Long>> {}

    /**
     * Sets the storage class of a file, or the class a directory hands to files and directories created
     * under it. A file holding data may change its copy count, domain or disk label, not between
     * replicated and erasure-coded (that needs its data rewritten).
     */
    record SetClass(String path, StorageClass storageClass) implements MetaCommand<FileAttr> {}

    /** Reserves {@code count} fresh chunk ids (for a file being rewritten) and returns the first. */
    record ReserveChunkIds(int count) implements MetaCommand<Long> {}

    /** One chunk of a file rewritten in its archive class: the chunk it replaces (at that version) and its new id. */
    record Rewritten(int index, long oldChunkId, long oldVersion, long newChunkId) {}

    /**
     * Swaps a file's chunks for their rewritten copies and sets its class, in one step; refused unless
     * the file is exactly as it was when the rewrite started (same mtime and size, same chunks at the
     * same versions: no write lease since). Returns the old chunk ids, to be deleted.
     */
    record Archive(long inode, long mtimeMillis, long size, StorageClass storageClass, List<Rewritten> chunks) implements MetaCommand<List<Long>> {}

    /**
     * Creates the empty namespace if the store holds none (a master group's first leader proposes it, so
     * every replica's root carries the same time); a no-op, returning false, on a store that holds one.
     */
    record Format(long mtimeMillis) implements MetaCommand<Boolean> {}

    /**
     * Changes nothing. A new leader's first command: once it is applied, so is every command committed
     * before it, and the leader's state is complete enough to serve.
     */
    record Barrier(long nonce) implements MetaCommand<Long> {}

    /**
     * A chunkserver registered for the first time: the durable list the start-up grace window waits for
     * (a replicated fact, so that a new leader waits for the same servers). Returns false if already listed.
     */
    record ServerKnown(String serverId) implements MetaCommand<Boolean> {}

    /** Marks a chunkserver for removal (its chunks move elsewhere) or back in service. Returns the mark as it was. */
    record SetDraining(String serverId, boolean draining) implements MetaCommand<Boolean> {}
}
