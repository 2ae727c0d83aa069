package dev.cairn.core.proto;

import dev.cairn.core.env.Address;
import dev.cairn.core.proto.Types.ChunkLocation;
import dev.cairn.core.proto.Types.ChunkReport;
import dev.cairn.core.proto.Types.DirEntry;
import dev.cairn.core.proto.Types.DiskReport;
import dev.cairn.core.proto.Types.FileAttr;
import dev.cairn.core.proto.Types.ServerRef;
import dev.cairn.core.proto.Types.Topology;
import java.util.List;

/** Messages to and from the master: chunkserver membership, namespace, chunk leases and locations. */
public sealed interface MasterProtocol extends Message {
    /** A reply's outcome; OK for a message that carries none (records with a {@code status} component override it). */
    default Status status() { return Status.OK; }

    /** A reply's reason for failing; empty for a message that carries none. */
    default String detail() { return ""; }

    /**
     * How an {@code UNAVAILABLE} answer begins when the master lost its leadership with the change under way: the
     * change may still commit under the new leader, and a caller retries it there under the same op id, whether or
     * not the deposed master knew the new leader to name it ({@code leader=}).
     */
    String LEADERSHIP_LOST = "this master lost its leadership";


    // ---- chunkserver -> master ----

    /** Sent on every chunkserver start (new incarnation) and when the master no longer knows it. */
    record Register(long rid, String serverId, long incarnation, Address dataAddress, Topology topology,
                    long capacityBytes, long usedBytes, List<ChunkReport> chunks) implements MasterProtocol {}

    /**
     * A chunkserver's full list of chunks, sent now and then while it stays registered (garbage collection
     * by reconciliation, as GFS does): the master answers with the chunks to delete (removed files), marks
     * outdated copies stale and learns copies it lost track of. Answered with a {@link RegisterReply}.
     */
    record ChunkInventory(long rid, String serverId, long incarnation, List<ChunkReport> chunks) implements MasterProtocol {}

    /** Chunks the master wants deleted (removed files, or unknown to it), from the master of leader term {@code term} (see {@link Fenced}). */
    record RegisterReply(long rid, Status status, List<Long> deleteChunks, long term) implements MasterProtocol {
        public RegisterReply(long rid, Status status, List<Long> deleteChunks) { this(rid, status, deleteChunks, 0); }

        @Override public boolean isReply() { return true; }
    }

    record Heartbeat(long rid, String serverId, long incarnation, long capacityBytes, long usedBytes, int chunkCount, List<DiskReport> disks)
            implements MasterProtocol {}

    /**
     * {@code known=false} tells the chunkserver to register again; {@code slowDisks} names its disks whose
     * latency the master judges far above their peers' (they get no new chunks).
     */
    record HeartbeatReply(long rid, boolean known, List<String> slowDisks, long term) implements MasterProtocol {
        public HeartbeatReply(long rid, boolean known, List<String> slowDisks) { this(rid, known, slowDisks, 0); }

        @Override public boolean isReply() { return true; }
    }

    /** A copy failed its checksum or its disk; the master stops handing it out. Answered with Ack. */
    record ReportBad(long rid, String serverId, long chunkId, long version, String reason) implements MasterProtocol {}

    // ---- client -> master (namespace) ----
    //
    // A request that is not idempotent (mkdir, create, remove, and the by-inode create, unlink, rename, link) carries
    // {@code op}: an id its client gives the operation once and keeps across retries (0: none). A master group
    // records the outcome of each op with the change itself, so a retry sent to a new leader after the first
    // attempt's answer was lost gets that outcome, not the effect of doing it twice (EXISTS, NOT_FOUND).

    record Lookup(long rid, String path) implements MasterProtocol {}

    record Mkdir(long rid, String path, long op) implements MasterProtocol {
        public Mkdir(long rid, String path) { this(rid, path, 0); }
    }

    /** Creates an empty file; chunkSize 0 and {@link StorageClass#DEFAULT} mean the master's defaults. */
    record Create(long rid, String path, int chunkSize, StorageClass storageClass, long op) implements MasterProtocol {
        public Create(long rid, String path, int chunkSize, StorageClass storageClass) { this(rid, path, chunkSize, storageClass, 0); }
    }

    record AttrReply(long rid, Status status, String detail, FileAttr attr) implements MasterProtocol {
        @Override public boolean isReply() { return true; }
    }

    record ListDir(long rid, String path) implements MasterProtocol {}

    record ListReply(long rid, Status status, String detail, List<DirEntry> entries) implements MasterProtocol {
        @Override public boolean isReply() { return true; }
    }

