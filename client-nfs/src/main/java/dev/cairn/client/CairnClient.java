package dev.cairn.client;

import dev.cairn.core.async.Promise;
import dev.cairn.core.env.Address;
import dev.cairn.core.env.Env;
import dev.cairn.core.env.Log;
import dev.cairn.core.env.MessageHandler;
import dev.cairn.core.env.Node;
import dev.cairn.core.proto.Ack;
import dev.cairn.core.proto.CairnException;
import dev.cairn.core.proto.ChunkProtocol.ChainReply;
import dev.cairn.core.proto.ChunkProtocol.DataReply;
import dev.cairn.core.proto.ChunkProtocol.ReadData;
import dev.cairn.core.proto.ChunkProtocol.SyncChunk;
import dev.cairn.core.proto.ChunkProtocol.WriteData;
import dev.cairn.core.proto.MasterProtocol.AttrReply;
import dev.cairn.core.proto.MasterProtocol.ChunksReply;
import dev.cairn.core.proto.MasterProtocol.CommitLength;
import dev.cairn.core.proto.MasterProtocol.Create;
import dev.cairn.core.proto.MasterProtocol.GetChunks;
import dev.cairn.core.proto.MasterProtocol.LeaseReply;
import dev.cairn.core.proto.MasterProtocol.ListDir;
import dev.cairn.core.proto.MasterProtocol.ListReply;
import dev.cairn.core.proto.MasterProtocol.Lookup;
import dev.cairn.core.proto.MasterProtocol.Mkdir;
import dev.cairn.core.proto.MasterProtocol.Remove;
import dev.cairn.core.proto.MasterProtocol.WriteLease;
import dev.cairn.core.proto.Message;
import dev.cairn.core.proto.Status;
import dev.cairn.core.proto.MasterProtocol;
import dev.cairn.core.proto.Types.AttrChange;
import dev.cairn.core.proto.Types.DirEntry;
import dev.cairn.core.proto.Types.FileType;
import dev.cairn.core.proto.Types.FileAttr;
import dev.cairn.core.proto.Types.ServerRef;
import dev.cairn.core.rpc.Rpc;
import dev.cairn.core.ec.CodecCache;
import dev.cairn.core.ec.ErasureCodec;
import dev.cairn.core.proto.StorageClass;
import dev.cairn.core.proto.Types.ChunkVersion;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.function.LongFunction;

/**
 * The cluster client: namespace calls to the master, and files written through {@link FileWriter} and
 * read through {@link FileReader}. A client session is a node like any other: one scheduler, its Env.
 */
public final class CairnClient implements Node, MessageHandler {
    static final long MASTER_CALL_NANOS = 10_000_000_000L;
    /** A chain write or sync covers three disks and their fsyncs; give it room before calling it dead. */
    static final long CHAIN_CALL_NANOS = 60_000_000_000L;
    static final long READ_CALL_NANOS = 10_000_000_000L;
    /** A master asked about itself answers at once or is taken for down (status shows each master of a group). */
    static final long REPLICA_STATUS_NANOS = 2_000_000_000L;
    /**
     * How long a change of the master group's membership may take: an added master first catches up with the
     * whole log (or installs a snapshot of the store) before it counts.
     */
    static final long MEMBERSHIP_CHANGE_NANOS = 600_000_000_000L;

    /**
     * With a master group: how long a call keeps looking for a leader that can answer it (an election, the
     * new leader's catch-up and the chunkservers finding it take seconds) before its failure is the caller's.
     */
    static final long FAILOVER_NANOS = 30_000_000_000L;
    /** Pause before asking the next master of a group, so that an election in progress is not flooded. */
    static final long FAILOVER_RETRY_NANOS = 200_000_000L;

    private final Env env;
    /** The masters given, and any leader one of them named that was not among them (a client given one member of a group). */
    private final List<Address> masters;
    /** The master of {@link #masters} asked first: the leader, as far as this client knows. */
    private int leader;
    private final Log log;
    private final Rpc rpc;
    private final CodecCache codecs = new CodecCache();
    private final dev.cairn.core.rpc.LeaderProbe probe;

