package dev.cairn.master;

import dev.cairn.core.async.Promise;
import dev.cairn.core.env.Address;
import dev.cairn.core.env.Env;
import dev.cairn.core.env.Log;
import dev.cairn.core.env.MessageHandler;
import dev.cairn.core.env.Node;
import dev.cairn.core.proto.Ack;
import dev.cairn.core.proto.CairnException;
import dev.cairn.core.proto.MasterProtocol.AttrReply;
import dev.cairn.core.proto.MasterProtocol.ChunksReply;
import dev.cairn.core.proto.MasterProtocol.CommitLength;
import dev.cairn.core.proto.MasterProtocol.Create;
import dev.cairn.core.proto.MasterProtocol.CreateChunk;
import dev.cairn.core.proto.MasterProtocol.DeleteChunk;
import dev.cairn.core.proto.MasterProtocol.GetChunks;
import dev.cairn.core.proto.MasterProtocol.Heartbeat;
import dev.cairn.core.proto.MasterProtocol.HeartbeatReply;
import dev.cairn.core.proto.MasterProtocol.LeaseReply;
import dev.cairn.core.proto.MasterProtocol.ListDir;
import dev.cairn.core.proto.MasterProtocol.ListReply;
import dev.cairn.core.proto.MasterProtocol.Lookup;
import dev.cairn.core.proto.MasterProtocol.Mkdir;
import dev.cairn.core.proto.MasterProtocol.Register;
import dev.cairn.core.proto.MasterProtocol.RegisterReply;
import dev.cairn.core.proto.MasterProtocol.Remove;
import dev.cairn.core.proto.MasterProtocol.ReportBad;
import dev.cairn.core.proto.MasterProtocol.WriteLease;
import dev.cairn.core.proto.MasterProtocol;
import dev.cairn.core.proto.Message;
import dev.cairn.core.proto.Status;
import dev.cairn.core.proto.StorageClass;
import dev.cairn.core.proto.Types;
import dev.cairn.core.proto.Types.ChunkLocation;
import dev.cairn.core.proto.Types.ChunkReport;
import dev.cairn.core.proto.Types.FileType;
import dev.cairn.core.proto.Types.ServerRef;
import dev.cairn.core.rpc.Rpc;
import dev.cairn.master.ChunkRegistry.Holder;
import dev.cairn.master.ChunkRegistry.Server;
import dev.cairn.master.meta.ChunkRecord;
import dev.cairn.master.meta.LocalMetaLog;
import dev.cairn.master.meta.MetaCommand;
import dev.cairn.master.meta.MetaLog;
import dev.cairn.master.namespace.InodeRecord;
import dev.cairn.master.namespace.Namespace;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.function.LongFunction;

/**
 * The metadata master: namespace (through the metadata log), chunkserver membership and liveness
 * (measured on this host's monotonic clock only), chunk placement and write leases.
 */
public final class Master implements Node, MessageHandler {
    /** How often liveness is checked. */
    static final long LIVENESS_CHECK_NANOS = 1_000_000_000L;
    /** Time allowed for a chunkserver to answer a create, bump or delete. */
    static final long CHUNKSERVER_CALL_NANOS = 5_000_000_000L;
    /** Cell size of erasure-coded stripes (one checksum block); the client cuts stripes the same way. */
    static final int EC_CELL = dev.cairn.core.chunk.ChunkFormat.BLOCK_SIZE;

    private final Env env;
    private final MasterConfig config;
    private final Log log;
    private final Rpc rpc;
    private final ChunkRegistry registry = new ChunkRegistry();
    /** Chunk slots (inode:index) with a lease being set up; a second request gets BUSY. */
    private final Set<String> leasing = new HashSet<>();
    private Namespace namespace;
    private MetaLog metaLog;
    private boolean ready;

    public Master(Env env, MasterConfig config) {
        this.env = env;
        this.config = config;
        this.log = env.log(Master.class);
        this.rpc = new Rpc(env);
    }

    @Override public void start() {
        namespace = new Namespace(env.kv(), config.defaultGoal());
        metaLog = new LocalMetaLog(env.kv(), namespace);
        Promise<Void> formatted = namespace.isEmpty()
                ? env.kv().write(namespace.formatBatch(env.clock().wallMillis()), true)
                : Promise.completed(null);
        formatted.onComplete((v, e) -> {
            if (e != null) {
                log.warn("cannot format the namespace: {}", e.toString());
                return;
            }
            ready = true;
            env.transport().start(config.listen(), this);
            scheduleLivenessCheck();
            log.info("master listening on {}", config.listen());
        });
    }