    /** Removes a file or an empty directory. Answered with Ack. */
    record Remove(long rid, String path, long op) implements MasterProtocol {
        public Remove(long rid, String path) { this(rid, path, 0); }
    }

    // ---- client -> master (namespace by inode: what the NFS gateway uses) ----

    /** The attributes of an inode. Answered with AttrReply. */
    record GetAttr(long rid, long inode) implements MasterProtocol {}

    /** {@code name} in directory {@code dir} ("." and ".." included). Answered with AttrReply. */
    record LookupIn(long rid, long dir, String name) implements MasterProtocol {}

    /** Up to {@code maxEntries} entries of {@code dir} after {@code cookie} (0: the start). */
    record ReadDir(long rid, long dir, long cookie, int maxEntries) implements MasterProtocol {
        public static final int MAX_ENTRIES = 4096;
    }

    record DirReply(long rid, Status status, String detail, FileAttr dir, List<Types.DirCookieEntry> entries, boolean eof) implements MasterProtocol {
        @Override public boolean isReply() { return true; }
    }

    /**
     * Creates a file, directory or symlink ({@code target}) named {@code name} in {@code parent}; a non-zero
     * {@code verifier} makes it an exclusive create that a retransmission with the same verifier repeats
     * harmlessly. Answered with ChangeReply.
     */
    record CreateIn(long rid, long parent, String name, Types.FileType type, int mode, int uid, int gid, String target, int chunkSize,
                    StorageClass storageClass, long verifier, long op) implements MasterProtocol {
        public CreateIn(long rid, long parent, String name, Types.FileType type, int mode, int uid, int gid, String target, int chunkSize,
                        StorageClass storageClass, long verifier) {
            this(rid, parent, name, type, mode, uid, gid, target, chunkSize, storageClass, verifier, 0);
        }
    }

    /** Removes a name (a directory must be empty). Answered with ChangeReply. */
    record Unlink(long rid, long parent, String name, long op) implements MasterProtocol {
        public Unlink(long rid, long parent, String name) { this(rid, parent, name, 0); }
    }

    /** POSIX rename. Answered with ChangeReply (dirs: source, target). */
    record Rename(long rid, long fromDir, String fromName, long toDir, String toName, long op) implements MasterProtocol {
        public Rename(long rid, long fromDir, String fromName, long toDir, String toName) { this(rid, fromDir, fromName, toDir, toName, 0); }
    }

    /** Another name for a file. Answered with ChangeReply. */
    record Link(long rid, long inode, long dir, String name, long op) implements MasterProtocol {
        public Link(long rid, long inode, long dir, String name) { this(rid, inode, dir, name, 0); }
    }

    /** Mode, owner, times, size. Answered with AttrReply. */
    record SetAttr(long rid, long inode, Types.AttrChange change) implements MasterProtocol {}

    /**
     * Extended attributes of an inode (RFC 8276's user namespace, as the NFS gateway serves them): names are 1 to
     * {@link #MAX_XATTR_NAME_BYTES} bytes of UTF-8 without NUL, values at most {@link #MAX_XATTR_VALUE_BYTES}; an inode
     * holds at most {@link #MAX_XATTRS} of them and {@link #MAX_XATTR_BYTES} of names and values together.
     */
    int MAX_XATTR_NAME_BYTES = 255;
    /** Linux's XATTR_SIZE_MAX: the largest value a client can set. */
    int MAX_XATTR_VALUE_BYTES = 64 * 1024;
    int MAX_XATTRS = 1024;
    /** Names and values of one inode together: keeps a listing and the inode's store footprint bounded. */
    int MAX_XATTR_BYTES = 1 << 20;

    /** The value of extended attribute {@code name}. Answered with XattrReply (its value; NOT_FOUND "xattr …" if unset). */
    record GetXattr(long rid, long inode, String name) implements MasterProtocol {}

    /** The names of an inode's extended attributes, in name order. Answered with XattrReply (its names). */
    record ListXattrs(long rid, long inode) implements MasterProtocol {}

    /**
     * Sets ({@link #XATTR_EITHER}, {@link #XATTR_CREATE}: EXISTS if set, {@link #XATTR_REPLACE}: NOT_FOUND if unset) or
     * removes ({@link #XATTR_REMOVE}, value empty: NOT_FOUND if unset) an extended attribute; the inode's ctime and change
     * attribute move. Answered with XattrReply (the inode's attributes after).
     */
    record SetXattr(long rid, long inode, String name, byte[] value, int how, long op) implements MasterProtocol {}