    public CairnClient(Env env, Address master) { this(env, List.of(master)); }

    /** A client of a master group: calls go to its leader, found and followed across failovers. */
    public CairnClient(Env env, List<Address> masters) {
        if (masters.isEmpty()) throw new IllegalArgumentException("no master");
        this.env = env;
        this.masters = new ArrayList<>(masters);
        this.log = env.log(CairnClient.class);
        this.rpc = new Rpc(env);
        this.probe = new dev.cairn.core.rpc.LeaderProbe(rpc, env.scheduler(), log);
    }

    @Override public void start() { env.transport().start(null, this); }

    @Override public void stop() { rpc.failAll("client closing"); }

    @Override public void onMessage(Address from, Message m) {
        if (!rpc.onMessage(from, m)) log.debug("unexpected {} from {}", m.getClass().getSimpleName(), from);
    }

    @Override public void onDisconnect(Address peer) { rpc.onDisconnect(peer); }

    public Env env() { return env; }

    /** The masters this client knows (those it was given, and leaders they named). */
    public List<Address> masters() { return List.copyOf(masters); }

    /** Asks one master (of a group: any, not only the leader) about itself: role, term, applied log index. */
    public Promise<dev.cairn.core.proto.MasterProtocol.ReplicaStatusReply> replicaStatus(Address master) {
        return rpc.call(master, rid -> new dev.cairn.core.proto.MasterProtocol.ReplicaStatus(rid),
                dev.cairn.core.proto.MasterProtocol.ReplicaStatusReply.class, REPLICA_STATUS_NANOS);
    }

    public Log log() { return log; }

    // ---------------------------------------------------------------- namespace

    public Promise<FileAttr> lookup(String path) {
        return master(rid -> new Lookup(rid, path), AttrReply.class).map(r -> check(r.status(), r.detail(), r.attr()));
    }

    public Promise<FileAttr> mkdir(String path) {
        return master(op(op -> rid -> new Mkdir(rid, path, op)), AttrReply.class).map(r -> check(r.status(), r.detail(), r.attr()));
    }

    /** Creates an empty file; chunk size 0 and {@link StorageClass#DEFAULT} take the master's defaults. */
    public Promise<FileAttr> create(String path, int chunkSize, StorageClass storageClass) {
        return master(op(op -> rid -> new Create(rid, path, chunkSize, storageClass, op)), AttrReply.class).map(r -> check(r.status(), r.detail(), r.attr()));
    }

    /** The erasure codec for k+m (one per profile per client; coding tables are prepared once). */
    ErasureCodec codec(StorageClass cls) {
        return codecs.get(cls.k(), cls.m());
    }

    public Promise<List<DirEntry>> list(String path) {
        return master(rid -> new ListDir(rid, path), ListReply.class).map(r -> check(r.status(), r.detail(), r.entries()));
    }

    public Promise<Void> remove(String path) {
        return master(op(op -> rid -> new Remove(rid, path, op)), Ack.class).map(r -> check(r.status(), r.detail(), null));
    }

    // ---------------------------------------------------------------- namespace by inode (the NFS gateway's calls)

    public Promise<FileAttr> getAttr(long inode) {
        return master(rid -> new MasterProtocol.GetAttr(rid, inode), AttrReply.class).map(r -> check(r.status(), r.detail(), r.attr()));
    }

    /** {@code name} in directory {@code dir}; "." and ".." included. */
    public Promise<FileAttr> lookup(long dir, String name) {
        return master(rid -> new MasterProtocol.LookupIn(rid, dir, name), AttrReply.class).map(r -> check(r.status(), r.detail(), r.attr()));
    }

    public Promise<MasterProtocol.DirReply> readDir(long dir, long cookie, int maxEntries) {
        return master(rid -> new MasterProtocol.ReadDir(rid, dir, cookie, maxEntries), MasterProtocol.DirReply.class)
                .map(r -> check(r.status(), r.detail(), r));
    }