    @Override public void stop() {
        ready = false;
        rpc.failAll("master stopping");
    }

    public boolean isReady() { return ready; }

    public int liveServers() { return registry.liveCount(); }

    // ---------------------------------------------------------------- dispatch

    @Override public void onMessage(Address from, Message m) {
        if (rpc.onMessage(from, m)) return;
        Promise<? extends Message> reply;
        try {
            reply = handle(from, m);
        } catch (CairnException e) {
            reply = Promise.failed(e);
        } catch (RuntimeException e) {
            log.warn("request {} failed: {}", m.getClass().getSimpleName(), e.toString());
            reply = Promise.failed(e);
        }
        reply.onComplete((r, e) -> {
            Message out = e == null ? r : errorReply(m, CairnException.statusOf(e), CairnException.detailOf(e));
            if (out != null) env.transport().send(from, out);
        });
    }

    @Override public void onDisconnect(Address peer) {
        rpc.onDisconnect(peer);
        if (!ready) return;
        for (Server s : registry.disconnected(peer)) log.warn("lost the connection to chunkserver {} at {}: marked down", s.id, s.address);
    }

    private Promise<? extends Message> handle(Address from, Message m) {
        if (m instanceof Heartbeat h) return Promise.completed(heartbeat(from, h));
        if (m instanceof Register r) return Promise.completed(register(from, r));
        if (m instanceof ReportBad r) return Promise.completed(reportBad(r));
        if (m instanceof Lookup r) return Promise.completed(new AttrReply(r.rid(), Status.OK, "", namespace.resolve(r.path()).attr()));
        if (m instanceof ListDir r) return Promise.completed(new ListReply(r.rid(), Status.OK, "", namespace.list(r.path())));
        if (m instanceof Mkdir r) {
            return metaLog.submit(new MetaCommand.Mkdir(r.path(), env.clock().wallMillis()))
                    .map(a -> new AttrReply(r.rid(), Status.OK, "", a));
        }
        if (m instanceof Create r) {
            return metaLog.submit(new MetaCommand.CreateFile(r.path(), r.chunkSize(), r.storageClass(), env.clock().wallMillis()))
                    .map(a -> new AttrReply(r.rid(), Status.OK, "", a));
        }
        if (m instanceof Remove r) return remove(r);
        if (m instanceof CommitLength r) {
            return metaLog.submit(new MetaCommand.SetLength(r.inode(), r.length(), env.clock().wallMillis()))
                    .map(a -> Ack.ok(r.rid()));
        }
        if (m instanceof GetChunks r) return Promise.completed(chunks(r));
        if (m instanceof WriteLease r) return lease(r);
        throw new CairnException(Status.BAD_REQUEST, "master does not serve " + m.getClass().getSimpleName());
    }

    /** The reply a request gets when it fails (each request type has its own reply shape). */
    static Message errorReply(Message req, Status status, String detail) {
        long rid = req.rid();
        if (req.isReply()) return null; // never answer an answer
        if (req instanceof Lookup || req instanceof Mkdir || req instanceof Create) return new AttrReply(rid, status, detail, Types.NO_ATTR);
        if (req instanceof ListDir) return new ListReply(rid, status, detail, List.of());
        if (req instanceof WriteLease) return new LeaseReply(rid, status, detail, 0, 0, List.of());
        if (req instanceof GetChunks) return new ChunksReply(rid, status, detail, Types.NO_ATTR, List.of());
        if (req instanceof Register) return new RegisterReply(rid, status, List.of());
        if (req instanceof Heartbeat) return new HeartbeatReply(rid, false);
        return new Ack(rid, status, detail);
    }

    // ---------------------------------------------------------------- chunkservers