    /** How a {@link SetXattr} sets: RFC 8276's setxattr_option4 values, then removal. */
    int XATTR_EITHER = 0, XATTR_CREATE = 1, XATTR_REPLACE = 2, XATTR_REMOVE = 3;

    record XattrReply(long rid, Status status, String detail, FileAttr attr, byte[] value, List<String> names) implements MasterProtocol {
        @Override public boolean isReply() { return true; }
    }

    /** The inode a change made or moved ({@link Types#NO_ATTR} for a removal) and the directories it changed, as they are now. */
    record ChangeReply(long rid, Status status, String detail, FileAttr attr, List<FileAttr> dirs) implements MasterProtocol {
        @Override public boolean isReply() { return true; }
    }

    // ---- client -> master (data) ----

    /**
     * Asks to write chunk {@code index} of a file. The master allocates the chunk or bumps its version on
     * the live copies (leaving out {@code exclude}), and answers with the chain to stream to; for an
     * erasure-coded file the chain has k+m servers and server i takes part i.
     */
    /**
     * A write lease on chunk {@code index} of a file, leaving out the servers in {@code exclude}. {@code basedOn}
     * matters only for an erasure-coded chunk holding committed data, which the writer uploads whole: the chunk id
     * its image of the chunk was read from ({@link #NOTHING_READ}: it read none, the chunk held nothing then), and
     * the lease is refused ({@code STALE}) if the file's chunk is another one now, since the upload would undo the
     * change that replaced it; {@link #ANY_BASE}: no such condition.
     */
    record WriteLease(long rid, long inode, int index, List<String> exclude, long basedOn) implements MasterProtocol {
        public static final long ANY_BASE = -1;
        public static final long NOTHING_READ = 0;

        public WriteLease(long rid, long inode, int index, List<String> exclude) { this(rid, inode, index, exclude, ANY_BASE); }
    }

    record LeaseReply(long rid, Status status, String detail, long chunkId, long version, List<ServerRef> chain, StorageClass storageClass)
            implements MasterProtocol {
        @Override public boolean isReply() { return true; }
    }

    /**
     * Sets the file's length after its data is durable on every copy, and records the lease version each
     * listed chunk was written at since the last commit: from then on a copy of that chunk at an older
     * version no longer holds every acknowledged byte. Refused (STALE) when a listed chunk has been leased
     * again since: the later lease may have moved copies on without this data. Answered with AttrReply: the file's
     * attributes once committed ({@link Types#NO_ATTR} if the file is gone by then), which a writer would otherwise
     * ask for with a GetAttr.
     */
    record CommitLength(long rid, long inode, long length, List<Types.ChunkVersion> chunks) implements MasterProtocol {
        /** Chunks one commit may list; a writer with more sends several. */
        public static final int MAX_CHUNKS = 4096;
    }

    record GetChunks(long rid, long inode, int fromIndex, int count) implements MasterProtocol {}

    record ChunksReply(long rid, Status status, String detail, FileAttr attr, List<ChunkLocation> chunks)
            implements MasterProtocol {
        @Override public boolean isReply() { return true; }
    }

    // ---- master -> chunkserver ----

    /**
     * A command that changes what a chunkserver stores, sent by the master of leader term {@code term} (0 for a
     * single master). A chunkserver refuses ({@link Status#NOT_LEADER}) a command of a term older than the newest
     * it has heard of: a deposed leader that has not noticed yet cannot create, bump, copy or delete anything.
     */
    sealed interface Fenced permits CreateChunk, BumpVersion, DeleteChunk, ReplicateChunk, ConvertChunk, VerifyChunk, CloseWindow {
        long term();
    }

    /**
     * Creates an empty chunk copy (or part {@code part} of an erasure-coded chunk) at {@code version}. Answered with Ack.
     * {@code nothingCommitted}: the master's record of the chunk says no write to it was ever acknowledged, so a copy
     * here at an older version holds nothing anyone was promised and gives way even if it holds durable bytes
     * (a leftover of an upload that failed before its commit). Without it such a copy refuses the new one.
     */
    record CreateChunk(long rid, long chunkId, long version, int part, int capacity, boolean nothingCommitted, long term)
            implements MasterProtocol, Fenced {
        public CreateChunk(long rid, long chunkId, long version, int part, int capacity) { this(rid, chunkId, version, part, capacity, false, 0); }

        /** A copy of the largest chunk (capacity {@link dev.cairn.core.chunk.ChunkFormat#MAX_BLOCKS} blocks). */
        public CreateChunk(long rid, long chunkId, long version, int part) { this(rid, chunkId, version, part, dev.cairn.core.chunk.ChunkFormat.MAX_BLOCKS); }
    }