    /** Creates a file, directory or symlink (target non-empty); verifier non-zero for an exclusive create. */
    public Promise<MasterProtocol.ChangeReply> createIn(long parent, String name, FileType type, int mode, int uid, int gid, String target, long verifier) {
        return change(op(op -> rid -> new MasterProtocol.CreateIn(rid, parent, name, type, mode, uid, gid, target, 0, StorageClass.DEFAULT, verifier, op)));
    }

    public Promise<MasterProtocol.ChangeReply> unlink(long parent, String name) {
        return change(op(op -> rid -> new MasterProtocol.Unlink(rid, parent, name, op)));
    }

    public Promise<MasterProtocol.ChangeReply> rename(long fromDir, String fromName, long toDir, String toName) {
        return change(op(op -> rid -> new MasterProtocol.Rename(rid, fromDir, fromName, toDir, toName, op)));
    }

    public Promise<MasterProtocol.ChangeReply> link(long inode, long dir, String name) {
        return change(op(op -> rid -> new MasterProtocol.Link(rid, inode, dir, name, op)));
    }

    public Promise<FileAttr> setAttr(long inode, AttrChange change) {
        return master(rid -> new MasterProtocol.SetAttr(rid, inode, change), AttrReply.class).map(r -> check(r.status(), r.detail(), r.attr()));
    }

    /** The value of an inode's extended attribute {@code name}; fails NOT_FOUND ("xattr …") if it is unset. */
    public Promise<byte[]> getXattr(long inode, String name) {
        return master(rid -> new MasterProtocol.GetXattr(rid, inode, name), MasterProtocol.XattrReply.class)
                .map(r -> check(r.status(), r.detail(), r.value()));
    }

    /** The names of an inode's extended attributes, in name order. */
    public Promise<List<String>> listXattrs(long inode) {
        return master(rid -> new MasterProtocol.ListXattrs(rid, inode), MasterProtocol.XattrReply.class)
                .map(r -> check(r.status(), r.detail(), r.names()));
    }

    /**
     * Sets ({@code how}: {@link MasterProtocol#XATTR_EITHER}, {@code _CREATE}, {@code _REPLACE}) or removes
     * ({@link MasterProtocol#XATTR_REMOVE}, empty value) an extended attribute; answers the inode's attributes after.
     * Kept under one op id across retries, so a create that reached a new leader twice does not answer EXISTS.
     */
    public Promise<FileAttr> setXattr(long inode, String name, byte[] value, int how) {
        return master(op(op -> rid -> new MasterProtocol.SetXattr(rid, inode, name, value, how, op)), MasterProtocol.XattrReply.class)
                .map(r -> check(r.status(), r.detail(), r.attr()));
    }

    private Promise<MasterProtocol.ChangeReply> change(LongFunction<Message> req) {
        return master(req, MasterProtocol.ChangeReply.class).map(r -> check(r.status(), r.detail(), r));
    }

    // ---------------------------------------------------------------- admin

    /** Cluster health: redundancy counts, planner progress and every known chunkserver. */
    public Promise<dev.cairn.core.proto.MasterProtocol.StatusReply> status() {
        return master(rid -> new dev.cairn.core.proto.MasterProtocol.ClusterStatus(rid), dev.cairn.core.proto.MasterProtocol.StatusReply.class)
                .map(r -> check(r.status(), r.detail(), r));
    }

    /** Every chunk of a file: version, and which servers hold current and outdated copies. */
    public Promise<dev.cairn.core.proto.MasterProtocol.FileInfoReply> fileInfo(String path) {
        return master(rid -> new dev.cairn.core.proto.MasterProtocol.FileInfo(rid, path), dev.cairn.core.proto.MasterProtocol.FileInfoReply.class)
                .map(r -> check(r.status(), r.detail(), r));
    }

    /** Marks a chunkserver for removal (its chunks move elsewhere) or back in service. */
    public Promise<Void> drain(String serverId, boolean drain) {
        return master(rid -> new dev.cairn.core.proto.MasterProtocol.Drain(rid, serverId, drain), Ack.class).map(r -> check(r.status(), r.detail(), null));
    }

