package dev.cairn.chunkserver;

import dev.cairn.core.async.Promise;
import dev.cairn.core.env.Address;
import dev.cairn.core.env.Env;
import dev.cairn.core.env.Log;
import dev.cairn.core.env.MessageHandler;
import dev.cairn.core.env.Node;
import dev.cairn.core.env.Volume;
import dev.cairn.core.proto.Ack;
import dev.cairn.core.proto.CairnException;
import dev.cairn.core.proto.ChunkProtocol.ChainReply;
import dev.cairn.core.proto.Codec;
import dev.cairn.core.proto.ChunkProtocol.DataReply;
import dev.cairn.core.proto.ChunkProtocol.ReadData;
import dev.cairn.core.proto.ChunkProtocol.SyncChunk;
import dev.cairn.core.proto.ChunkProtocol.WriteData;
import dev.cairn.core.proto.MasterProtocol.BumpVersion;
import dev.cairn.core.proto.MasterProtocol.CreateChunk;
import dev.cairn.core.proto.MasterProtocol.DeleteChunk;
import dev.cairn.core.proto.MasterProtocol.Heartbeat;
import dev.cairn.core.proto.MasterProtocol.HeartbeatReply;
import dev.cairn.core.proto.MasterProtocol.Register;
import dev.cairn.core.proto.MasterProtocol.RegisterReply;
import dev.cairn.core.proto.MasterProtocol.ReportBad;
import dev.cairn.core.proto.Message;
import dev.cairn.core.proto.Status;
import dev.cairn.core.proto.Types.ServerRef;
import dev.cairn.core.rpc.Rpc;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Function;
import java.util.function.LongFunction;
import java.util.function.Supplier;

/**
 * A chunkserver: stores chunk copies, takes part in replica chains (a write or sync is done here and
 * forwarded to the next server; the answer goes back only when both are done), serves verified reads,
 * and keeps the master informed (registration with every copy it holds, heartbeats).
 */
public final class ChunkServer implements Node, MessageHandler {
    static final long HEARTBEAT_NANOS = 1_000_000_000L;
    static final long MASTER_CALL_NANOS = 5_000_000_000L;
    static final long REGISTER_RETRY_NANOS = 1_000_000_000L;
    /** Time the next server in a chain gets to write or sync and answer (a slow disk is not a dead one). */
    static final long CHAIN_CALL_NANOS = 30_000_000_000L;

    private final Env env;
    private final ChunkServerConfig config;
    private final Log log;
    private final Rpc rpc;
    private final ChunkStore store;
    private final long incarnation;
    private boolean registered;
    private boolean stopped;

    public ChunkServer(Env env, ChunkServerConfig config) {
        this.env = env;
        this.config = config;
        this.log = env.log(ChunkServer.class);
        this.rpc = new Rpc(env);
        List<Volume> volumes = new ArrayList<>();
        for (String v : config.volumes()) volumes.add(env.volume(v));
        this.store = new ChunkStore(volumes, log);
        this.incarnation = env.random().nextLong();
    }

    @Override public void start() {
        store.recover().onComplete((n, e) -> {
            if (stopped) return;
            if (e != null) {
                log.warn("recovery failed: {}", e.toString());
                return;
            }
            log.info("chunkserver {} recovered {} chunks; listening on {}", config.serverId(), n, config.listen());
            env.transport().start(config.listen(), this);
            register();
        });
    }

    @Override public void stop() {
        stopped = true;
        rpc.failAll("chunkserver stopping");
    }

    public boolean isRegistered() { return registered; }

    public int chunkCount() { return store.count(); }

    // ---------------------------------------------------------------- master

    private void register() {
        if (stopped) return;
        registered = false;
        rpc.call(config.master(), rid -> new Register(rid, config.serverId(), incarnation, config.listen(),
                        config.capacityBytes(), store.usedBytes(), store.report()), RegisterReply.class, MASTER_CALL_NANOS)
                .onComplete((r, e) -> {
                    if (stopped) return;
                    if (e != null || r.status() != Status.OK) {
                        log.debug("registration failed ({}); retrying", e != null ? e.getMessage() : r.status());
                        env.scheduler().schedule(REGISTER_RETRY_NANOS, this::register);
                        return;
                    }
                    for (long id : r.deleteChunks()) store.delete(id);
                    registered = true;
                    env.scheduler().schedule(HEARTBEAT_NANOS, this::heartbeat);
                });
    }