    private RegisterReply register(Address from, Register r) {
        Server s = registry.register(r.serverId(), r.dataAddress(), r.incarnation(), env.clock().nanoTime());
        s.controlAddress = from;
        s.capacityBytes = r.capacityBytes();
        s.usedBytes = r.usedBytes();
        List<Long> delete = new ArrayList<>();
        long nextChunk = namespace.nextChunkId();
        int current = 0, stale = 0;
        for (ChunkReport c : r.chunks()) {
            ChunkRecord rec = namespace.chunk(c.chunkId());
            if (rec == null) {
                // allocated once and since removed: safe to delete; a higher id is not ours to judge
                if (c.chunkId() < nextChunk) delete.add(c.chunkId());
            } else if (rec.version() == c.version() && c.length() >= committedLength(rec, c.part())) {
                registry.addLocation(c.chunkId(), s, c.part());
                current++;
            } else {
                stale++; // missed a write lease: never served; repaired and removed by the planner
            }
        }
        log.info("chunkserver {} registered from {} with {} chunks ({} current, {} stale, {} to delete)",
                r.serverId(), r.dataAddress(), r.chunks().size(), current, stale, delete.size());
        return new RegisterReply(r.rid(), Status.OK, delete);
    }

    /**
     * Bytes a current copy (or part) of this chunk must hold: the acknowledged data of its chunk, or for
     * an erasure-coded part one cell per stripe of it. A copy at the right version but shorter than this
     * (created, then left out of the write) is not current.
     */
    private long committedLength(ChunkRecord rec, int part) {
        InodeRecord f = namespace.inode(rec.inode());
        long inChunk = Math.max(0, Math.min(f.chunkSize(), f.size() - (long) rec.index() * f.chunkSize()));
        StorageClass cls = f.storageClass();
        if (!cls.isEc() || inChunk == 0) return inChunk;
        long stripe = (long) cls.k() * EC_CELL;
        return (inChunk + stripe - 1) / stripe * EC_CELL;
    }

    private HeartbeatReply heartbeat(Address from, Heartbeat h) {
        Server s = registry.server(h.serverId());
        if (s == null || !s.alive || s.incarnation != h.incarnation()) return new HeartbeatReply(h.rid(), false);
        s.controlAddress = from;
        s.lastHeardNanos = env.clock().nanoTime();
        s.capacityBytes = h.capacityBytes();
        s.usedBytes = h.usedBytes();
        return new HeartbeatReply(h.rid(), true);
    }

    private Ack reportBad(ReportBad r) {
        log.warn("chunkserver {} reports chunk {} v{} bad: {}", r.serverId(), r.chunkId(), r.version(), r.reason());
        registry.removeLocation(r.chunkId(), r.serverId());
        return Ack.ok(r.rid());
    }

    private void scheduleLivenessCheck() {
        env.scheduler().schedule(LIVENESS_CHECK_NANOS, () -> {
            if (!ready) return;
            for (Server s : registry.expire(env.clock().nanoTime() - config.heartbeatTimeoutNanos())) {
                log.warn("chunkserver {} at {} missed its heartbeats: marked dead", s.id, s.address);
            }
            scheduleLivenessCheck();
        });
    }

    // ---------------------------------------------------------------- files

    private Promise<Ack> remove(Remove r) {
        return metaLog.submit(new MetaCommand.Remove(r.path())).map(chunkIds -> {
            for (long id : chunkIds) {
                for (Server s : registry.forget(id)) {
                    // best effort: a copy on a server that is down now is deleted when it registers again
                    rpc.call(s.address, rid -> new DeleteChunk(rid, id), Ack.class, CHUNKSERVER_CALL_NANOS);
                }
            }
            return Ack.ok(r.rid());
        });
    }

    private ChunksReply chunks(GetChunks r) {
        InodeRecord f = namespace.inode(r.inode());
        if (f.type() != FileType.FILE) throw new CairnException(Status.IS_DIR, "inode " + r.inode());
        List<ChunkLocation> out = new ArrayList<>();
        for (ChunkRecord c : namespace.chunks(r.inode(), r.fromIndex(), Math.max(0, Math.min(r.count(), 4096)))) {
            List<ServerRef> refs = new ArrayList<>();
            List<Integer> parts = new ArrayList<>();
            for (Holder h : registry.holders(c.chunkId())) {
                refs.add(h.server().ref());
                parts.add(h.part());
            }
            out.add(new ChunkLocation(c.index(), c.chunkId(), c.version(), refs, parts));
        }
        return new ChunksReply(r.rid(), Status.OK, "", f.attr(), out);
    }