    /**
     * Moves a copy from {@code fromVersion} to {@code toVersion}; STALE if the copy is not at fromVersion. A copy
     * longer than {@code cutTo} bytes is cut to it first ({@link #NO_CUT}: left as it is): the master names the
     * chunk's share of the file's committed length, so bytes past it (writes never committed, or left by a
     * shrink) are gone before the new lease's writer writes, and a writer growing the file past a partly written
     * chunk needs to send no zeros over the gap, which could land on another writer's committed bytes.
     */
    record BumpVersion(long rid, long chunkId, long fromVersion, long toVersion, long cutTo, long term) implements MasterProtocol, Fenced {
        public static final long NO_CUT = -1;

        public BumpVersion(long rid, long chunkId, long fromVersion, long toVersion) { this(rid, chunkId, fromVersion, toVersion, NO_CUT, 0); }
    }

    /**
     * Master to chunkserver: check every block of the copy of {@code chunkId} at {@code version} against its checksums
     * (the durable places unsynced writes shadow included) and answer OK, or CORRUPT (the copy is then marked bad and
     * reported, as a scrubber's finding is). Asked of a copy the master remembers as reported corrupt when its server
     * registers it again whole: a restart drops the server's own mark, and the report may have been of bytes never made
     * durable, which the restart dropped too.
     */
    record VerifyChunk(long rid, long chunkId, long version, long term) implements MasterProtocol, Fenced {}

    /**
     * Master to chunkserver: the leases on {@code chunkId} are revoked. The copy takes no client write from now on
     * (until a new create or bump opens a window again), and the Ack comes once the writes it took before are
     * applied, so a copy made from it afterwards holds every one of them. Any window is closed, whatever its version:
     * closing one only refuses writes, which is always safe, and a version named here could miss a copy a bump took
     * ahead of the master's record. OK also when there is no copy here. The master revokes the lease of a chunk
     * below its goal, so the planner can repair it at once instead of waiting out the lease's hold (30 s;
     * docs/architecture.md, "Leases").
     */
    record CloseWindow(long rid, long chunkId, long term) implements MasterProtocol, Fenced {}

    /** Deletes the copy of a chunk if it is at {@code version} ({@link #ANY_VERSION}: whatever its version). Answered with Ack. */
    record DeleteChunk(long rid, long chunkId, long version, long term) implements MasterProtocol, Fenced {
        public static final long ANY_VERSION = -1;

        public DeleteChunk(long rid, long chunkId, long version) { this(rid, chunkId, version, 0); }
    }

    /**
     * Makes a durable copy of a chunk at {@code version} on the receiving server, from {@code sources}: for a
     * replica (k = 0), or an erasure-coded part held as it is, one source holding the same thing; for a lost
     * erasure-coded part, k sources holding distinct parts ({@code sourceParts}), from which part
     * {@code part} is rebuilt. {@code dataLength} is the chunk's committed bytes, from which a rebuild knows
     * how long each part is ({@link dev.cairn.core.ec.Stripes#partLength}). {@code replacesPart} (-1: none) is a
     * part of the chunk at this version the receiver holds twice over in the cluster, or {@link #REPLACES_STALE}: the
     * new part takes its place once durable. Answered with Ack once the copy is synced.
     */
    record ReplicateChunk(long rid, long chunkId, long version, int part, int k, int m, long dataLength, List<ServerRef> sources,
                          List<Integer> sourceParts, int capacity, boolean writable, int replacesPart, long term) implements MasterProtocol, Fenced {
        public ReplicateChunk(long rid, long chunkId, long version, int part, int k, int m, long dataLength, List<ServerRef> sources,
                              List<Integer> sourceParts, int capacity, boolean writable, int replacesPart) {
            this(rid, chunkId, version, part, k, m, dataLength, sources, sourceParts, capacity, writable, replacesPart, 0);
        }

        /**
         * {@code replacesPart} for a receiver the master judges to hold a stale copy of the chunk (short, or of an
         * older version), whatever part it is: the master counts the chunk's parts without it, so the new part may
         * take its place once durable (group sim seed 423: a copy of part 0 cut off with nothing durable left a
         * part-0 file the master judged stale, and the only server that could take the missing part 3 refused it
         * forever for holding "another part").
         */
        public static final int REPLACES_STALE = -2;

        public ReplicateChunk(long rid, long chunkId, long version, int part, int k, int m, long dataLength, List<ServerRef> sources,
                              List<Integer> sourceParts, int capacity, boolean writable) {
            this(rid, chunkId, version, part, k, m, dataLength, sources, sourceParts, capacity, writable, -1);
        }

        public ReplicateChunk(long rid, long chunkId, long version, int part, int k, int m, long dataLength, List<ServerRef> sources,
                              List<Integer> sourceParts) {
            this(rid, chunkId, version, part, k, m, dataLength, sources, sourceParts, dev.cairn.core.chunk.ChunkFormat.MAX_BLOCKS, false);
        }
    }