    /**
     * Adds the master at {@code address} to the master group (it must be running, started with the group's
     * members and itself as its peers) or removes it; returns the group's members afterwards.
     */
    public Promise<List<String>> changeMasters(Address address, boolean add) {
        return master(rid -> new MasterProtocol.ChangeMasters(rid, address.toString(), add), MasterProtocol.MastersReply.class, MEMBERSHIP_CHANGE_NANOS)
                .map(r -> check(r.status(), r.detail(), r.members()));
    }

    /** Sets a file's storage class (the planner then moves its chunks to it) or the class a directory hands down. */
    public Promise<FileAttr> setClass(String path, StorageClass cls) {
        return master(rid -> new dev.cairn.core.proto.MasterProtocol.SetClass(rid, path, cls), AttrReply.class).map(r -> check(r.status(), r.detail(), r.attr()));
    }

    /**
     * A session writing chunk {@code index} of a replicated file at any offsets ({@link ChunkSession}): the NFS
     * gateway's writes, and the writer's.
     */
    public ChunkSession session(FileAttr file, int index, Uncommitted versions) { return new ChunkSession(this, file, index, versions); }

    /** A writer appending to an empty file created with {@link #create}. */
    public FileWriter writer(FileAttr file) { return new FileWriter(this, file); }

    public FileReader reader(FileAttr file) { return new FileReader(this, file); }

    /**
     * Writes chunk {@code index} of a file as {@code image} (its bytes from the chunk's start) under a new
     * lease and makes it durable on every copy its class requires; the file's length is not changed (see
     * {@link #commitLength}). What the NFS gateway uses for writes at any offset: it rewrites whole chunks.
     */
    public Promise<Void> writeChunk(FileAttr file, int index, byte[] image, Uncommitted versions) {
        return writeChunk(file, index, image, versions, WriteLease.ANY_BASE);
    }

    /**
     * As above, for an image of an erasure-coded chunk read from chunk {@code basedOn} ({@link WriteLease#basedOn}):
     * refused ({@code STALE}) if another writer's change replaced that chunk since.
     */
    public Promise<Void> writeChunk(FileAttr file, int index, byte[] image, Uncommitted versions, long basedOn) {
        return new ChunkUpload(this, file, index, image, dev.cairn.core.proto.Codec.MAX_DATA_BYTES, versions, basedOn).run();
    }

    // ---------------------------------------------------------------- calls used by writer and reader

    Promise<LeaseReply> lease(long inode, int index, List<String> exclude) { return lease(inode, index, exclude, WriteLease.ANY_BASE); }

    Promise<LeaseReply> lease(long inode, int index, List<String> exclude, long basedOn) {
        return master(rid -> new WriteLease(rid, inode, index, exclude, basedOn), LeaseReply.class).map(r -> check(r.status(), r.detail(), r));
    }


    /**
     * Records that {@code length} bytes of the file are durable on every copy (the size never shrinks by
     * this), together with the versions of the chunks this writer ({@code versions}) made durable since its
     * last commit: the master then counts older copies of those chunks as outdated. If the commit fails the
     * versions are kept for the writer's next one, unless it failed {@code STALE}: a chunk was leased again since it was written here (by
     * another writer), so that write can never be acknowledged; the caller must report it lost. Answers the file's
     * attributes once committed, or {@link dev.cairn.core.proto.Types#NO_ATTR} if the master could not say (the file
     * went meanwhile).
     */
    public Promise<FileAttr> commitLength(long inode, long length, Uncommitted versions) {
        List<ChunkVersion> chunks = versions.take(length);
        Promise<FileAttr> committed = commitFrom(inode, length, chunks, 0).onFailure(e -> {
            if (CairnException.statusOf(e) != Status.STALE) versions.restore(chunks);
        });
        // the planted bug COMMIT_NOT_AWAITED: the commit is sent, and the caller hears OK without waiting for it
        return env.planted(dev.cairn.core.env.Plant.COMMIT_NOT_AWAITED) ? Promise.completed(dev.cairn.core.proto.Types.NO_ATTR) : committed;
    }