    /**
     * A write lease on chunk (inode, index): a new chunk is placed on up to goal live servers on distinct
     * hosts; an existing one gets a new version on its live current copies (leaving out the ones the
     * client saw fail), so a copy that misses this write is recognisably stale forever after.
     */
    private Promise<LeaseReply> lease(WriteLease r) {
        InodeRecord f = namespace.inode(r.inode());
        if (f.type() != FileType.FILE) throw new CairnException(Status.IS_DIR, "inode " + r.inode());
        String slot = r.inode() + ":" + r.index();
        if (!leasing.add(slot)) throw new CairnException(Status.BUSY, "a lease on chunk " + slot + " is being set up");
        boolean existed = !namespace.chunks(r.inode(), r.index(), 1).isEmpty();
        Set<String> exclude = new TreeSet<>(r.exclude());
        long chunkStart = (long) r.index() * f.chunkSize();
        boolean committedData = f.size() > chunkStart;
        Promise<LeaseReply> out = metaLog.submit(new MetaCommand.AllocChunk(r.inode(), r.index())).flatMap(c -> {
            if (f.storageClass().isEc()) return ecLease(f, c, existed, committedData, exclude);
            int goal = f.storageClass().replicas();
            if (!existed) return place(c, goal, exclude);
            List<Server> holders = new ArrayList<>();
            for (Holder h : registry.holders(c.chunkId())) if (!exclude.contains(h.server().id)) holders.add(h.server());
            if (!holders.isEmpty()) return bump(c, holders);
            if (committedData) {
                throw new CairnException(Status.UNAVAILABLE, "no live current copy of chunk " + c.chunkId() + " holding committed data");
            }
            // nothing committed in this chunk: start over on fresh servers, above every version handed out
            return metaLog.submit(new MetaCommand.BumpVersion(c.chunkId())).flatMap(next -> place(next, goal, exclude));
        }).map(lease -> new LeaseReply(r.rid(), Status.OK, "", lease.chunkId, lease.version, lease.chain));
        out.onComplete((v, e) -> leasing.remove(slot));
        return out;
    }

    private record Lease(long chunkId, long version, List<ServerRef> chain) {}

    private Promise<Lease> place(ChunkRecord c, int goal, Set<String> exclude) {
        List<Server> candidates = candidates(exclude);
        if (candidates.isEmpty()) throw new CairnException(Status.NO_SPACE, "no live chunkserver to place chunk " + c.chunkId());
        List<Server> chosen = candidates.subList(0, Math.min(goal, candidates.size()));
        assert distinctHosts(chosen) : "two copies of one chunk on one host";
        List<Promise<Ack>> calls = new ArrayList<>();
        for (Server s : chosen) calls.add(call(s, rid -> new CreateChunk(rid, c.chunkId(), c.version(), 0)));
        return settle(c, List.copyOf(chosen), calls);
    }

    /** Live servers not excluded, in a random order (Fisher-Yates with the node's seeded random: spread, yet replayable). */
    private List<Server> candidates(Set<String> exclude) {
        List<Server> candidates = new ArrayList<>();
        for (Server s : registry.live()) if (!exclude.contains(s.id)) candidates.add(s);
        for (int i = candidates.size() - 1; i > 0; i--) {
            int j = env.random().nextInt(i + 1);
            Server t = candidates.get(i);
            candidates.set(i, candidates.get(j));
            candidates.set(j, t);
        }
        return candidates;
    }