    private void heartbeat() {
        if (stopped || !registered) return;
        rpc.call(config.master(), rid -> new Heartbeat(rid, config.serverId(), incarnation, config.capacityBytes(),
                        store.usedBytes(), store.count()), HeartbeatReply.class, MASTER_CALL_NANOS)
                .onComplete((r, e) -> {
                    if (stopped) return;
                    if (e == null && !r.known()) {
                        log.info("master does not know this incarnation; registering again");
                        register();
                        return;
                    }
                    env.scheduler().schedule(HEARTBEAT_NANOS, this::heartbeat);
                });
    }

    // ---------------------------------------------------------------- requests

    @Override public void onMessage(Address from, Message m) {
        if (rpc.onMessage(from, m)) return;
        if (stopped) return;
        if (m instanceof WriteData w) {
            chain(from, w.rid(), w.forward(), () -> store.write(w.chunkId(), w.version(), w.offset(), w.data()),
                    next -> rid -> new WriteData(rid, w.chunkId(), w.version(), w.offset(), w.data(), next));
        } else if (m instanceof SyncChunk s) {
            chain(from, s.rid(), s.forward(), () -> store.sync(s.chunkId(), s.version()),
                    next -> rid -> new SyncChunk(rid, s.chunkId(), s.version(), next));
        } else if (m instanceof ReadData r) {
            read(from, r);
        } else if (m instanceof CreateChunk c) {
            ack(from, c.rid(), guard(() -> store.create(c.chunkId(), c.version(), c.part())));
        } else if (m instanceof BumpVersion b) {
            ack(from, b.rid(), guard(() -> store.bump(b.chunkId(), b.fromVersion(), b.toVersion())));
        } else if (m instanceof DeleteChunk d) {
            ack(from, d.rid(), guard(() -> store.delete(d.chunkId())));
        } else {
            env.transport().send(from, new Ack(m.rid(), Status.BAD_REQUEST, "chunkserver does not serve " + m.getClass().getSimpleName()));
        }
    }

    @Override public void onDisconnect(Address peer) { rpc.onDisconnect(peer); }

    /**
     * Runs the local half of a chain step and, at the same time, forwards the request to the next server;
     * answers OK only when both are done. A failure names the server that failed so the client can leave
     * it out of the next lease.
     */
    private void chain(Address from, long rid, List<ServerRef> forward, Supplier<Promise<Void>> localOp,
                       Function<List<ServerRef>, LongFunction<Message>> nextRequest) {
        Promise<Void> local = guard(localOp);
        Promise<ChainReply> downstream = new Promise<>();
        if (forward.isEmpty()) {
            downstream.complete(new ChainReply(rid, Status.OK, "", ""));
        } else {
            ServerRef next = forward.get(0);
            rpc.call(next.address(), nextRequest.apply(forward.subList(1, forward.size())), ChainReply.class, CHAIN_CALL_NANOS)
                    .onComplete((r, e) -> downstream.complete(e == null ? r
                            : new ChainReply(rid, CairnException.statusOf(e), next.id(), CairnException.detailOf(e))));
        }
        local.onComplete((v, e) -> downstream.onSuccess(down -> {
            ChainReply reply;
            if (e != null) {
                reply = new ChainReply(rid, CairnException.statusOf(e), config.serverId(), CairnException.detailOf(e));
            } else if (down.status() != Status.OK) {
                reply = new ChainReply(rid, down.status(), down.failedServer(), down.detail());
            } else {
                reply = new ChainReply(rid, Status.OK, "", "");
            }
            env.transport().send(from, reply);
        }));
    }

    /** Turns a synchronous refusal (unknown chunk, bad range) into a failed promise. */
    private static <T> Promise<T> guard(Supplier<Promise<T>> op) {
        try {
            return op.get();
        } catch (RuntimeException e) {
            return Promise.failed(e);
        }
    }

    private void read(Address from, ReadData r) {
        guard(() -> store.read(r.chunkId(), r.version(), r.offset(), Math.min(r.length(), Codec.MAX_DATA_BYTES))).onComplete((data, e) -> {
            if (e == null) {
                env.transport().send(from, new DataReply(r.rid(), Status.OK, "", data));
                return;
            }
            Status s = CairnException.statusOf(e);
            if (s == Status.CORRUPT) {
                log.warn("{}", e.getMessage());
                rpc.call(config.master(), rid -> new ReportBad(rid, config.serverId(), r.chunkId(), r.version(), e.getMessage()),
                        Ack.class, MASTER_CALL_NANOS);
            }
            env.transport().send(from, new DataReply(r.rid(), s, CairnException.detailOf(e), new byte[0]));
        });
    }

    private void ack(Address from, long rid, Promise<Void> op) {
        op.onComplete((v, e) -> env.transport().send(from, e == null ? Ack.ok(rid)
                : new Ack(rid, CairnException.statusOf(e), CairnException.detailOf(e))));
    }
}