    /** Commits {@code chunks} from index {@code from} on in batches; only the last carries the length. */
    private Promise<FileAttr> commitFrom(long inode, long length, List<ChunkVersion> chunks, int from) {
        int to = Math.min(chunks.size(), from + CommitLength.MAX_CHUNKS);
        boolean last = to == chunks.size();
        List<ChunkVersion> batch = List.copyOf(chunks.subList(from, to));
        // every batch carries the length: the master raises a chunk's data version only where a committed length
        // reaches it. Until the last batch the length covers chunks whose new versions are not recorded yet; nothing
        // of theirs is acknowledged before the last batch answers, and their older copies still hold every byte
        // acknowledged before
        Promise<FileAttr> sent = master(rid -> new CommitLength(rid, inode, length, batch), AttrReply.class).map(r -> check(r.status(), r.detail(), r.attr()));
        return last ? sent : sent.flatMap(v -> commitFrom(inode, length, chunks, to));
    }

    /** The committed chunks of a file among indexes {@code [from, from + count)} (at most 4096): any index missing is a hole. */
    public Promise<ChunksReply> chunks(long inode, int from, int count) {
        return master(rid -> new GetChunks(rid, inode, from, count), ChunksReply.class).map(r -> check(r.status(), r.detail(), r));
    }

    /** Sends a write down the chain; the answer is the chain's (never a failed promise). */
    Promise<ChainReply> writeData(List<ServerRef> chain, long chunkId, long version, long offset, byte[] data) {
        return chainCall(chain, rid -> new WriteData(rid, chunkId, version, offset, data, chain.subList(1, chain.size())));
    }

    /** {@code written}: the bytes this upload wrote to each copy in the chain; a copy holding fewer fails the sync. */
    Promise<ChainReply> syncChunk(List<ServerRef> chain, long chunkId, long version, long written) {
        return chainCall(chain, rid -> new SyncChunk(rid, chunkId, version, written, chain.subList(1, chain.size())));
    }

    /** As above, also asking each copy to have taken {@code pieces} writes since its last sync (writes lost in a restart show). */
    Promise<ChainReply> syncChunk(List<ServerRef> chain, long chunkId, long version, long written, long pieces) {
        return chainCall(chain, rid -> new SyncChunk(rid, chunkId, version, written, pieces, chain.subList(1, chain.size())));
    }

    dev.cairn.core.env.Scheduler scheduler() { return env.scheduler(); }

    Promise<DataReply> readData(ServerRef server, long chunkId, long version, long offset, int length) {
        return readData(server, chunkId, version, ReadData.ANY_PART, offset, length);
    }

    /** Reads a copy taken for erasure-coded part {@code part} ({@link ReadData#part}). */
    Promise<DataReply> readData(ServerRef server, long chunkId, long version, int part, long offset, int length) {
        return rpc.call(server.address(), rid -> new ReadData(rid, chunkId, version, offset, length, part), DataReply.class, READ_CALL_NANOS);
    }

    private Promise<ChainReply> chainCall(List<ServerRef> chain, LongFunction<Message> req) {
        ServerRef head = chain.get(0);
        Promise<ChainReply> out = new Promise<>();
        rpc.call(head.address(), req, ChainReply.class, CHAIN_CALL_NANOS).onComplete((r, e) ->
                out.complete(e == null ? r : new ChainReply(0, CairnException.statusOf(e), head.id(), CairnException.detailOf(e))));
        return out;
    }

    private <R extends Message> Promise<R> master(LongFunction<Message> req, Class<R> reply) { return master(req, reply, MASTER_CALL_NANOS); }

    private <R extends Message> Promise<R> master(LongFunction<Message> req, Class<R> reply, long callNanos) {
        Promise<R> out = new Promise<>();
        askLeader(req, reply, out, env.clock().nanoTime() + FAILOVER_NANOS, callNanos);
        return out;
    }