    /**
     * A lease on an erasure-coded chunk: all k+m parts on k+m distinct live servers, part i on server i.
     * EC chunks are written once (a rewrite in place could let a degraded read mix old and new cells of
     * a stripe), so a chunk holding acknowledged data is refused, and a retried upload is placed afresh
     * above every version handed out, which makes any earlier parts stale.
     */
    private Promise<Lease> ecLease(InodeRecord f, ChunkRecord c, boolean existed, boolean committedData, Set<String> exclude) {
        StorageClass cls = f.storageClass();
        if (committedData) {
            throw new CairnException(Status.BAD_REQUEST, "chunk " + c.index() + " of an " + cls + " file already holds acknowledged data; erasure-coded chunks are written once");
        }
        List<Server> candidates = candidates(exclude);
        if (candidates.size() < cls.parts()) {
            throw new CairnException(Status.NO_SPACE, cls + " needs " + cls.parts() + " live chunkservers on distinct hosts; "
                    + candidates.size() + " are usable");
        }
        Promise<ChunkRecord> version = existed ? metaLog.submit(new MetaCommand.BumpVersion(c.chunkId())) : Promise.completed(c);
        return version.flatMap(next -> {
            for (Holder h : registry.holders(c.chunkId())) registry.removeLocation(c.chunkId(), h.server().id);
            List<Server> chosen = List.copyOf(candidates.subList(0, cls.parts()));
            assert distinctHosts(chosen) : "two parts of one chunk on one host";
            List<Promise<Ack>> calls = new ArrayList<>();
            for (int p = 0; p < chosen.size(); p++) {
                int part = p;
                calls.add(call(chosen.get(p), rid -> new CreateChunk(rid, c.chunkId(), next.version(), part)));
            }
            return settleAll(c.chunkId(), next.version(), chosen, calls);
        });
    }

    /** Like {@link #settle} but every server must say OK (erasure-coded parts); part i is server i. */
    private Promise<Lease> settleAll(long chunkId, long version, List<Server> servers, List<Promise<Ack>> calls) {
        return Promise.all(calls).then((acks, e) -> {
            List<String> failed = new ArrayList<>();
            for (int i = 0; i < servers.size(); i++) {
                Promise<Ack> p = calls.get(i);
                if (p.isFailed() || p.value().status() != Status.OK || !servers.get(i).alive) failed.add(servers.get(i).id);
            }
            if (!failed.isEmpty()) {
                return Promise.failed(new CairnException(Status.UNAVAILABLE, "parts of chunk " + chunkId + " v" + version + " not created on " + failed));
            }
            List<ServerRef> chain = new ArrayList<>();
            for (int i = 0; i < servers.size(); i++) {
                registry.addLocation(chunkId, servers.get(i), i);
                chain.add(servers.get(i).ref());
            }
            return Promise.completed(new Lease(chunkId, version, chain));
        });
    }

    private Promise<Lease> bump(ChunkRecord c, List<Server> holders) {
        return metaLog.submit(new MetaCommand.BumpVersion(c.chunkId())).flatMap(next -> {
            for (Server s : holders) registry.removeLocation(c.chunkId(), s.id);
            List<Promise<Ack>> calls = new ArrayList<>();
            for (Server s : holders) calls.add(call(s, rid -> new MasterProtocol.BumpVersion(rid, c.chunkId(), c.version(), next.version())));
            return settle(next, holders, calls);
        });
    }

    /**
     * Waits for every server's answer; the chain is the servers that said OK, in order. If any server did
     * not answer OK it may still have carried out the create or bump (the reply, not the request, may be
     * what was lost), leaving a copy at this version that will not receive the data. So the version is
     * bumped once more on the servers that answered: a copy the master lost track of is then stale.
     */
    private Promise<Lease> settle(ChunkRecord at, List<Server> servers, List<Promise<Ack>> calls) {
        return Promise.all(calls).then((acks, e) -> {
            List<Server> ok = new ArrayList<>();
            for (int i = 0; i < servers.size(); i++) {
                Promise<Ack> p = calls.get(i);
                if (!p.isFailed() && p.value().status() == Status.OK && servers.get(i).alive) ok.add(servers.get(i));
            }
            if (ok.isEmpty()) {
                return Promise.failed(new CairnException(Status.UNAVAILABLE, "no chunkserver took chunk " + at.chunkId() + " v" + at.version()));
            }
            if (ok.size() < servers.size()) return bump(at, ok);
            List<ServerRef> chain = new ArrayList<>();
            for (Server s : ok) {
                registry.addLocation(at.chunkId(), s, 0);
                chain.add(s.ref());
            }
            return Promise.completed(new Lease(at.chunkId(), at.version(), chain));
        });
    }

    private Promise<Ack> call(Server s, LongFunction<Message> req) {
        return rpc.call(s.address, req, Ack.class, CHUNKSERVER_CALL_NANOS);
    }

    private static boolean distinctHosts(List<Server> servers) {
        Set<String> hosts = new HashSet<>();
        for (Server s : servers) if (!hosts.add(s.id)) return false;
        return true;
    }
}
