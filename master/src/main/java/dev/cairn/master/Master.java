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
import dev.cairn.core.proto.Types;
import dev.cairn.core.proto.Types.ChunkLocation;
import dev.cairn.core.proto.Types.ChunkReport;
import dev.cairn.core.proto.Types.FileType;
import dev.cairn.core.proto.Types.ServerRef;
import dev.cairn.core.rpc.Rpc;
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

    @Override public void onDisconnect(Address peer) { rpc.onDisconnect(peer); }

    private Promise<? extends Message> handle(Address from, Message m) {
        if (m instanceof Heartbeat h) return Promise.completed(heartbeat(h));
        if (m instanceof Register r) return Promise.completed(register(r));
        if (m instanceof ReportBad r) return Promise.completed(reportBad(r));
        if (m instanceof Lookup r) return Promise.completed(new AttrReply(r.rid(), Status.OK, "", namespace.resolve(r.path()).attr()));
        if (m instanceof ListDir r) return Promise.completed(new ListReply(r.rid(), Status.OK, "", namespace.list(r.path())));
        if (m instanceof Mkdir r) {
            return metaLog.submit(new MetaCommand.Mkdir(r.path(), env.clock().wallMillis()))
                    .map(a -> new AttrReply(r.rid(), Status.OK, "", a));
        }
        if (m instanceof Create r) {
            return metaLog.submit(new MetaCommand.CreateFile(r.path(), r.chunkSize(), r.goal(), env.clock().wallMillis()))
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

    private RegisterReply register(Register r) {
        Server s = registry.register(r.serverId(), r.dataAddress(), r.incarnation(), env.clock().nanoTime());
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
            } else if (rec.version() == c.version()) {
                registry.addLocation(c.chunkId(), s);
                current++;
            } else {
                stale++; // missed a write lease: never served; repaired and removed by the planner
            }
        }
        log.info("chunkserver {} registered from {} with {} chunks ({} current, {} stale, {} to delete)",
                r.serverId(), r.dataAddress(), r.chunks().size(), current, stale, delete.size());
        return new RegisterReply(r.rid(), Status.OK, delete);
    }

    private HeartbeatReply heartbeat(Heartbeat h) {
        Server s = registry.server(h.serverId());
        if (s == null || !s.alive || s.incarnation != h.incarnation()) return new HeartbeatReply(h.rid(), false);
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
            for (Server s : registry.holders(c.chunkId())) refs.add(s.ref());
            out.add(new ChunkLocation(c.index(), c.chunkId(), c.version(), refs));
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
        Promise<LeaseReply> out = metaLog.submit(new MetaCommand.AllocChunk(r.inode(), r.index())).flatMap(c -> {
            if (!existed) return place(c, f.goal(), exclude);
            List<Server> holders = new ArrayList<>();
            for (Server s : registry.holders(c.chunkId())) if (!exclude.contains(s.id)) holders.add(s);
            if (!holders.isEmpty()) return bump(c, holders);
            long chunkStart = (long) c.index() * f.chunkSize();
            if (f.size() > chunkStart) {
                throw new CairnException(Status.UNAVAILABLE, "no live current copy of chunk " + c.chunkId() + " holding committed data");
            }
            // nothing committed in this chunk: start over on fresh servers, above every version handed out
            return metaLog.submit(new MetaCommand.BumpVersion(c.chunkId())).flatMap(next -> place(next, f.goal(), exclude));
        }).map(lease -> new LeaseReply(r.rid(), Status.OK, "", lease.chunkId, lease.version, lease.chain));
        out.onComplete((v, e) -> leasing.remove(slot));
        return out;
    }

    private record Lease(long chunkId, long version, List<ServerRef> chain) {}

    private Promise<Lease> place(ChunkRecord c, int goal, Set<String> exclude) {
        List<Server> candidates = new ArrayList<>();
        for (Server s : registry.live()) if (!exclude.contains(s.id)) candidates.add(s);
        if (candidates.isEmpty()) throw new CairnException(Status.NO_SPACE, "no live chunkserver to place chunk " + c.chunkId());
        // Fisher-Yates on the id-ordered list with the node's seeded random: spread, yet replayable
        for (int i = candidates.size() - 1; i > 0; i--) {
            int j = env.random().nextInt(i + 1);
            Server t = candidates.get(i);
            candidates.set(i, candidates.get(j));
            candidates.set(j, t);
        }
        List<Server> chosen = candidates.subList(0, Math.min(goal, candidates.size()));
        assert distinctHosts(chosen) : "two copies of one chunk on one host";
        List<Promise<Ack>> calls = new ArrayList<>();
        for (Server s : chosen) calls.add(call(s, rid -> new CreateChunk(rid, c.chunkId(), c.version())));
        return settle(c.chunkId(), c.version(), List.copyOf(chosen), calls);
    }

    private Promise<Lease> bump(ChunkRecord c, List<Server> holders) {
        return metaLog.submit(new MetaCommand.BumpVersion(c.chunkId())).flatMap(next -> {
            for (Server s : holders) registry.removeLocation(c.chunkId(), s.id);
            List<Promise<Ack>> calls = new ArrayList<>();
            for (Server s : holders) calls.add(call(s, rid -> new MasterProtocol.BumpVersion(rid, c.chunkId(), c.version(), next.version())));
            return settle(c.chunkId(), next.version(), holders, calls);
        });
    }

    /** Waits for every server's answer; the chain is the servers that said OK, in order. */
    private Promise<Lease> settle(long chunkId, long version, List<Server> servers, List<Promise<Ack>> calls) {
        Promise<Lease> out = new Promise<>();
        int[] left = {calls.size()};
        boolean[] ok = new boolean[calls.size()];
        for (int i = 0; i < calls.size(); i++) {
            int idx = i;
            calls.get(i).onComplete((ack, e) -> {
                ok[idx] = e == null && ack.status() == Status.OK;
                if (--left[0] > 0) return;
                List<ServerRef> chain = new ArrayList<>();
                for (int j = 0; j < servers.size(); j++) {
                    Server s = servers.get(j);
                    if (ok[j] && s.alive) {
                        registry.addLocation(chunkId, s);
                        chain.add(s.ref());
                    }
                }
                if (chain.isEmpty()) out.fail(new CairnException(Status.UNAVAILABLE, "no chunkserver took chunk " + chunkId + " v" + version));
                else out.complete(new Lease(chunkId, version, chain));
            });
        }
        return out;
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