    /**
     * Asks the master believed to lead; on {@code NOT_LEADER} (nothing was done) or a master that does not
     * answer, follows the leader it names or tries the next, until {@link #FAILOVER_NANOS} have passed. A call
     * that timed out may have been carried out: its retry can meet its own effect (a create answering EXISTS).
     */
    private <R extends Message> void askLeader(LongFunction<Message> req, Class<R> reply, Promise<R> out, long deadline, long callNanos) {
        int asked = leader;
        Address to = masters.get(asked);
        Promise<R> call = rpc.call(to, req, reply, callNanos);
        // a group's leader that answers nothing (stopped, or its host hung) is passed over once another has taken its
        // place (chaos leader-stall: clients paused up to 15 s, though the others had elected within two)
        boolean[] moved = {false};
        probe.watch(call, to, () -> masters, () -> !out.isDone(), found -> {
            moved[0] = true;
            int i = masters.indexOf(found.address());
            if (leader == asked && i >= 0) leader = i;
            askLeader(req, reply, out, deadline, callNanos);
        });
        call.onComplete((r, e) -> {
            if (moved[0] || out.isDone()) return; // the call went to another master meanwhile: a late answer of this one is stale
            Status s = e != null ? CairnException.statusOf(e) : statusOf(r);
            // a single master that does not answer is the caller's to judge (it may be restarting); one of a group is passed
            // over, and so is one that lost its leadership under the call, naming the leader or not (a retry carries the
            // same op id; chaos leader-stall seed 2: a stopped leader woke deposed, knowing no leader yet, and two puts
            // failed with the change's outcome unknown)
            boolean elsewhere = s == Status.NOT_LEADER || (s == Status.UNAVAILABLE && (e != null ? masters.size() > 1
                    : detailOf(r).contains("leader=") || detailOf(r).contains(dev.cairn.core.proto.MasterProtocol.LEADERSHIP_LOST)));
            if (!elsewhere || env.clock().nanoTime() - deadline > 0) {
                if (e != null) out.fail(e);
                else out.complete(r);
                return;
            }
            if (leader == asked) leader = named(e != null ? "" : detailOf(r)).orElse((asked + 1) % masters.size());
            env.scheduler().schedule(FAILOVER_RETRY_NANOS, () -> askLeader(req, reply, out, deadline, callNanos));
        });
    }

    /**
     * A request of an operation that is not idempotent, under an op id given once here: every retry of it (to a
     * new leader) carries the same id, so the master answers a retry of an operation already done with its outcome.
     */
    private LongFunction<Message> op(java.util.function.LongFunction<LongFunction<Message>> request) {
        return request.apply(rpc.freshId());
    }

    /**
     * The master a {@code NOT_LEADER} answer names as leader ({@code leader=HOST:PORT}); one not among ours is
     * added (a client given a single member of a group finds the rest this way).
     */
    private java.util.Optional<Integer> named(String detail) {
        int i = detail.indexOf("leader=");
        if (i < 0) return java.util.Optional.empty();
        String rest = detail.substring(i + "leader=".length()).strip();
        int end = rest.indexOf(' ');
        Address a;
        try {
            a = Address.parse(end < 0 ? rest : rest.substring(0, end));
        } catch (IllegalArgumentException bad) {
            return java.util.Optional.empty();
        }
        int m = masters.indexOf(a);
        if (m >= 0) return java.util.Optional.of(m);
        if (masters.size() >= Address.MAX_LIST) return java.util.Optional.empty();
        masters.add(a);
        return java.util.Optional.of(masters.size() - 1);
    }

    private static Status statusOf(Message m) {
        if (m instanceof Ack a) return a.status();
        return m instanceof dev.cairn.core.proto.MasterProtocol p ? p.status() : Status.OK;
    }

    private static String detailOf(Message m) {
        if (m instanceof Ack a) return a.detail();
        return m instanceof dev.cairn.core.proto.MasterProtocol p ? p.detail() : "";
    }

    private static <T> T check(Status s, String detail, T value) {
        if (s != Status.OK) throw new CairnException(s, detail);
        return value;
    }
}