    /**
     * Rewrites a chunk in another class (a file moving to its archive class): the receiving server reads
     * its own current copy of {@code chunkId} at {@code version} ({@code length} committed bytes) and
     * writes it as chunk {@code newChunkId} at {@code newVersion} to {@code targets} — a replica chain for
     * a replicated class (k = 0), or part i to target i of an {@code ec(k,m)} class — and syncs every
     * target. The master has created the new copies (their write windows are open). Answered with Ack.
     */
    record ConvertChunk(long rid, long chunkId, long version, long length, long newChunkId, long newVersion, int k, int m,
                        List<ServerRef> targets, long term) implements MasterProtocol, Fenced {
        public ConvertChunk(long rid, long chunkId, long version, long length, long newChunkId, long newVersion, int k, int m, List<ServerRef> targets) {
            this(rid, chunkId, version, length, newChunkId, newVersion, k, m, targets, 0);
        }
    }

    // ---- admin -> master ----

    /** Cluster health: counts and every known server. */
    record ClusterStatus(long rid) implements MasterProtocol {}

    record ServerStatus(String id, Address address, Topology topology, boolean alive, boolean draining,
                        long usedBytes, long capacityBytes, int chunks, int staleChunks, List<DiskReport> disks) {}

    /**
     * @param grace true while the master waits, after a start, for the servers it knew to report before it
     *              repairs or deletes anything
     * @param moving copies being made right now
     */
    record StatusReply(long rid, Status status, String detail, boolean grace, long chunks, long underGoal, long overGoal,
                       long endangered, long lost, long staleCopies, long moving, long copiesMade, long copiesDeleted,
                       List<ServerStatus> servers, long copiesMarkedBad) implements MasterProtocol {
        @Override public boolean isReply() { return true; }
    }

    /** Every chunk of a file with its version and where its copies are. */
    record FileInfo(long rid, String path) implements MasterProtocol {}

    /**
     * Asks one master about itself, whether it leads or not (answered by every master of a group, never
     * forwarded): for {@code status}, which shows each master of the group.
     */
    record ReplicaStatus(long rid) implements MasterProtocol {}

    /**
     * One master as it sees itself: whether it leads and serves, its term, the last log entry its store holds,
     * the leader it knows of (empty if none), and the group's members as its latest configuration has them. A
     * single master leads in term 0; its applied index is -1 and it is its only member.
     */
    record ReplicaStatusReply(long rid, Status status, String detail, boolean leads, boolean serving, long term, long appliedIndex,
                              String leader, List<String> members) implements MasterProtocol {
        @Override public boolean isReply() { return true; }
    }

    /**
     * Adds the master at {@code address} (HOST:PORT, already running with the group's peers and its own) to the
     * master group, or removes it ({@code add} false). Answered by the leader once the new membership is
     * committed, an added master having caught up with the log first: {@link MastersReply}. Adding a member
     * again or removing one that is not there changes nothing.
     */
    record ChangeMasters(long rid, String address, boolean add) implements MasterProtocol {}

    /** The group's members (client addresses) after a {@link ChangeMasters}. */
    record MastersReply(long rid, Status status, String detail, List<String> members) implements MasterProtocol {
        @Override public boolean isReply() { return true; }
    }

    /**
     * One copy of a chunk at {@code version}: {@code current} false for an outdated copy awaiting deletion (a
     * current copy may be a version behind the chunk's: left out of a lease under which nothing was committed).
     */
    record CopyInfo(String serverId, int part, long version, boolean current) {}

    record ChunkInfo(int index, long chunkId, long version, List<CopyInfo> copies) {}

    record FileInfoReply(long rid, Status status, String detail, FileAttr attr, List<ChunkInfo> chunks) implements MasterProtocol {
        @Override public boolean isReply() { return true; }
    }

    /** Marks a chunkserver for removal ({@code drain}) or back in service. Answered with Ack. */
    record Drain(long rid, String serverId, boolean drain) implements MasterProtocol {}

    /**
     * Sets the storage class of a file (its chunks are then brought to it by the planner) or of a directory
     * (the class new files under it inherit). Answered with AttrReply.
     */
    record SetClass(long rid, String path, StorageClass storageClass) implements MasterProtocol {}
}
