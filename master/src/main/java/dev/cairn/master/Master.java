package dev.cairn.master;

import dev.cairn.core.async.Promise;
import dev.cairn.core.ec.Stripes;
import dev.cairn.core.env.Address;
import dev.cairn.core.env.Env;
import dev.cairn.core.env.KvBatch;
import dev.cairn.core.env.Log;
import dev.cairn.core.env.MessageHandler;
import dev.cairn.core.env.Node;
import dev.cairn.core.proto.Ack;
import dev.cairn.core.proto.CairnException;
import dev.cairn.core.env.Plant;
import dev.cairn.core.proto.Leases;
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
import dev.cairn.core.proto.Types.AttrChange;
import dev.cairn.core.proto.StorageClass;
import dev.cairn.core.proto.Types.ChunkLocation;
import dev.cairn.core.proto.Types.ChunkReport;
import dev.cairn.core.proto.Types.FileType;
import dev.cairn.core.proto.Types.ServerRef;
import dev.cairn.core.proto.Types;
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
import java.util.Arrays;
import java.util.Comparator;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.function.LongFunction;
import java.util.function.LongPredicate;

/**
 * The metadata master: namespace (through the metadata log), chunkserver membership and liveness
 * (measured on this host's monotonic clock only), chunk placement and write leases.
 */
public final class Master implements Node, MessageHandler, dev.cairn.core.metrics.MetricsSource {
    /** How often liveness is checked. */
    static final long LIVENESS_CHECK_NANOS = 1_000_000_000L;
    /** Time allowed for a chunkserver to answer a create, bump or delete. */
    static final long CHUNKSERVER_CALL_NANOS = 5_000_000_000L;
    /** A chunkserver's check of a whole copy (up to a chunk's 64 MiB read from its disk), and copies checked per registration at most. */
    static final long VERIFY_CALL_NANOS = 60_000_000_000L;
    static final int MAX_VERIFIES = 64;
    /** How often the planner looks at the chunks that changed (see {@link #changed}). */
    static final long PLAN_INTERVAL_NANOS = 1_000_000_000L;
    /**
     * How often the planner looks at every chunk instead. Only a safety net: every change a plan depends on
     * marks its chunk, so a full pass finds nothing new (asserted), and a master with millions of chunks does
     * not read every record each second.
     */
    static final long FULL_PASS_NANOS = 60_000_000_000L;
    /**
     * While chunks are under goal, over goal or hold stale copies, a finished planner action brings the next pass
     * forward to this long after it (passes coalesce): repair and tidying then run at the speed the servers' action
     * slots allow, not one batch of slots per interval, which after a lost host left hundreds of chunks under goal
     * for minutes, and after a chunkserver came back deleted its extra copies at ~6 a second (chaos
     * chunkserver-kill: 887 extras, 162 s to converge).
     */
    static final long PLAN_KICK_NANOS = 50_000_000L;
    /**
     * After a start the master waits for every chunkserver it knew to register before it repairs or deletes
     * anything (locations are rebuilt from their reports), but no longer than this.
     */
    static final long GRACE_MAX_NANOS = 60_000_000_000L;
    /**
     * Into the grace, the chunks one more loss would take (their servers have reported, the rest have not in this
     * long: most are gone, not slow) are copied, nothing deleted; then again at this period until the grace ends.
     */
    static final long GRACE_REPAIR_AFTER_NANOS = 10_000_000_000L;
    /** Time a chunkserver gets to make one copy for the planner (64 MiB read from peers, written, synced). */
    static final long COPY_CALL_NANOS = 300_000_000_000L;
    /** Time a lease's top-up copy gets to be filled from a holder (the writer waits for the lease meanwhile). */
    static final long FILL_CALL_NANOS = 8_000_000_000L;
    /** After a copy fails, its chunk waits this long before the planner looks at it again. */
    static final long COPY_RETRY_NANOS = 5_000_000_000L;
    /**
     * A server that refused a copy of a chunk outright ({@code EXISTS}: it holds another part of it, or keeps
     * one on a disk written off that may come back) is not asked for that chunk again for this long; without
     * it the planner, which picks the same least-full target each time, would ask it every retry while
     * another server could take the copy. Shorter than the chunkserver's hold on written-off copies, so a
     * cluster with no other server asks again once that lapses.
     */
    static final long REFUSAL_NANOS = 60_000_000_000L;
    /** Refusals remembered at most (chunk, server pairs); past it a refused copy is only retried later. */
    static final int MAX_REFUSALS = 100_000;
    private final Env env;
    private final MasterConfig config;
    private final Log log;
    private final Rpc rpc;
    /**
     * Chunks whose record, copies or servers changed since the planner last found them settled (at goal,
     * nothing extra, nothing stale, nothing under way): the only ones a pass between full passes looks at.
     */
    private final TreeSet<Long> changed = new TreeSet<>();
    private final ChunkRegistry registry = new ChunkRegistry(changed::add);
    /** Chunk records in the namespace: counted by each full pass, kept up to date between them. */
    private long chunkTotal;
    private long lastFullPassNanos;
    private boolean fullPassDue = true;
    /** Chunk slots (inode:index) with a lease being set up; a second request gets BUSY. */
    private final Set<String> leasing = new HashSet<>();
    /** Chunk id -> instant (master clock) until which a lease granted on it may still see writes. */
    private final java.util.Map<Long, Long> leaseUntil = new java.util.HashMap<>();
    /**
     * Chunk id -> instant (master clock) until which a write window a chunkserver reported open may still see
     * writes (a lease this master does not know of: granted before it restarted). Only the planner keeps off
     * these; copies are judged and recorded as usual (readers need them).
     */
    private final java.util.Map<Long, Long> openWindows = new java.util.HashMap<>();
    /**
     * Chunks of {@link #openWindows} whose last report of an open window came while this master's own lease held the
     * chunk (the window is that lease's, reported late): only these count as leased for {@link #dropOutdatedUnderLease}.
     * A window reported with no lease of this master's behind it (a lease from before a restart, or a chunkserver
     * whose window outlives the lease) keeps everything off the chunk, stale copies included.
     */
    private final Set<Long> ownLeaseWindows = new HashSet<>();
    /** Chunks whose lease is being revoked ({@link #revokeLeasesBelowGoal}). */
    private final Set<Long> revoking = new HashSet<>();
    /** Lease revocations under way at most: each asks a few servers, and one pass starts no more than this. */
    static final int MAX_REVOKING = 256;
    /** Chunks with a planner action under way, and actions per server. */
    private final Map<Long, Integer> moving = new java.util.HashMap<>();
    /**
     * Chunk id -> servers a planner delete of it is on its way to: a report from one of them until it answers
     * may predate the delete, and must not count the copy again (sim seed 341: a registration sent just before
     * a delete arrived made the copy count, and the planner dropped another as extra, below the goal).
     */
    private final Map<Long, Set<String>> deletesSent = new java.util.HashMap<>();
    /** Registration reports of copies ahead of the record while their chunk was busy ({@link #judgeDeferred}). */
    private final List<Deferred> deferred = new ArrayList<>();
    /** Chunk id -> instant (master's monotonic clock) before which a chunk whose copy failed is not planned again. */
    private final java.util.Map<Long, Long> retryAt = new java.util.HashMap<>();
    /** Chunk id -> server id -> until when (monotonic) that server is not asked for a copy of the chunk ({@link #REFUSAL_NANOS}). */
    private final java.util.Map<Long, java.util.Map<String, Long>> refusals = new java.util.HashMap<>();
    private int refusalCount;
    private final java.util.Map<String, Integer> busy = new java.util.TreeMap<>();
    private final Set<String> knownServers = new TreeSet<>();
    private final Set<String> drainingServers = new TreeSet<>();
    private Planner.Counts counts = new Planner.Counts(0, 0, 0, 0, 0, 0);
    private long copiesMade;
    private long copiesDeleted;
    private long startNanos;
    /** When the namespace was last walked for the start-up grace's repairs ({@link #repairEndangeredInGrace}), and what it found. */
    private long lastGraceScanNanos;
    private final TreeSet<Long> graceEndangered = new TreeSet<>();
    private boolean grace = true;
    /** An early planner pass is scheduled (see {@link #PLAN_KICK_NANOS}). */
    private boolean kickPending;
    /** Chunks the last planner pass left alone (the archiver leaves them too). */
    private Set<Long> skipped = Set.of();
    private Namespace namespace;
    private MetaLog metaLog;
    private Archiver archiver;
    private boolean ready;
    /** The leader term this master serves (0: a single master). */
    private final long term;

    /** The planner balances servers' used fractions to within this (the simulator's balance check reads it). */
    public static final double BALANCE_SPREAD = Planner.Limits.DEFAULT.spread();

    public Master(Env env, MasterConfig config) { this(env, config, null, null, 0); }

    /**
     * A master serving on behalf of a group ({@link MasterReplica}): {@code namespace} and {@code metaLog} are
     * the replica's, which outlive this master (a new leader term makes a new one); null for a single master,
     * which makes its own with a {@link LocalMetaLog}. {@code term} is the leader term it serves (0 for a single
     * master): every command that changes what a chunkserver stores carries it ({@link MasterProtocol.Fenced}).
     */
    public Master(Env env, MasterConfig config, Namespace namespace, MetaLog metaLog, long term) {
        this.env = env;
        this.config = config;
        this.log = env.log(Master.class);
        this.rpc = new Rpc(env);
        this.namespace = namespace;
        this.metaLog = metaLog;
        this.term = term;
    }

    @Override public void start() {
        if (namespace == null) {
            namespace = new Namespace(env.kv(), config.defaultGoal());
            metaLog = new LocalMetaLog(env.kv(), namespace, env);
        }
        archiver = new Archiver(env, rpc, registry, log, this::choose, namespace, metaLog, term);
        namespace.watch(new Namespace.Watcher() {
            @Override public void chunkChanged(long chunkId, int delta) {
                changed.add(chunkId);
                chunkTotal += delta;
            }

            @Override public void inodeChanged(long inode) { archiver.inodeChanged(inode); }
        });
        if (!namespace.isEmpty()) namespace.checkFormat();
        // what a restart finds may include a killed process's writes the OS still held, not durable yet: they are
        // made durable before anything is done on the strength of them (sim seed 1198: an archive swap logged just
        // before a crash was found at restart, and the old chunks' copies were deleted at their servers'
        // registrations while a power loss could still have brought the old records back)
        Promise<Void> formatted = namespace.isEmpty()
                ? env.kv().write(namespace.formatBatch(env.clock().wallMillis()), true)
                : env.kv().write(new KvBatch(), true);
        formatted.onComplete((v, e) -> {
            if (e != null) {
                log.warn("cannot format the namespace: {}", e.toString());
                return;
            }
            ready = true;
            startNanos = env.clock().nanoTime();
            knownServers.addAll(namespace.knownServers());
            drainingServers.addAll(namespace.drainingServers());
            env.transport().start(config.listen(), this);
            scheduleLivenessCheck();
            schedulePlanner();
            log.info("master listening on {}", config.listen());
        });
    }

    @Override public void stop() {
        ready = false;
        rpc.failAll("master stopping");
    }

    public boolean isReady() { return ready; }

    public int liveServers() { return registry.liveCount(); }

    /** The file system's metadata, read-only use (the simulator's checkers walk it). Null until ready. */
    public Namespace namespace() { return ready ? namespace : null; }

    // ---------------------------------------------------------------- dispatch

    @Override public void onMessage(Address from, Message m) {
        if (rpc.onMessage(from, m)) return;
        Promise<? extends Message> reply;
        try {
            if (term > 0 && ready && answeredFromState(m)) {
                @SuppressWarnings("unchecked")
                Promise<? extends Message> afterBarrier = metaLog.readBarrier().flatMap(v -> (Promise<Message>) handle(from, m));
                reply = afterBarrier;
            } else {
                reply = handle(from, m);
            }
        } catch (CairnException e) {
            reply = Promise.failed(e);
        } catch (RuntimeException e) {
            log.warn("request {} failed: {}", m.getClass().getSimpleName(), e.toString());
            reply = Promise.failed(dev.cairn.core.async.Unexpected.report(e));
        }
        long started = env.clock().nanoTime();
        reply.onComplete((r, e) -> {
            requestLatency.computeIfAbsent(m.getClass().getSimpleName(), k -> new dev.cairn.core.metrics.LatencyHistogram())
                    .record(env.clock().nanoTime() - started);
            Message out = e == null ? r : errorReply(m, CairnException.statusOf(e), CairnException.detailOf(e));
            if (out != null) env.transport().send(from, out);
        });
    }

    /**
     * A client's question answered from this master's state alone (no command proposed). In a group it is answered only
     * after the replica confirms it still leads ({@link MetaLog#readBarrier}): a leader cut off from the others keeps
     * believing it leads for up to its step-down timeout, and its state misses what the new leader committed meanwhile
     * — a file's new length, a chunk replaced, copies moved — so an answer from it could send a reader to bytes older
     * than a write already acknowledged to someone else.
     */
    static boolean answeredFromState(Message m) {
        return m instanceof Lookup || m instanceof ListDir || m instanceof MasterProtocol.GetAttr || m instanceof MasterProtocol.LookupIn
                || m instanceof MasterProtocol.ReadDir || m instanceof MasterProtocol.GetXattr || m instanceof MasterProtocol.ListXattrs
                || m instanceof GetChunks || m instanceof MasterProtocol.ClusterStatus || m instanceof MasterProtocol.FileInfo;
    }

    /** Time from a request's arrival to its reply (its durability in the metadata log included), by kind, for {@code --metrics}. */
    private final java.util.TreeMap<String, dev.cairn.core.metrics.LatencyHistogram> requestLatency = new java.util.TreeMap<>();

    /** Requests of a kind (a message class's simple name) answered so far: how many round trips a client's operation costs. */
    public long requestsAnswered(String kind) {
        dev.cairn.core.metrics.LatencyHistogram h = requestLatency.get(kind);
        return h == null ? 0 : h.count();
    }

    @Override public void onDisconnect(Address peer) {
        rpc.onDisconnect(peer);
        if (!ready) return;
        for (Server s : registry.disconnected(peer)) log.warn("lost the connection to chunkserver {} at {}: marked down", s.id, s.address);
    }

    private Promise<? extends Message> handle(Address from, Message m) {
        // nothing is judged or changed on metadata not yet made durable at start-up (see start)
        if (!ready) {
            // a group's new leader (term > 0): clients wait for it as for an election
            throw term > 0 ? new CairnException(Status.NOT_LEADER, "the leader is starting; leader=" + config.listen())
                    : new CairnException(Status.UNAVAILABLE, "the master is starting");
        }
        if (m instanceof Heartbeat h) return Promise.completed(heartbeat(from, h));
        if (m instanceof Register r) return Promise.completed(register(from, r));
        if (m instanceof MasterProtocol.ChunkInventory inv) return Promise.completed(inventory(inv));
        if (m instanceof ReportBad r) return Promise.completed(reportBad(r));
        if (m instanceof Lookup r) return Promise.completed(new AttrReply(r.rid(), Status.OK, "", namespace.resolve(r.path()).attr()));
        if (m instanceof ListDir r) return Promise.completed(new ListReply(r.rid(), Status.OK, "", namespace.list(r.path())));
        if (m instanceof Mkdir r) {
            return metaLog.submit(new MetaCommand.Mkdir(r.path(), env.clock().wallMillis(), r.op()))
                    .map(a -> new AttrReply(r.rid(), Status.OK, "", a));
        }
        if (m instanceof Create r) {
            refuseUnsatisfiable(r.storageClass());
            return metaLog.submit(new MetaCommand.CreateFile(r.path(), r.chunkSize(), r.storageClass(), env.clock().wallMillis(), r.op()))
                    .map(a -> new AttrReply(r.rid(), Status.OK, "", a));
        }
        if (m instanceof Remove r) return remove(r);
        if (m instanceof MasterProtocol.GetAttr r) return Promise.completed(new AttrReply(r.rid(), Status.OK, "", namespace.inode(r.inode()).attr()));
        if (m instanceof MasterProtocol.LookupIn r) return Promise.completed(new AttrReply(r.rid(), Status.OK, "", namespace.lookup(r.dir(), r.name()).attr()));
        if (m instanceof MasterProtocol.ReadDir r) {
            int max = Math.max(1, Math.min(r.maxEntries(), MasterProtocol.ReadDir.MAX_ENTRIES));
            var entries = namespace.readDir(r.dir(), r.cookie(), max);
            boolean eof = namespace.readDirDone(r.dir(), entries.isEmpty() ? r.cookie() : entries.get(entries.size() - 1).cookie());
            return Promise.completed(new MasterProtocol.DirReply(r.rid(), Status.OK, "", namespace.inode(r.dir()).attr(), entries, eof));
        }
        if (m instanceof MasterProtocol.CreateIn r) {
            refuseUnsatisfiable(r.storageClass());
            return changed(r.rid(), new MetaCommand.CreateIn(r.parent(), r.name(), r.type(), r.mode(), r.uid(), r.gid(), r.target(), r.chunkSize(),
                    r.storageClass(), r.verifier(), env.clock().wallMillis(), r.op()));
        }
        if (m instanceof MasterProtocol.Unlink r) return changed(r.rid(), new MetaCommand.Unlink(r.parent(), r.name(), env.clock().wallMillis(), r.op()));
        if (m instanceof MasterProtocol.Rename r) {
            return changed(r.rid(), new MetaCommand.Rename(r.fromDir(), r.fromName(), r.toDir(), r.toName(), env.clock().wallMillis(), r.op()));
        }
        if (m instanceof MasterProtocol.Link r) return changed(r.rid(), new MetaCommand.Link(r.inode(), r.dir(), r.name(), env.clock().wallMillis(), r.op()));
        if (m instanceof MasterProtocol.SetAttr r) {
            return metaLog.submit(new MetaCommand.SetAttr(r.inode(), r.change(), env.clock().wallMillis())).map(res -> {
                if (r.change().size() != AttrChange.KEEP) log.debug("inode {}: size set to {} ({} chunks freed)", r.inode(), res.attr().size(), res.freedChunks().size());
                forgetChunks(res.freedChunks());
                return new AttrReply(r.rid(), Status.OK, "", res.attr());
            });
        }
        if (m instanceof MasterProtocol.GetXattr r) {
            return Promise.completed(new MasterProtocol.XattrReply(r.rid(), Status.OK, "", Types.NO_ATTR, namespace.xattr(r.inode(), r.name()), List.of()));
        }
        if (m instanceof MasterProtocol.ListXattrs r) {
            return Promise.completed(new MasterProtocol.XattrReply(r.rid(), Status.OK, "", Types.NO_ATTR, NO_BYTES, namespace.xattrNames(r.inode())));
        }
        if (m instanceof MasterProtocol.SetXattr r) {
            return metaLog.submit(new MetaCommand.SetXattr(r.inode(), r.name(), r.value(), r.how(), env.clock().wallMillis(), r.op()))
                    .map(a -> new MasterProtocol.XattrReply(r.rid(), Status.OK, "", a, NO_BYTES, List.of()));
        }
        if (m instanceof CommitLength r) return commit(r);
        if (m instanceof GetChunks r) return Promise.completed(chunks(r));
        if (m instanceof WriteLease r) return lease(r);
        if (m instanceof MasterProtocol.ClusterStatus r) return Promise.completed(status(r));
        if (m instanceof MasterProtocol.FileInfo r) return Promise.completed(fileInfo(r));
        if (m instanceof MasterProtocol.Drain r) return drain(r);
        if (m instanceof MasterProtocol.ReplicaStatus r) {
            return Promise.completed(new MasterProtocol.ReplicaStatusReply(r.rid(), Status.OK, "", true, true, term, -1, config.listen().toString(),
                    List.of(config.listen().toString())));
        }
        if (m instanceof MasterProtocol.ChangeMasters) {
            // a master of a group gets this from its replica (MasterReplica) before it reaches here
            throw new CairnException(Status.BAD_REQUEST, "this master runs alone (no --peers): it has no group to change");
        }
        if (m instanceof MasterProtocol.SetClass r) {
            refuseUnsatisfiable(r.storageClass());
            return metaLog.submit(new MetaCommand.SetClass(r.path(), r.storageClass())).map(a -> {
                // the goal of every chunk of the file changed: the planner looks at them all again
                if (a.type() == FileType.FILE) for (ChunkRecord c : namespace.chunks(a.inode(), 0, Integer.MAX_VALUE)) changed.add(c.chunkId());
                return new AttrReply(r.rid(), Status.OK, "", a);
            });
        }
        throw new CairnException(Status.BAD_REQUEST, "master does not serve " + m.getClass().getSimpleName());
    }

    private static final byte[] NO_BYTES = new byte[0];

    /** The reply a request gets when it fails (each request type has its own reply shape). */
    static Message errorReply(Message req, Status status, String detail) {
        long rid = req.rid();
        if (req.isReply()) return null; // never answer an answer
        if (req instanceof MasterProtocol.CreateIn || req instanceof MasterProtocol.Unlink || req instanceof MasterProtocol.Rename
                || req instanceof MasterProtocol.Link) {
            return new MasterProtocol.ChangeReply(rid, status, detail, Types.NO_ATTR, List.of());
        }
        if (req instanceof MasterProtocol.GetXattr || req instanceof MasterProtocol.ListXattrs || req instanceof MasterProtocol.SetXattr) {
            return new MasterProtocol.XattrReply(rid, status, detail, Types.NO_ATTR, NO_BYTES, List.of());
        }
        if (req instanceof MasterProtocol.ReadDir) return new MasterProtocol.DirReply(rid, status, detail, Types.NO_ATTR, List.of(), false);
        if (req instanceof Lookup || req instanceof Mkdir || req instanceof Create || req instanceof MasterProtocol.SetClass
                || req instanceof MasterProtocol.GetAttr || req instanceof MasterProtocol.LookupIn || req instanceof MasterProtocol.SetAttr
                || req instanceof CommitLength) {
            return new AttrReply(rid, status, detail, Types.NO_ATTR);
        }
        if (req instanceof MasterProtocol.ClusterStatus) {
            return new MasterProtocol.StatusReply(rid, status, detail, false, 0, 0, 0, 0, 0, 0, 0, 0, 0, List.of(), 0);
        }
        if (req instanceof MasterProtocol.ReplicaStatus) return new MasterProtocol.ReplicaStatusReply(rid, status, detail, false, false, 0, -1, "", List.of());
        if (req instanceof MasterProtocol.ChangeMasters) return new MasterProtocol.MastersReply(rid, status, detail, List.of());
        if (req instanceof MasterProtocol.FileInfo) return new MasterProtocol.FileInfoReply(rid, status, detail, Types.NO_ATTR, List.of());
        if (req instanceof ListDir) return new ListReply(rid, status, detail, List.of());
        if (req instanceof WriteLease) return new LeaseReply(rid, status, detail, 0, 0, List.of(), StorageClass.DEFAULT);
        if (req instanceof GetChunks) return new ChunksReply(rid, status, detail, Types.NO_ATTR, List.of());
        if (req instanceof Register) return new RegisterReply(rid, status, List.of(), 0);
        if (req instanceof Heartbeat) return new HeartbeatReply(rid, false, List.of(), 0);
        return new Ack(rid, status, detail);
    }

    // ---------------------------------------------------------------- chunkservers

    private RegisterReply register(Address from, Register r) {
        Server before = registry.server(r.serverId());
        if (before == null || before.incarnation != r.incarnation()) forgetRefusals(r.serverId()); // a restart: its reasons may be gone
        Server s = registry.register(r.serverId(), r.dataAddress(), r.incarnation(), env.clock().nanoTime());
        s.controlAddress = from;
        s.capacityBytes = r.capacityBytes();
        s.usedBytes = r.usedBytes();
        s.topology = r.topology();
        s.draining = drainingServers.contains(s.id);
        if (knownServers.add(s.id)) {
            String id = s.id;
            // through the log, so that a new leader's grace window waits for the same servers; if it fails, a
            // later registration lists the server again
            metaLog.submit(new MetaCommand.ServerKnown(id)).onComplete((v, e) -> { if (e != null) knownServers.remove(id); });
        }
        List<Long> delete = new ArrayList<>();
        List<ChunkReport> remembered = new ArrayList<>(); // reported whole, remembered as corrupt: verified below
        long nextChunk = namespace.nextChunkId();
        int current = 0, stale = 0;
        Map<Long, InodeRecord> files = new java.util.HashMap<>();
        for (ChunkReport reportedCopy : r.chunks()) {
            ChunkReport c = badCopies.judge(s.id, reportedCopy);
            ChunkRecord rec = namespace.chunk(c.chunkId());
            holdIfWritable(c);
            Set<String> deleting = deletesSent.get(c.chunkId());
            if (deleting != null && deleting.contains(s.id)) continue; // a delete is on its way: judged at the next inventory
            if (recordRewritePart(s, c)) continue;
            switch (judge(c, rec, files)) {
                // allocated once and since removed: safe to delete; a higher id is not ours to judge; one being
                // written by an archive rewrite joins the namespace when the rewrite commits
                case GONE -> {
                    if (c.chunkId() < nextChunk && !archiver.isRewriting(c.chunkId()) && !metaLog.freeing(c.chunkId())) {
                        delete.add(c.chunkId());
                        log.debug("chunk {}: {} holds v{} part {}, {} bytes: gone from the namespace, deleted", c.chunkId(), s.id, c.version(), c.part(), c.length());
                    }
                }
                case CURRENT -> {
                    registry.addLocation(c.chunkId(), s, c.part(), c.version(), c.length());
                    log.debug("chunk {}: {} holds v{} (record v{}, data v{}), {} bytes: current", c.chunkId(), s.id, c.version(), rec.version(),
                            rec.dataVersion(), c.length());
                    current++;
                }
                case AHEAD -> {
                    // while a lease or bump is under way the copy may be the bump's own doing: judged again
                    // once it is over (an inventory would skip it for as long as a lease hold lasts)
                    if (!busyChunks().test(c.chunkId())) adopt(s, c);
                    else deferred.add(new Deferred(s.id, s.incarnation, c));
                    current++;
                }
                case OUTDATED -> {
                    stale++; // missed a write lease: never served; repaired and removed by the planner
                    registry.addStale(c.chunkId(), s, c.version());
                    if (c.bad() && !reportedCopy.bad() && remembered.size() < MAX_VERIFIES) remembered.add(reportedCopy);
                    log.debug("chunk {}: {} holds v{} part {}, {} bytes (record v{}, data v{}): outdated", c.chunkId(), s.id, c.version(), c.part(),
                            c.length(), rec.version(), rec.dataVersion());
                }
            }
        }
        log.info("chunkserver {} registered from {} with {} chunks ({} current, {} stale, {} to delete)",
                r.serverId(), r.dataAddress(), r.chunks().size(), current, stale, delete.size());
        verifyRemembered(s, remembered);
        return new RegisterReply(r.rid(), Status.OK, delete, term);
    }

    /**
     * Reconciles a registered server's full chunk list with the metadata (garbage collection): copies of
     * removed chunks are deleted, outdated ones marked stale (the planner repairs, then drops them), current
     * ones the master lost track of (a reply lost on the way) counted again, and copies the server no longer
     * has forgotten. Chunks with anything under way (a lease, a planner action, an archive rewrite) are left
     * alone: the list may predate it. The server answers no differently from a registration.
     */
    private RegisterReply inventory(MasterProtocol.ChunkInventory r) {
        Server s = registry.server(r.serverId());
        if (s == null || !s.alive || s.incarnation != r.incarnation()) return new RegisterReply(r.rid(), Status.NOT_FOUND, List.of(), term);
        LongPredicate busy = busyChunks();
        List<Long> delete = new ArrayList<>();
        long nextChunk = namespace.nextChunkId();
        // the reported ids, sorted below for the look-ups of the second pass (no boxed set per inventory)
        long[] reported = new long[r.chunks().size()];
        int n = 0;
        int found = 0, outdated = 0;
        Map<Long, InodeRecord> files = new java.util.HashMap<>();
        for (ChunkReport reportedCopy : r.chunks()) {
            ChunkReport c = badCopies.judge(s.id, reportedCopy);
            reported[n++] = c.chunkId();
            holdIfWritable(c);
            if (recordRewritePart(s, c)) continue;
            if (busy.test(c.chunkId()) || archiver.isRewriting(c.chunkId())) continue;
            ChunkRecord rec = namespace.chunk(c.chunkId());
            switch (judge(c, rec, files)) {
                case GONE -> { if (c.chunkId() < nextChunk && !metaLog.freeing(c.chunkId())) delete.add(c.chunkId()); }
                case CURRENT -> {
                    if (registry.addLocation(c.chunkId(), s, c.part(), c.version(), c.length())) found++; // the version as reported
                }
                case AHEAD -> {
                    adopt(s, c);
                    found++;
                }
                case OUTDATED -> {
                    if (!s.staleChunks.containsKey(c.chunkId())) {
                        registry.addStale(c.chunkId(), s, c.version());
                        outdated++;
                    }
                }
            }
        }
        Arrays.sort(reported);
        int forgotten = 0;
        for (Long id : new ArrayList<>(s.chunks)) {
            if (Arrays.binarySearch(reported, id) < 0 && !busy.test(id)) {
                registry.removeLocation(id, s.id);
                forgotten++;
            }
        }
        for (Long id : new ArrayList<>(s.staleChunks.keySet())) {
            if (Arrays.binarySearch(reported, id) < 0 && !busy.test(id)) registry.removeStale(id, s);
        }
        if (found + outdated + forgotten + delete.size() > 0) {
            log.info("inventory of {}: {} copies found again, {} outdated, {} gone, {} to delete", s.id, found, outdated, forgotten, delete.size());
        }
        return new RegisterReply(r.rid(), Status.OK, delete, term);
    }

    /**
     * A copy with a write window still open: a lease granted it, maybe by this master before a restart, which
     * does not remember it (holds are in memory). Held as a lease would be, so the planner keeps off while
     * writes may still land (sim: after a master crash the planner tidied an erasure-coded chunk mid-upload,
     * counting an empty repair copy and dropping a whole part).
     */
    private void holdIfWritable(ChunkReport c) {
        // counted from the report, not the window's opening (the report does not say when that was), so a copy reported
        // near its window's end holds its chunk up to 30 s more. Not skipped while this master's own lease holds the
        // chunk: a chunkserver whose window outlives that lease (a clock or lease bug) then keeps the planner off rather
        // than letting it copy the chunk while writes may still land (the sweep catches the planted WALL_CLOCK_LEASES
        // only this way; skipping such reports lost it in 300 seeds)
        if (!c.writable()) return;
        long until = leaseClock() + Leases.MASTER_HOLD_NANOS;
        openWindows.merge(c.chunkId(), until, (a, b) -> b - a > 0 ? b : a);
        if (leaseUntil.containsKey(c.chunkId())) ownLeaseWindows.add(c.chunkId());
        else ownLeaseWindows.remove(c.chunkId());
    }

    /** A registered server's report of a copy ahead of the record, left for when its chunk is no longer busy. */
    private record Deferred(String serverId, long incarnation, ChunkReport report) {}

    /**
     * Judges again the deferred reports whose chunk is no longer busy, as a registration would have; a
     * server that went away or registered again since drops its own (its new report counts).
     * (Sweep seed 383: a copy that took a bump whose reply was lost re-registered during the lease hold,
     * and went unrecorded for 50 s through the start-up grace, the file unreadable with the copy intact.)
     */
    private void judgeDeferred() {
        if (deferred.isEmpty()) return;
        LongPredicate busy = busyChunks();
        Map<Long, InodeRecord> files = new java.util.HashMap<>();
        deferred.removeIf(d -> {
            Server s = registry.server(d.serverId());
            if (s == null || !s.alive || s.incarnation != d.incarnation()) return true;
            ChunkReport c = badCopies.judge(s.id, d.report());
            if (busy.test(c.chunkId())) return false;
            switch (judge(c, namespace.chunk(c.chunkId()), files)) {
                case GONE -> { } // the next inventory has it deleted
                case CURRENT -> registry.addLocation(c.chunkId(), s, c.part(), c.version(), c.length());
                case AHEAD -> adopt(s, c);
                case OUTDATED -> registry.addStale(c.chunkId(), s, c.version());
            }
            return true;
        });
    }

    /**
     * Chunks with something under way: a planner action, an open lease hold, or a lease being set up on their
     * file. Asked of every chunk in an inventory: the sets are looked at in place (not copied into one set per
     * inventory), only the leases being set up are listed first.
     * The answer follows the sets as they change; no caller changes them while it asks.
     */
    private LongPredicate busyChunks() {
        if (leasing.isEmpty()) return id -> moving.containsKey(id) || leaseUntil.containsKey(id) || replacing.containsKey(id);
        Set<Long> settingUp = new HashSet<>();
        for (String slot : leasing) {
            long ino = Long.parseLong(slot.substring(0, slot.indexOf(':')));
            for (ChunkRecord c : namespace.chunks(ino, 0, Integer.MAX_VALUE)) settingUp.add(c.chunkId());
        }
        return id -> moving.containsKey(id) || leaseUntil.containsKey(id) || replacing.containsKey(id) || settingUp.contains(id);
    }

    /** {@link ChunkRecord#current}, or the planted bug {@link Plant#CURRENT_WITHOUT_LOWER_BOUND}'s version of it. */
    private boolean current(ChunkRecord rec, long copyVersion, boolean ec) {
        if (!ec && env.planted(Plant.CURRENT_WITHOUT_LOWER_BOUND)) return copyVersion <= rec.version();
        return rec.current(copyVersion, ec);
    }

    /** What a reported copy is, against the metadata. */
    private enum Verdict {
        /** No file has the chunk. */
        GONE,
        /**
         * Holds every acknowledged byte: a version current for the file's class ({@link ChunkRecord#current}),
         * at least the committed length, not known to be corrupt.
         */
        CURRENT,
        /** A replica past the record's version (a bump the master lost), long enough and sound: the record adopts it. */
        AHEAD,
        /** Missed a write, too short, or corrupt: never served. */
        OUTDATED
    }

    /**
     * Asks {@code s} to check copies it registered whole that the master remembers it reported corrupt ({@link BadCopies}):
     * found sound, they count again. The report may have been of bytes never made durable (a bit flip in a block written
     * since the last sync), which the server's restart dropped; kept out for good, such a copy left a chunk whose other
     * copies were gone lost for good (seed 5074: the last copy of a chunk, sound after its server's restart, never
     * counted). A copy that fails the check is reported corrupt again by its server.
     */
    private void verifyRemembered(Server s, List<ChunkReport> copies) {
        long incarnation = s.incarnation;
        for (ChunkReport c : copies) {
            rpc.call(s.address, rid -> new MasterProtocol.VerifyChunk(rid, c.chunkId(), c.version(), term), Ack.class, VERIFY_CALL_NANOS)
                    .onComplete((ack, e) -> {
                        if (e != null || ack.status() != Status.OK || !s.alive || s.incarnation != incarnation) return; // the mark stays
                        Set<String> deleting = deletesSent.get(c.chunkId());
                        if (deleting != null && deleting.contains(s.id)) return; // the planner dropped it meanwhile
                        badCopies.forget(s.id, c.chunkId());
                        ChunkRecord rec = namespace.chunk(c.chunkId());
                        if (rec == null || !s.staleChunks.containsKey(c.chunkId()) || s.staleChunks.get(c.chunkId()) != c.version()) return;
                        if (judge(c, rec, new java.util.HashMap<>()) != Verdict.CURRENT) return; // a lease moved the chunk on meanwhile
                        registry.removeStale(c.chunkId(), s);
                        registry.addLocation(c.chunkId(), s, c.part(), c.version(), c.length());
                        log.info("chunk {}: {}'s copy at v{}, once reported corrupt, checks out whole: current again", c.chunkId(), s.id, c.version());
                        kickPlanner();
                    });
        }
    }

    /** Judges one reported copy; {@code files} caches inode records across one report (many chunks share a file). */
    private Verdict judge(ChunkReport c, ChunkRecord rec, Map<Long, InodeRecord> files) {
        if (rec == null) return Verdict.GONE;
        InodeRecord f = files.computeIfAbsent(rec.inode(), namespace::inode);
        boolean ec = f.storageClass().isEc();
        boolean whole = (env.planted(Plant.COPY_LENGTH_UNJUDGED) || c.length() >= committedLength(rec, f, c.part())) && !c.bad();
        if (whole && current(rec, c.version(), ec)) return Verdict.CURRENT;
        if (whole && c.version() > rec.version() && !ec) return Verdict.AHEAD;
        return Verdict.OUTDATED;
    }

    /**
     * Bytes a current copy (or part {@code part}) of this chunk must hold: the acknowledged data of its
     * chunk, or for an erasure-coded part its cells of that data ({@link Stripes#partLength}). A copy at the
     * right version but shorter than this (created, then left out of the write) is not current. None if no
     * commit ever named the chunk (data version 0: a hole to readers whatever its copies hold, and a file may
     * have grown over it).
     */
    private static long committedLength(ChunkRecord rec, InodeRecord f, int part) {
        if (!rec.committed()) return 0;
        long inChunk = dataLength(rec, f);
        StorageClass cls = f.storageClass();
        if (!cls.isEc() || inChunk == 0) return inChunk;
        return Stripes.partLength(inChunk, cls.k(), part);
    }

    /** The file's bytes that fall in this chunk. */
    private static long dataLength(ChunkRecord rec, InodeRecord f) {
        return Math.max(0, Math.min(f.chunkSize(), f.size() - (long) rec.index() * f.chunkSize()));
    }

    private HeartbeatReply heartbeat(Address from, Heartbeat h) {
        Server s = registry.server(h.serverId());
        if (s == null || !s.alive || s.incarnation != h.incarnation()) return new HeartbeatReply(h.rid(), false, List.of(), term);
        s.controlAddress = from;
        s.lastHeardNanos = env.clock().nanoTime();
        s.beatsSinceRegistration++;
        s.capacityBytes = h.capacityBytes();
        s.usedBytes = h.usedBytes();
        s.disks = List.copyOf(h.disks());
        List<List<Types.DiskReport>> all = new ArrayList<>();
        for (Server o : registry.live()) all.add(o.disks);
        Set<String> slow = DiskJudge.judge(s.disks, DiskJudge.median(all), s.slowDisks, s.diskStreaks);
        if (!slow.equals(s.slowDisks)) log.warn("chunkserver {}: disks judged slow now {} (were {})", s.id, slow, s.slowDisks);
        s.slowDisks = slow;
        return new HeartbeatReply(h.rid(), true, List.copyOf(slow), term);
    }

    private Ack reportBad(ReportBad r) {
        log.warn("chunkserver {} reports chunk {} v{} bad: {}", r.serverId(), r.chunkId(), r.version(), r.reason());
        Server s = registry.server(r.serverId());
        badCopies.add(r.serverId(), r.chunkId(), r.version());
        if (s != null && s.alive) registry.addStale(r.chunkId(), s, r.version()); // repaired, then deleted, by the planner
        else registry.removeLocation(r.chunkId(), r.serverId());
        return Ack.ok(r.rid());
    }

    private void scheduleLivenessCheck() {
        env.scheduler().schedule(LIVENESS_CHECK_NANOS, () -> {
            if (!ready) return;
            expireSilentServers();
            scheduleLivenessCheck();
        });
    }

    /** Marks dead every chunkserver whose last heartbeat is older than the timeout. */
    private void expireSilentServers() {
        for (Server s : registry.expire(env.clock().nanoTime() - config.heartbeatTimeoutNanos())) {
            log.warn("chunkserver {} at {} missed its heartbeats: marked dead", s.id, s.address);
        }
    }

    // ---------------------------------------------------------------- files

    private Promise<Ack> remove(Remove r) {
        return metaLog.submit(new MetaCommand.Remove(r.path(), r.op())).map(chunkIds -> {
            forgetChunks(chunkIds);
            return Ack.ok(r.rid());
        });
    }

    private Promise<MasterProtocol.ChangeReply> changed(long rid, MetaCommand<MetaCommand.Changed> command) {
        return metaLog.submit(command).map(c -> {
            forgetChunks(c.freedChunks());
            return new MasterProtocol.ChangeReply(rid, Status.OK, "", c.attr(), c.dirs());
        });
    }

    /** Chunks no file has any more: deleted from every server holding them. */
    private void forgetChunks(List<Long> chunkIds) {
        for (long id : chunkIds) {
            for (Server s : registry.forget(id)) {
                // best effort: a copy on a server that is down now is deleted when it registers again
                rpc.call(s.address, rid -> new DeleteChunk(rid, id, DeleteChunk.ANY_VERSION, term), Ack.class, CHUNKSERVER_CALL_NANOS);
            }
        }
    }

    /**
     * A writer's commit: the file's length and the versions its chunks were written at, in one log entry.
     * Once it is recorded, copies of those chunks at older versions no longer hold every acknowledged byte:
     * they are outdated (repaired from the current ones, then removed by the planner).
     */
    private Promise<AttrReply> commit(CommitLength r) {
        if (r.chunks().size() > CommitLength.MAX_CHUNKS) {
            throw new CairnException(Status.BAD_REQUEST, "a commit lists at most " + CommitLength.MAX_CHUNKS + " chunks, not " + r.chunks().size());
        }
        List<MetaCommand.Rewritten> swaps = new ArrayList<>();
        for (Types.ChunkVersion w : r.chunks()) {
            Replacement x = replacing.get(w.chunkId());
            if (x != null && x.inode() == r.inode()) swaps.add(x.chunk());
        }
        for (MetaCommand.Rewritten x : swaps) {
            // the swap replaces a whole readable chunk: only with one whose every part is still held (the writer's sync
            // found them all durable, but a server may have died since). Swapped in short, the chunk could be below k
            // parts, and the old chunk's bytes this writer never touched would go with it (sim seed 1240 with three
            // masters: two of four parts' servers were lost between the upload and a commit 16 s later)
            LeaseChain chain = leaseChains.get(x.newChunkId());
            int held = 0;
            for (int i = 0; chain != null && i < chain.servers().size(); i++) {
                Server s = chain.servers().get(i);
                if (s.alive && (holdsAt(x.newChunkId(), s, chain.version()) || s.epoch == chain.epochs()[i])) held++;
            }
            if (chain == null || held < chain.servers().size()) {
                throw new CairnException(Status.STALE, "chunk " + x.index() + " of inode " + r.inode() + ": " + held + " parts of its rewrite (chunk "
                        + x.newChunkId() + ") are still held, of " + (chain == null ? "?" : chain.servers().size()) + "; write it again");
            }
        }
        for (Types.ChunkVersion w : r.chunks()) requireCopies(w, r.inode());
        long now = env.clock().wallMillis();
        Promise<?> applied = swaps.isEmpty() ? metaLog.submit(new MetaCommand.SetLength(r.inode(), r.length(), now, List.copyOf(r.chunks())))
                : metaLog.submit(new MetaCommand.CommitRewrite(r.inode(), r.length(), now, List.copyOf(r.chunks()), swaps)).map(old -> {
                    for (MetaCommand.Rewritten x : swaps) {
                        replacing.remove(x.newChunkId());
                        log.debug("inode {} chunk {}: chunk {} swapped in for chunk {}", r.inode(), x.index(), x.newChunkId(), x.oldChunkId());
                    }
                    forgetChunks(old); // the replaced chunks' parts go; readers holding their locations ask again
                    return old;
                });
        return applied.map(a -> {
            for (Types.ChunkVersion w : r.chunks()) {
                ChunkRecord rec = namespace.chunk(w.chunkId());
                LeaseChain chain = leaseChains.remove(w.chunkId());
                if (rec == null) continue;
                boolean ec = namespace.inode(rec.inode()).storageClass().isEc();
                InodeRecord f = namespace.inode(rec.inode());
                Set<String> vouched = new HashSet<>();
                // (an erasure-coded chunk likewise: its upload commits only once every part is durable; sim seed 13852:
                // a part registered at 0 bytes mid-upload was marked stale at the commit, the chunk left with 2 of 3
                // needed parts counted, unreadable and unrepaired until the next inventory, 39 s later)
                if (chain != null && chain.version() == w.version() && rec.version() == w.version()) {
                    // the writer commits a version only once its upload is durable on every copy of the lease's chain,
                    // top-up copies included: each holds every byte acknowledged now, whatever length a registration
                    // in the middle of the write reported (sim seed 6188 at 30 s: two chain copies registered at
                    // 0 bytes were counted short, the chunk left with no known copy until the next inventory). A
                    // top-up copy not yet reported is recorded now too (sweep seed 1928: waiting for its inventory
                    // left a chunk whose old holder died meanwhile unreadable for up to a minute)
                    for (int i = 0; i < chain.servers().size(); i++) {
                        Server s = chain.servers().get(i);
                        // a recorded holder at this version, or one not recorded (a top-up copy) if the master has not
                        // forgotten the server's holdings since (its copy may have gone with a disk) nor heard it is bad
                        if (chain.vouches(i, w.chunkId(), holdsAt(w.chunkId(), s, w.version()))) {
                            registry.addLocation(w.chunkId(), s, ec ? i : 0, w.version());
                            vouched.add(s.id);
                        }
                    }
                } else if (chain == null && rec.version() == w.version()) {
                    // the lease was granted by an earlier leader (its chain was that master's soft state), or this
                    // commit follows another under the same lease: the copies recorded at the lease's version are its
                    // chain's — a version is bumped on the chain only, and a copy that fails is left out by a new lease
                    // at a new version — so the writer's commit vouches for each, whatever length it registered with
                    // in the middle of the write. Judged by those lengths, every copy was marked stale and the chunk
                    // counted lost, unreadable until the next inventory (chaos partition seed 10: a leader cut off from
                    // the other masters mid-write; CommitAfterFailoverSimTest).
                    for (Holder h : registry.holders(w.chunkId())) {
                        if (h.version() != w.version()) continue;
                        registry.addLocation(w.chunkId(), h.server(), h.part(), w.version());
                        vouched.add(h.server().id);
                    }
                }
                for (Holder h : registry.holders(w.chunkId())) {
                    if (vouched.contains(h.server().id)) continue;
                    // a copy reported shorter than what is now committed (registered while the write was under way)
                    // lacks acknowledged bytes: the planner must not count it (sim: it dropped a good copy as extra)
                    boolean shortCopy = registry.reportedLength(w.chunkId(), h.server().id) < committedLength(rec, f, h.part())
                            && !env.planted(Plant.COPY_LENGTH_UNJUDGED);
                    if (!current(rec, h.version(), ec) || shortCopy) registry.addStale(w.chunkId(), h.server(), h.version());
                }
            }
            // the file's attributes once committed, so that the writer need not ask for them (a master round trip per
            // COMMIT); none if the file is gone (removed by a command applied with this one)
            InodeRecord file = namespace.inodeOrNull(r.inode());
            return new AttrReply(r.rid(), Status.OK, "", file == null ? Types.NO_ATTR : file.attr());
        });
    }

    /**
     * Refuses a commit that would make a version current that fewer copies hold than the class requires. The writer
     * synced it on every copy of its chain, but a copy may have gone since: the planner deletes copies by the data
     * version committed before, which the writer's pending version is not yet (sim seed 363: a drain deleted a synced
     * copy of a lease's version 4 while the writer was held up elsewhere for 19 s, as copies at the committed
     * version 2 were enough; the commit of version 4 then made the one copy left the only current one). STALE, so the
     * writer writes it again under a new lease, whose chain is whole again; while a starting leader has not heard
     * from every chunkserver, NOT_LEADER (asked again shortly) rather than a refusal its registry cannot justify. A
     * copy on a server that is down counts (a crash keeps what was synced; the planner repairs a host lost for good).
     */
    private void requireCopies(Types.ChunkVersion w, long inode) {
        ChunkRecord rec = namespace.chunk(w.chunkId());
        if (rec == null || rec.inode() != inode || w.version() <= rec.dataVersion() || w.version() != rec.version()) return; // judged by the log
        if (replacing.containsKey(w.chunkId())) return; // a rewrite: its parts are judged with its swap
        StorageClass cls = namespace.inode(inode).storageClass();
        // what counts: a server per replica, a distinct part per erasure-coded part
        Set<Object> held = new HashSet<>();
        for (Holder h : registry.holders(w.chunkId())) {
            if (h.version() == w.version()) held.add(cls.isEc() ? (Object) h.part() : h.server().id);
        }
        LeaseChain chain = leaseChains.get(w.chunkId());
        for (int i = 0; chain != null && chain.version() == w.version() && i < chain.servers().size(); i++) {
            if (chain.mayHold(i, w.chunkId())) held.add(cls.isEc() ? (Object) i : chain.servers().get(i).id);
        }
        int needed = cls.isEc() ? cls.parts() : cls.replicas();
        if (held.size() >= needed) return;
        String why = "chunk " + w.chunkId() + " v" + w.version() + " is held by " + held.size() + " of the " + needed
                + (cls.isEc() ? " parts " : " copies ") + cls + " requires";
        if (grace) throw new CairnException(Status.NOT_LEADER, "the leader is starting: " + why + " as far as it knows yet; leader=" + config.listen());
        throw new CairnException(Status.STALE, why + " (a copy went since the write); write it again");
    }

    /** Whether the registry records {@code s} holding a current copy of the chunk at {@code version}. */
    private boolean holdsAt(long chunkId, Server s, long version) {
        for (Holder h : registry.holders(chunkId)) if (h.server() == s && h.version() == version) return true;
        return false;
    }

    /** Whether the copies known make the chunk readable: one replica, or k distinct parts of an erasure-coded chunk. */
    private static boolean readable(StorageClass cls, List<Holder> holders) {
        if (!cls.isEc()) return !holders.isEmpty();
        java.util.Set<Integer> parts = new java.util.HashSet<>();
        for (Holder h : holders) parts.add(h.part());
        return parts.size() >= cls.k();
    }

    private ChunksReply chunks(GetChunks r) {
        InodeRecord f = namespace.inode(r.inode());
        if (f.type() != FileType.FILE) throw new CairnException(Status.IS_DIR, "inode " + r.inode());
        List<ChunkLocation> out = new ArrayList<>();
        for (ChunkRecord c : namespace.chunks(r.inode(), r.fromIndex(), Math.max(0, Math.min(r.count(), 4096)))) {
            // nothing committed to it (a write into a hole not yet committed, or one that failed): a hole to readers
            if (!c.committed()) continue;
            List<ServerRef> refs = new ArrayList<>();
            List<Integer> parts = new ArrayList<>();
            // a reader reads at one version: the newest any current copy has (copies a version behind, left
            // out of a lease that wrote nothing, are read when they are all there is)
            long newest = 0;
            for (Holder h : registry.holders(c.chunkId())) newest = Math.max(newest, h.version());
            List<Holder> holders = new ArrayList<>();
            for (Holder h : registry.holders(c.chunkId())) if (h.version() == newest) holders.add(h);
            // readers try copies in order: copies on servers with a slow disk last
            holders.sort(Comparator.comparing((Holder h) -> !h.server().slowDisks.isEmpty()));
            int fast = 0;
            for (Holder h : holders) {
                refs.add(h.server().ref());
                parts.add(h.part());
                if (h.server().slowDisks.isEmpty()) fast++;
            }
            if (grace && term > 0 && !readable(f.storageClass(), holders)) {
                // a new leader of a group hears of copies only as chunkservers report: "ask again shortly" rather than
                // "no copy" to a reader (the client retries it every 200 ms, as a leader change); for an erasure-coded
                // chunk, until k distinct parts have reported (chaos leader-kill seed 12: a read failed with 1 of 3 parts)
                throw new CairnException(Status.NOT_LEADER, "the leader is starting: too few chunkservers holding chunk " + c.chunkId()
                        + " have reported yet to read it; leader=" + config.listen());
            }
            out.add(new ChunkLocation(c.index(), c.chunkId(), holders.isEmpty() ? c.version() : newest, refs, parts, fast));
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
        List<ChunkRecord> found = namespace.chunks(r.inode(), r.index(), 1);
        boolean existed = !found.isEmpty();
        Set<String> exclude = new TreeSet<>(r.exclude());
        long chunkStart = (long) r.index() * f.chunkSize();
        // acknowledged bytes in this chunk: a commit covered a write to it, and the file still reaches it (a chunk
        // in a hole the file grew over holds only zeros until a write to it is committed)
        boolean committedData = existed && found.get(0).committed() && f.size() > chunkStart;
        if (f.storageClass().isEc() && r.basedOn() != WriteLease.ANY_BASE) {
            long now = committedData ? found.get(0).chunkId() : WriteLease.NOTHING_READ;
            if (now != r.basedOn()) {
                // the writer's image of the chunk was read from what is no longer the file's: uploaded whole, it would
                // undo the change made since (another writer's committed rewrite, a truncate)
                leasing.remove(slot);
                throw new CairnException(Status.STALE, "chunk " + r.index() + " of inode " + r.inode() + " changed since it was read (chunk "
                        + r.basedOn() + ", now " + now + "); read it again");
            }
        }
        // an erasure-coded chunk holding acknowledged data is written afresh under a new id, swapped in at the commit
        Promise<Lease> leased;
        try {
            leased = f.storageClass().isEc() && committedData ? rewriteLease(f, found.get(0), exclude) : allocLease(r, f, existed, committedData, exclude);
        } catch (RuntimeException e) {
            leasing.remove(slot); // refused before anything was under way (too few servers): the slot is free again
            throw e;
        }
        Promise<LeaseReply> out = leased.map(lease -> {
            StorageClass cls = f.storageClass();
            if (!cls.isEc() && lease.chain.size() < cls.replicas()) {
                refuseUnsatisfiable(cls);
                // the durability contract: a sync is acknowledged only once every copy the class requires has
                // it, so no chain may be shorter than the goal. The planner restores the goal; the client retries.
                throw new CairnException(Status.UNAVAILABLE, "chunk " + lease.chunkId + " can be written on only " + lease.chain.size()
                        + " of the " + cls.replicas() + " servers " + cls + " requires now");
            }
            // writes may land until the chunkservers' windows close; the planner keeps off until then
            leaseUntil.put(lease.chunkId, leaseClock() + Leases.MASTER_HOLD_NANOS);
            List<Server> servers = new ArrayList<>();
            for (ServerRef ref : lease.chain) {
                Server sv = registry.server(ref.id());
                if (sv != null) servers.add(sv);
            }
            // an erasure-coded lease's chain is its parts in order (server i takes part i): kept only whole
            if (!cls.isEc() || servers.size() == lease.chain.size()) {
                long[] epochs = new long[servers.size()];
                for (int i = 0; i < epochs.length; i++) epochs[i] = servers.get(i).epoch;
                leaseChains.put(lease.chunkId, new LeaseChain(lease.version, List.copyOf(servers), epochs));
            }
            return new LeaseReply(r.rid(), Status.OK, "", lease.chunkId, lease.version, lease.chain, f.storageClass().placement());
        });
        out.onComplete((v, e) -> leasing.remove(slot));
        if (term == 0) return out;
        // a new leader of a group whose chunkservers have not all reported yet cannot place what it cannot see:
        // "not ready, nothing done, ask again" (the client retries it every 200 ms without spending the writer's
        // own retries, whose backoff made failovers felt for seconds) rather than a placement failure
        return out.then((v, e) -> {
            if (e == null || !grace) return e == null ? Promise.completed(v) : Promise.failed(e);
            Status st = CairnException.statusOf(e);
            if (st != Status.NO_SPACE && st != Status.UNAVAILABLE) return Promise.failed(e);
            return Promise.failed(new CairnException(Status.NOT_LEADER, "the leader is starting: " + registry.liveCount() + " of "
                    + knownServers.size() + " known chunkservers have reported (" + CairnException.detailOf(e) + "); leader=" + config.listen()));
        });
    }

    private record Lease(long chunkId, long version, List<ServerRef> chain) {}

    /**
     * The servers of the replicated chain a lease at {@code version} handed out (top-up copies included), each
     * with its {@code epoch} then, kept while its hold lasts.
     */
    private record LeaseChain(long version, List<Server> servers, long[] epochs) {
        /** Epoch of a chain position the master no longer vouches for (its copy was deleted since). */
        static final long DELETED = -1;

        /** The same chain without a vouch for {@code s}'s copy: the planner deleted it. */
        LeaseChain without(Server s) {
            long[] e = epochs.clone();
            for (int i = 0; i < e.length; i++) if (servers.get(i) == s) e[i] = DELETED;
            return new LeaseChain(version, servers, e);
        }

        /**
         * Whether the commit of this chain's version may vouch for position {@code i}'s copy: its server is up, and either
         * reported a copy at this version or has not restarted since the lease (a top-up copy not yet reported), nor been
         * heard to hold the chunk bad, nor had it deleted.
         */
        boolean vouches(int i, long chunkId, boolean recorded) {
            Server s = servers.get(i);
            return s.alive && (recorded || (s.epoch == epochs[i] && !s.staleChunks.containsKey(chunkId)));
        }

        /**
         * Whether position {@code i}'s synced copy may still be there, as far as the master knows: the copy was not
         * deleted nor reported bad, and its server has not registered again since the lease (it would have reported
         * the copy): either it is up in the same epoch, or it is down now (a crash or a partition keeps what was synced;
         * going down moves its epoch on).
         */
        boolean mayHold(int i, long chunkId) {
            Server s = servers.get(i);
            return epochs[i] != DELETED && !s.staleChunks.containsKey(chunkId) && (s.epoch == epochs[i] || !s.alive);
        }
    }

    /** Copies reported corrupt, kept bad across their servers' restarts. */
    private final BadCopies badCopies = new BadCopies();

    /** Chunk id -> its current lease's chain: a commit of that version vouches for every copy in it ({@link #commit}). */
    private final java.util.Map<Long, LeaseChain> leaseChains = new java.util.HashMap<>();


    /**
     * Blocks a copy of a chunk of a file with chunks of {@code chunkSize} bytes in class {@code cls} may hold: the
     * chunk, or its longest erasure-coded part (part 0). Where a copy's shadow block places begin.
     */
    static int capacity(int chunkSize, StorageClass cls) {
        long bytes = cls.isEc() ? Stripes.partLength(chunkSize, cls.k(), 0) : chunkSize;
        return dev.cairn.core.chunk.ChunkFormat.capacityFor(bytes);
    }

    /** The clock write-lease holds are timed on: this host's monotonic clock (a planted bug uses the wall clock). */
    private long leaseClock() {
        return env.planted(Plant.WALL_CLOCK_LEASES) ? env.clock().wallMillis() * 1_000_000L : env.clock().nanoTime();
    }

    /**
     * Refuses ({@code BAD_REQUEST}, which no client retries) a class this cluster can never place: fewer
     * chunkservers than it has copies or parts in distinct failure domains (with its disk label, unless it
     * overflows), counting servers that are down but not draining ones. A writer used to retry such a class for
     * half a minute and then fail with a misleading NO_SPACE or UNAVAILABLE. Only once the start-up grace is over:
     * before, a server not yet back would be missing from the count. The default class (resolved by the
     * namespace) is judged where it is used, at a lease.
     */
    private void refuseUnsatisfiable(StorageClass cls) {
        if (grace || cls.equals(StorageClass.DEFAULT)) return;
        Set<String> domains = new HashSet<>();
        for (Server s : registry.all()) {
            if (s.draining) continue;
            if (!cls.disk().isEmpty() && !cls.overflow() && !cls.disk().equals(s.topology.disk())) continue;
            domains.add(s.domain(cls.domain()));
        }
        if (domains.size() >= cls.parts()) return;
        String level = cls.domain().name().toLowerCase(java.util.Locale.ROOT);
        throw new CairnException(Status.BAD_REQUEST, cls + " needs " + cls.parts() + (cls.isEc() ? " parts" : " copies") + " on distinct "
                + level + "s" + (cls.disk().isEmpty() || cls.overflow() ? "" : " with disk label " + cls.disk()) + ", and this cluster has "
                + domains.size() + " such " + level + (domains.size() == 1 ? "" : "s") + " (not draining): add chunkservers or choose a class that fits");
    }

    /**
     * A lease on a chunk written where it is: a new one placed, an existing one bumped on its live current copies
     * (leaving out the ones the client saw fail), a never-committed one placed afresh above every version handed out.
     */
    private Promise<Lease> allocLease(WriteLease r, InodeRecord f, boolean existed, boolean committedData, Set<String> exclude) {
        return metaLog.submit(new MetaCommand.AllocChunk(r.inode(), r.index())).flatMap(c -> {
            if (f.storageClass().isEc()) return ecLease(f, c, existed, exclude);
            StorageClass cls = f.storageClass();
            int capacity = capacity(f.chunkSize(), cls);
            if (!existed) return place(c, cls, exclude, capacity).flatMap(l -> topUp(l, cls, exclude, capacity));
            List<Holder> holders = new ArrayList<>();
            for (Holder h : registry.holders(c.chunkId())) if (!exclude.contains(h.server().id)) holders.add(h);
            // a holder the bump leaves out (it refused: a copy found bad, or it went silent) still has its copy, which
            // may hold acknowledged bytes: a top-up there would replace it before the new copy is filled (sim seed
            // 5173: a copy marked bad after a misdirected header write, replaced while the chunk was below its goal)
            Set<String> notAgain = new TreeSet<>(exclude);
            for (Holder h : holders) notAgain.add(h.server().id);
            if (!holders.isEmpty()) return bump(c, holders).flatMap(l -> topUp(l, cls, notAgain, capacity));
            if (committedData) {
                throw new CairnException(Status.UNAVAILABLE, "no live current copy of chunk " + c.chunkId() + " holding committed data");
            }
            // nothing committed in this chunk: start over on fresh servers, above every version handed out
            return metaLog.submit(new MetaCommand.BumpVersion(c.chunkId())).flatMap(next -> place(next, cls, exclude, capacity))
                    .flatMap(l -> topUp(l, cls, exclude, capacity));
        });
    }

    /** Places a new replicated chunk on up to its goal of servers in distinct failure domains (the planner adds any missing later). */
    private Promise<Lease> place(ChunkRecord c, StorageClass cls, Set<String> exclude, int capacity) {
        List<Server> chosen = choose(cls, exclude, cls.replicas());
        if (chosen.size() < cls.replicas()) refuseUnsatisfiable(cls);
        if (chosen.isEmpty()) {
            throw new CairnException(Status.NO_SPACE, "no live chunkserver can take chunk " + c.chunkId() + " of class " + cls
                    + (cls.disk().isEmpty() ? "" : " (it needs disk label " + cls.disk() + ")"));
        }
        assert env.planted(Plant.TWO_ON_ONE_HOST) || distinctDomains(chosen, cls.domain()) : "two copies of one chunk in one failure domain";
        List<Promise<Ack>> calls = new ArrayList<>();
        for (Server s : chosen) calls.add(call(s, rid -> new CreateChunk(rid, c.chunkId(), c.version(), 0, capacity, !c.committed(), term)));
        return settle(c, List.copyOf(chosen), calls);
    }

    /**
     * Up to {@code n} servers for a new chunk of class {@code cls}: live, taking chunks (not draining, not
     * full, with a usable disk), carrying the class's disk label, one per failure domain, in a random order
     * (Fisher-Yates with the node's seeded random: spread, yet replayable). A class that overflows takes
     * servers without its label when the labelled ones cannot hold all copies; the planner moves those
     * copies back once labelled servers have room.
     */
    private List<Server> choose(StorageClass cls, Set<String> exclude, int n) {
        List<Server> chosen = new ArrayList<>();
        Set<String> domains = new HashSet<>();
        List<Server> candidates = candidates(exclude);
        for (boolean strict : new boolean[] {true, false}) {
            if (!strict && (!cls.overflow() || cls.disk().isEmpty())) break;
            for (Server s : candidates) {
                if (chosen.size() == n) break;
                if (strict && !cls.disk().isEmpty() && !cls.disk().equals(s.topology.disk())) continue;
                if (chosen.contains(s) || !s.acceptsChunks(Planner.Limits.DEFAULT.fullFraction())) continue;
                if (domains.add(s.domain(cls.domain()))) chosen.add(s);
                if (env.planted(Plant.TWO_ON_ONE_HOST) && chosen.size() < n && chosen.get(chosen.size() - 1) == s) chosen.add(s);
            }
        }
        return chosen;
    }

    /** Live servers not excluded and not draining, in a random order. */
    private List<Server> candidates(Set<String> exclude) {
        List<Server> candidates = new ArrayList<>();
        for (Server s : registry.live()) if (!exclude.contains(s.id) && !s.draining) candidates.add(s);
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
     * EC parts are never written in place (a rewrite in place could let a degraded read mix old and new cells of
     * a stripe): a chunk holding acknowledged data is rewritten under a new id ({@link #rewriteLease}), and a
     * retried upload of one holding nothing is placed afresh above every version handed out, which makes any
     * earlier parts stale (and lets the servers replace them: {@code CreateChunk.nothingCommitted}).
     */
    private Promise<Lease> ecLease(InodeRecord f, ChunkRecord c, boolean existed, Set<String> exclude) {
        List<Server> chosen = chooseParts(f.storageClass(), exclude);
        Promise<ChunkRecord> version = existed ? metaLog.submit(new MetaCommand.BumpVersion(c.chunkId())) : Promise.completed(c);
        return version.flatMap(next -> {
            for (Holder h : registry.holders(c.chunkId())) registry.removeLocation(c.chunkId(), h.server().id);
            log.debug("inode {} chunk {}: chunk {} v{} {} on {}", f.inode(), c.index(), c.chunkId(), next.version(), existed ? "placed afresh" : "new",
                    chosen.stream().map(sv -> sv.id).toList());
            return createParts(f, c.chunkId(), next.version(), !next.committed(), chosen);
        });
    }

    /** Servers for the k+m parts of a new erasure-coded chunk, part i on server i; NO_SPACE if too few are usable. */
    private List<Server> chooseParts(StorageClass cls, Set<String> exclude) {
        List<Server> candidates = choose(cls, exclude, cls.parts());
        if (candidates.size() < cls.parts()) {
            refuseUnsatisfiable(cls);
            throw new CairnException(Status.NO_SPACE, cls + " needs " + cls.parts() + " live chunkservers in distinct failure domains (one per "
                    + cls.domain() + (cls.disk().isEmpty() ? "" : ", disk label " + cls.disk()) + "); " + candidates.size() + " are usable");
        }
        List<Server> chosen = List.copyOf(candidates);
        assert env.planted(Plant.TWO_ON_ONE_HOST) || distinctDomains(chosen, cls.domain()) : "two parts of one chunk in one failure domain";
        return chosen;
    }

    private Promise<Lease> createParts(InodeRecord f, long chunkId, long version, boolean nothingCommitted, List<Server> chosen) {
        StorageClass cls = f.storageClass();
        List<Promise<Ack>> calls = new ArrayList<>();
        for (int p = 0; p < chosen.size(); p++) {
            int part = p;
            calls.add(call(chosen.get(p), rid -> new CreateChunk(rid, chunkId, version, part, capacity(f.chunkSize(), cls), nothingCommitted, term)));
        }
        return settleAll(chunkId, version, chosen, calls);
    }

    /** The version an erasure-coded chunk written afresh under a new id is created at (as an archive rewrite's). */
    static final long REWRITE_VERSION = Archiver.NEW_VERSION;

    /** An erasure-coded chunk being written afresh: the file's chunk it replaces at the commit. */
    private record Replacement(long inode, MetaCommand.Rewritten chunk) {}

    /** New chunk id -> the chunk it is to replace; kept while its lease may see writes, taken by the commit. */
    private final Map<Long, Replacement> replacing = new java.util.HashMap<>();

    /**
     * A reported part of a chunk being rewritten ({@link #rewriteLease}) is recorded as it is, so that its commit finds
     * it held even if its server restarted meanwhile (the commit vouches only for chain servers of the same epoch, or
     * ones that reported it). Left unrecorded, the chunk swapped in was known on too few servers to be read until the
     * next inventories (sim seed 47 at 10 s: two of four parts' servers restarted before the commit; a read 36 s
     * later found one part). True if the report was such a part.
     */
    private boolean recordRewritePart(Server s, ChunkReport c) {
        if (!replacing.containsKey(c.chunkId())) return false;
        if (c.version() == REWRITE_VERSION && !c.bad()) registry.addLocation(c.chunkId(), s, c.part(), c.version(), c.length());
        return true;
    }

    /**
     * A lease to change an erasure-coded chunk that holds acknowledged data. Its parts are never written again in
     * place (a degraded read could mix old and new cells of a stripe, and a write that fails halfway would leave
     * neither version whole), so the writer uploads the whole chunk afresh under a new chunk id, and its commit
     * swaps the new chunk in ({@link MetaCommand.CommitRewrite}), refused if the old one changed meanwhile. Readers
     * read the old chunk until then; a rewrite never committed leaves parts that no file names, which the next
     * inventories delete once its lease is over.
     */
    private Promise<Lease> rewriteLease(InodeRecord f, ChunkRecord old, Set<String> exclude) {
        List<Server> chosen = chooseParts(f.storageClass(), exclude);
        return metaLog.submit(new MetaCommand.ReserveChunkIds(1)).flatMap(newId -> {
            // marked before any part exists: an inventory must not take a part for one of a removed file, nor the
            // planner's pass forget the rewrite while its lease is being set up
            replacing.put(newId, new Replacement(f.inode(), new MetaCommand.Rewritten(old.index(), old.chunkId(), old.version(), newId)));
            leaseUntil.put(newId, leaseClock() + Leases.MASTER_HOLD_NANOS);
            log.debug("inode {} chunk {}: rewriting chunk {} v{} as chunk {} on {}", f.inode(), old.index(), old.chunkId(), old.version(), newId,
                    chosen.stream().map(sv -> sv.id).toList());
            return createParts(f, newId, REWRITE_VERSION, true, chosen).onFailure(e -> {
                replacing.remove(newId);
                registry.forget(newId);
            });
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
                registry.addLocation(chunkId, servers.get(i), i, version);
                chain.add(servers.get(i).ref());
            }
            return Promise.completed(new Lease(chunkId, version, chain));
        });
    }

    /**
     * Bumps a chunk holding data to the next version: the version reserved first (durably, so no later lease
     * reuses it, whatever happens next), then the holders (each makes it durable before it answers), then the
     * record, once at least one holder has. Recording first would be wrong: if no holder
     * took the bump (all down, or the whole cluster lost power) every copy would be left one version behind
     * the record, stale, and acknowledged data unreadable. A holder ahead of the record (the master lost
     * power before recording) is adopted when it reports ({@link #adopt}). Each holder moves from its own
     * version: a copy left out of an earlier lease that wrote nothing is still current, a version behind.
     * Holders left out of this bump stay registered at their versions: current until a write under the new
     * version is committed ({@link #commit}), outdated after.
     */
    private Promise<Lease> bump(ChunkRecord c, List<Holder> holders) {
        return metaLog.submit(new MetaCommand.ReserveVersion(c.chunkId())).flatMap(to -> bumpTo(c, holders, to));
    }

    /**
     * The chunk's share of its file's committed length: what a bump cuts its copies to ({@link MasterProtocol.BumpVersion#cutTo}).
     * Read once the bump's version is reserved: every commit applied before counts, and one naming an older version
     * applied after is refused ({@link Namespace#handedOut}), so no committed byte lies past the cut.
     */
    private long committedExtent(ChunkRecord c) {
        InodeRecord f = namespace.inodeOrNull(c.inode());
        if (f == null || f.storageClass().isEc()) return MasterProtocol.BumpVersion.NO_CUT;
        return committedLength(c, f, 0);
    }

    private Promise<Lease> bumpTo(ChunkRecord c, List<Holder> holders, long to) {
        assert to > c.version() : "bump of chunk " + c.chunkId() + " to v" + to + " not above its record v" + c.version();
        long[] lengths = new long[holders.size()];
        for (int i = 0; i < holders.size(); i++) lengths[i] = registry.reportedLength(c.chunkId(), holders.get(i).server().id);
        for (Holder h : holders) registry.removeLocation(c.chunkId(), h.server().id);
        long cutTo = committedExtent(c);
        List<Promise<Ack>> calls = new ArrayList<>();
        for (Holder h : holders) calls.add(call(h.server(), rid -> new MasterProtocol.BumpVersion(rid, c.chunkId(), h.version(), to, cutTo, term)));
        return Promise.all(calls).then((acks, e) -> {
            List<Server> ok = new ArrayList<>();
            for (int i = 0; i < holders.size(); i++) {
                Promise<Ack> p = calls.get(i);
                if (!p.isFailed() && p.value().status() == Status.OK && holders.get(i).server().alive) ok.add(holders.get(i).server());
            }
            if (ok.isEmpty()) {
                // nothing changed anywhere we know of: the copies are still current at their versions. A holder may
                // have taken the bump with its reply lost, but the version is reserved (durably), so the next lease
                // goes above it and never hands out writes at a version a silent copy already has
                for (int i = 0; i < holders.size(); i++) {
                    Holder h = holders.get(i);
                    if (h.server().alive) registry.addLocation(c.chunkId(), h.server(), 0, h.version(), lengths[i]);
                }
                return Promise.<Lease>failed(new CairnException(Status.UNAVAILABLE, "no chunkserver took the bump of chunk " + c.chunkId() + " to v" + to));
            }
            return metaLog.submit(new MetaCommand.AdoptVersion(c.chunkId(), to)).flatMap(next -> {
                if (next.version() != to) {
                    throw new CairnException(Status.BUSY, "chunk " + c.chunkId() + " moved to v" + next.version() + " during the bump to v" + to);
                }
                // a holder that died while the bump was being recorded took it, and will come back at this version
                // without the writes that follow: as with a silent one, bump the others past it
                List<Server> live = new ArrayList<>();
                for (Server s : ok) if (s.alive) live.add(s);
                if (live.size() < holders.size()) {
                    // a silent holder may have bumped too: leave it behind, so the chain is exactly who holds the lease's version
                    if (live.isEmpty()) throw new CairnException(Status.UNAVAILABLE, "every holder of chunk " + c.chunkId() + " died during its bump to v" + to);
                    List<Holder> bumped = new ArrayList<>();
                    for (Server s : live) bumped.add(new Holder(s, 0, to));
                    return bump(next, bumped);
                }
                List<ServerRef> chain = new ArrayList<>();
                for (Server s : live) {
                    registry.addLocation(c.chunkId(), s, 0, to);
                    chain.add(s.ref());
                }
                return Promise.completed(new Lease(c.chunkId(), next.version(), chain));
            });
        });
    }

    /**
     * Fills a replicated chunk's chain up to its goal with fresh servers (an empty copy created at the lease's
     * version), when holders were left out or lost. Safe because a writer sends every byte of the chunk again
     * under each lease (the client buffers the whole chunk); the fresh copies end up as full as the others.
     * They are not recorded as holders here: until the writer has sent them the chunk they are empty, and a
     * writer that dies first leaves them so. Counting them would let the planner keep an empty copy and drop
     * a full one as extra. They join when the writer commits the lease's version (its upload is durable on
     * every copy of the chain by then), or when their server next reports them (inventory or registration)
     * holding at least the committed data; they are marked stale and removed if neither happens.
     */
    private Promise<Lease> topUp(Lease lease, StorageClass cls, Set<String> exclude, int capacity) {
        int need = cls.replicas() - lease.chain.size();
        if (need <= 0) return Promise.completed(lease);
        Set<String> skip = new TreeSet<>(exclude);
        for (ServerRef r : lease.chain) skip.add(r.id());
        // a server already holding a copy (one the bump did not reach, or a stale one) is not asked for another: a
        // new copy there would replace one that may hold acknowledged bytes
        for (Holder h : registry.holders(lease.chunkId)) skip.add(h.server().id);
        for (Server s : registry.staleHolders(lease.chunkId)) skip.add(s.id);
        LeaseChain earlier = leaseChains.get(lease.chunkId);
        if (earlier != null) for (Server s : earlier.servers()) skip.add(s.id); // an earlier lease's copies (top-ups not yet recorded)
        List<Server> fresh = choose(cls, skip, need);
        if (fresh.isEmpty()) return Promise.completed(lease);
        List<Promise<Ack>> calls = new ArrayList<>();
        if (lease.chain.isEmpty()) {
            for (Server s : fresh) calls.add(call(s, rid -> new CreateChunk(rid, lease.chunkId, lease.version, 0, capacity, false, term)));
        } else {
            // filled from a holder first (which took the bump: no write lands before this lease is answered), with a
            // write window of its own: a writer may write any part of the chunk, not all of it, so a fresh empty
            // copy would lack the rest
            ServerRef from = lease.chain.get(0);
            for (Server s : fresh) {
                calls.add(rpc.call(s.address, rid -> new MasterProtocol.ReplicateChunk(rid, lease.chunkId, lease.version, 0, 0, 0, 0, List.of(from),
                        List.of(0), capacity, true, -1, term), Ack.class, FILL_CALL_NANOS));
            }
        }
        return Promise.all(calls).then((acks, e) -> {
            List<ServerRef> chain = new ArrayList<>(lease.chain);
            for (int i = 0; i < fresh.size(); i++) {
                Promise<Ack> p = calls.get(i);
                Server s = fresh.get(i);
                if (p.isFailed() || p.value().status() != Status.OK || !s.alive) continue;
                chain.add(s.ref()); // recorded with the lease's chain: the commit vouches for it
            }
            return Promise.completed(new Lease(lease.chunkId, lease.version, chain));
        });
    }

    /**
     * A server reports a copy at a higher version than recorded, holding at least the committed data: a
     * bump reached it and this master lost power before recording it. Only this master bumps, so the
     * copy holds everything acknowledged; the record takes its version. No lease was handed out at that
     * version, so nothing was written at it: the other copies (at or above the data version) stay current.
     */
    private void adopt(Server s, ChunkReport c) {
        metaLog.submit(new MetaCommand.AdoptVersion(c.chunkId(), c.version())).onComplete((rec, e) -> {
            if (e != null || rec.version() != c.version() || !s.alive) return;
            registry.addLocation(c.chunkId(), s, c.part(), c.version(), c.length());
            log.info("chunk {}: {} holds v{}, ahead of the record: adopted", c.chunkId(), s.id, c.version());
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
            if (ok.size() < servers.size()) {
                List<Holder> created = new ArrayList<>();
                for (Server s : ok) created.add(new Holder(s, 0, at.version()));
                return bump(at, created);
            }
            List<ServerRef> chain = new ArrayList<>();
            for (Server s : ok) {
                registry.addLocation(at.chunkId(), s, 0, at.version());
                chain.add(s.ref());
            }
            return Promise.completed(new Lease(at.chunkId(), at.version(), chain));
        });
    }

    private Promise<Ack> call(Server s, LongFunction<Message> req) {
        return rpc.call(s.address, req, Ack.class, CHUNKSERVER_CALL_NANOS);
    }

    private static boolean distinctDomains(List<Server> servers, StorageClass.Domain level) {
        Set<String> domains = new HashSet<>();
        for (Server s : servers) if (!domains.add(s.domain(level))) return false;
        return true;
    }

    // ---------------------------------------------------------------- planner

    private void schedulePlanner() {
        env.scheduler().schedule(PLAN_INTERVAL_NANOS, () -> {
            if (!ready) return;
            try {
                planOnce();
            } catch (RuntimeException e) {
                log.warn("planner pass failed: {}", e.toString());
                dev.cairn.core.async.Unexpected.report(e);
            }
            schedulePlanner();
        });
    }

    /**
     * Revokes the leases of chunks below their goal (a copy's server died, or its disk failed, while the lease held),
     * so that the planner repairs them now rather than when the hold lapses, up to 30 s later: a host lost in that
     * time took the last copy of chunks written just before (sim seed 5064: a replicated(3) chunk leased at 23.7 s
     * lost two copies by 30.5 s and waited under the hold until the third went too at 47.4 s). Every live server that
     * may have a window open on the chunk closes it ({@link MasterProtocol.CloseWindow}) and answers once the writes it
     * took are applied; once all have, nothing more lands on a copy the planner may count or copy from, which is all
     * the hold is for. A server down or cut off is not asked and need not be: the planner neither counts its copy nor
     * copies from it, and if it comes back with its window still open, its report holds the chunk again
     * ({@link #holdIfWritable}). A writer still writing has its next write refused ({@code EXPIRED}) and asks for a
     * new lease, which tops the chain up to the goal. A hold by reported windows alone (a restarted master's, or a
     * server's that was down when the lease was revoked and came back with its window open) is revoked the same way:
     * the windows are closed wherever the chunk has a copy (sim seed 5034: a part waited 26 s under such a hold until
     * a host loss took the chunk).
     */
    private void revokeLeasesBelowGoal(boolean endangeredOnly) {
        if ((leaseUntil.isEmpty() && openWindows.isEmpty()) || revoking.size() >= MAX_REVOKING) return;
        Set<Long> leasingInodes = new HashSet<>();
        for (String slot : leasing) leasingInodes.add(Long.parseLong(slot.substring(0, slot.indexOf(':'))));
        Map<Long, InodeRecord> files = new java.util.HashMap<>();
        Set<Long> ignored = new HashSet<>();
        // in id order: the same calls in the same order on every run
        java.util.TreeSet<Long> held = new java.util.TreeSet<>(leaseUntil.keySet());
        held.addAll(openWindows.keySet());
        List<Long> due = new ArrayList<>();
        for (long id : held) {
            if (revoking.contains(id) || moving.containsKey(id) || replacing.containsKey(id)) continue;
            // a window no lease of this master explains, on a chunk this master has leased since: the lease's hold stands
            if (leaseUntil.containsKey(id) && openWindows.containsKey(id) && !ownLeaseWindows.contains(id)) continue;
            ChunkRecord rec = namespace.chunk(id);
            // only a chunk holding committed bytes: what a lease is still uploading (never committed) is the writer's to finish
            if (rec == null || !rec.committed() || leasingInodes.contains(rec.inode()) || metaLog.changing(rec.inode())) continue;
            Planner.ChunkState st = chunkState(rec, files, leasingInodes, ignored);
            // below its goal and still readable: a copy to make, and a copy to make it from
            if (st == null || Planner.missing(st) == 0 || Planner.redundancy(st) < 0) continue;
            if (endangeredOnly && Planner.redundancy(st) > 0) continue;
            due.add(id);
            if (revoking.size() + due.size() >= MAX_REVOKING) break;
        }
        for (long id : due) revoke(id);
    }

    /**
     * Closes every window a live server may have open on chunk {@code id}; then drops the hold, the lease's and the
     * reported windows', if neither changed meanwhile (a new lease, or a window reported again by a server not asked).
     */
    private void revoke(long id) {
        Long leaseHold = leaseUntil.get(id);
        Long windowHold = openWindows.get(id);
        Set<Server> ask = new java.util.LinkedHashSet<>();
        for (Holder h : registry.holders(id)) ask.add(h.server());
        ask.addAll(registry.staleHolders(id));
        LeaseChain chain = leaseChains.get(id);
        if (chain != null) ask.addAll(chain.servers());
        List<Promise<Ack>> calls = new ArrayList<>();
        for (Server s : ask) if (s.alive) calls.add(call(s, rid -> new MasterProtocol.CloseWindow(rid, id, term)));
        revoking.add(id);
        Promise.all(calls).onComplete((acks, e) -> {
            revoking.remove(id);
            boolean closed = e == null;
            for (Promise<Ack> p : calls) closed &= !p.isFailed() && p.value().status() == Status.OK;
            // a server that did not answer keeps the hold, as does a lease granted or a window reported meanwhile (a new hold)
            if (!closed || !java.util.Objects.equals(leaseUntil.get(id), leaseHold) || !java.util.Objects.equals(openWindows.get(id), windowHold)) return;
            if (leaseHold == null && windowHold == null) return; // lapsed meanwhile: nothing left to drop
            leaseUntil.remove(id);
            leaseChains.remove(id); // as when the hold lapses: a commit after this vouches for the copies recorded at its version
            openWindows.remove(id);
            ownLeaseWindows.remove(id);
            changed.add(id);
            log.info("chunk {}: {} revoked ({} windows closed): it is below its goal, repaired now", id,
                    leaseHold != null ? "lease" : "reported write window", calls.size());
            kickPlanner();
        });
    }

    /**
     * The start-up grace's repairs: once {@link #GRACE_REPAIR_AFTER_NANOS} have passed with known servers still silent,
     * copies of the chunks whose reported copies are one loss from too few to read (their holds revoked first, as
     * after the grace). Nothing is deleted, balanced or archived: a silent server may yet come back with copies, and
     * then the planner tidies whatever this made extra. The namespace is walked for such chunks at that period; in
     * between, each pass looks at the ones found. Waiting out the whole grace instead lost chunks a restarted master
     * knew to be endangered (sim seed 5126: a master restarted at 35.7 s waited for a server lost before, and a host
     * loss at 43.5 s then a disk death at 49.8 s took 63 chunks it could have copied).
     */
    private void repairEndangeredInGrace(long now, int reported) {
        if (now - startNanos < GRACE_REPAIR_AFTER_NANOS) return;
        Set<Long> leasingInodes = new HashSet<>();
        for (String slot : leasing) leasingInodes.add(Long.parseLong(slot.substring(0, slot.indexOf(':'))));
        Map<Long, InodeRecord> files = new java.util.HashMap<>();
        Set<Long> ignored = new HashSet<>();
        java.util.function.Predicate<ChunkRecord> endangered = c -> {
            Planner.ChunkState st = chunkState(c, files, leasingInodes, ignored);
            return st != null && Planner.missing(st) > 0 && Planner.redundancy(st) == 0;
        };
        if (lastGraceScanNanos == 0 || now - lastGraceScanNanos >= GRACE_REPAIR_AFTER_NANOS) {
            lastGraceScanNanos = now;
            graceEndangered.clear();
            namespace.forEachChunk(c -> {
                if (endangered.test(c)) graceEndangered.add(c.chunkId());
                return true;
            });
            if (!graceEndangered.isEmpty()) {
                log.info("start-up grace: {} of {} known chunkservers reported after {} s; {} chunks one loss from unreadable are repaired meanwhile",
                        reported, knownServers.size(), (now - startNanos) / 1_000_000_000L, graceEndangered.size());
            }
        }
        if (graceEndangered.isEmpty()) return;
        revokeLeasesBelowGoal(true);
        Set<Long> skip = untouchable(now);
        List<Planner.ChunkState> states = new ArrayList<>();
        for (var it = graceEndangered.iterator(); it.hasNext(); ) {
            ChunkRecord c = namespace.chunk(it.next());
            if (c == null || !endangered.test(c)) {
                it.remove(); // repaired, removed, or now past saving
                continue;
            }
            Planner.ChunkState st = chunkState(c, files, leasingInodes, skip);
            if (!skip.contains(c.chunkId())) states.add(st);
        }
        for (Planner.Action a : Planner.plan(registry.live(), states, busy, skip, Planner.Limits.DEFAULT, false).actions()) {
            assert a instanceof Planner.Copy : "a deletion planned in the start-up grace: " + a;
            if (a instanceof Planner.Copy cp) startCopy(cp);
        }
    }

    /** Chunks no planner action may touch now: one under way, a hold (a lease's or reported windows'), a retry not yet due. */
    private Set<Long> untouchable(long now) {
        Set<Long> skip = new HashSet<>(moving.keySet());
        skip.addAll(leaseUntil.keySet());
        skip.addAll(openWindows.keySet());
        retryAt.values().removeIf(at -> at - now <= 0);
        skip.addAll(retryAt.keySet());
        return skip;
    }

    /** A planner action finished: if repair work is waiting for action slots, plan again soon. */
    private void kickPlanner() {
        // in the start-up grace, only while it has endangered chunks to copy (repairEndangeredInGrace); its counts are not made yet
        if (kickPending || (grace ? graceEndangered.isEmpty() : counts.underGoal() == 0 && counts.overGoal() == 0 && counts.stale() == 0)) return;
        kickPending = true;
        env.scheduler().schedule(PLAN_KICK_NANOS, () -> {
            kickPending = false;
            if (!ready) return;
            try {
                plan();
            } catch (RuntimeException e) {
                log.warn("planner pass failed: {}", e.toString());
                dev.cairn.core.async.Unexpected.report(e);
            }
        });
    }

    /** One periodic pass: the planner, then the archiver. */
    void planOnce() {
        if (plan()) archiver.pass(skipped);
    }

    /**
     * Asks the {@link Planner} about the chunks that changed (every chunk, each {@link #FULL_PASS_NANOS}) and
     * starts what it says; false during the grace window.
     */
    private boolean plan() {
        // judged on what is known now: a master that was stopped (or starved) for longer than the heartbeat timeout
        // wakes with every timer due at once, and a pass run before the liveness check would count the copies of
        // servers silent all that while (sim seed 5031: a master paused for 22 s deleted a drained server's copy on
        // the strength of a copy whose disk had died meanwhile; the registration saying so was still queued)
        expireSilentServers();
        long now = env.clock().nanoTime();
        long leaseNow = leaseClock();
        leaseUntil.values().removeIf(until -> until - leaseNow <= 0);
        leaseChains.keySet().removeIf(id -> !leaseUntil.containsKey(id)); // no commit came while writes could land
        for (var it = replacing.keySet().iterator(); it.hasNext(); ) {
            long id = it.next();
            if (leaseUntil.containsKey(id)) continue;
            it.remove(); // a rewrite never committed: its parts belong to no file, and go at the next inventories
            registry.forget(id);
        }
        openWindows.values().removeIf(until -> until - leaseNow <= 0);
        ownLeaseWindows.retainAll(openWindows.keySet());
        judgeDeferred(); // recording copies needs no grace: registrations do it all along
        if (grace) {
            int reported = 0;
            for (String id : knownServers) if (registry.server(id) != null && registry.server(id).alive) reported++;
            if (reported < knownServers.size() && now - startNanos < GRACE_MAX_NANOS) {
                repairEndangeredInGrace(now, reported);
                return false;
            }
            grace = false;
            log.info("start-up grace over: {} of {} known chunkservers reported; planner running", reported, knownServers.size());
        }
        revokeLeasesBelowGoal(false);
        Set<Long> skip = untouchable(now);
        for (var it = refusals.values().iterator(); it.hasNext(); ) {
            java.util.Map<String, Long> by = it.next();
            int before = by.size();
            by.values().removeIf(until -> until - now <= 0);
            refusalCount -= before - by.size();
            if (by.isEmpty()) it.remove();
        }
        Set<Long> leasingInodes = new HashSet<>();
        for (String slot : leasing) leasingInodes.add(Long.parseLong(slot.substring(0, slot.indexOf(':'))));
        boolean full = fullPassDue || now - lastFullPassNanos >= FULL_PASS_NANOS;
        Map<Long, InodeRecord> files = new java.util.HashMap<>();
        List<Planner.ChunkState> states = new ArrayList<>();
        // a full pass after an earlier one: chunks not marked changed since must all turn out settled
        Set<Long> unmarked = new HashSet<>();
        boolean check = full && !fullPassDue;
        if (full) {
            fullPassDue = false;
            lastFullPassNanos = now;
            long[] total = {0};
            namespace.forEachChunk(c -> {
                total[0]++;
                if (check && !changed.contains(c.chunkId())) unmarked.add(c.chunkId());
                Planner.ChunkState st = chunkState(c, files, leasingInodes, skip);
                if (st != null) states.add(st);
                return true;
            });
            chunkTotal = total[0];
            archiver.consider(files.values());
        } else {
            for (Long id : new ArrayList<>(changed)) {
                // held by an open write lease: nothing can be done to it, and it is being written (under goal by
                // design); it is looked at once the hold ends, and counted by the full passes meanwhile
                if (leaseUntil.containsKey(id)) continue;
                ChunkRecord c = namespace.chunk(id);
                Planner.ChunkState st = c == null ? null : chunkState(c, files, leasingInodes, skip);
                if (st != null) states.add(st);
                else changed.remove(id); // gone, or allocated and never written: nothing to plan
            }
        }
        Planner.Limits limits = env.planted(Plant.TIDY_BELOW_GOAL) ? Planner.Limits.DEFAULT.withTidyBelowGoal() : Planner.Limits.DEFAULT;
        Planner.Plan plan = Planner.plan(registry.live(), states, busy, skip, limits, true,
                server -> balanceCandidates(server, leasingInodes, skip));
        Planner.Counts c = plan.counts();
        counts = new Planner.Counts(chunkTotal, c.underGoal(), c.overGoal(), c.endangered(), c.lost(), c.stale());
        long used = 0;
        int alive = 0;
        for (Server s : registry.live()) {
            used += s.usedBytes;
            alive++;
        }
        history.offer(env.clock().nanoTime(), new ClusterHistory.Sample(env.clock().wallMillis(), used, chunkTotal, c.underGoal(), c.endangered(),
                c.lost(), moving.size(), copiesMade, alive));
        List<Long> missed = new ArrayList<>();
        for (Planner.ChunkState st : states) {
            if (skip.contains(st.chunkId())) {
                changed.add(st.chunkId()); // looked at again once the lease or action is over
            } else if (Planner.settled(st)) {
                changed.remove(st.chunkId());
            } else {
                if (unmarked.contains(st.chunkId())) missed.add(st.chunkId());
                changed.add(st.chunkId());
            }
        }
        if (overflowFlipped) {
            // chunks of a class planned with or without its label from now on: marked by nothing, so all looked at
            overflowFlipped = false;
            fullPassDue = true;
            missed.clear();
        }
        if (!missed.isEmpty()) log.warn("planner: full pass found {} chunks needing work that no change marked: {}", missed.size(), missed);
        assert missed.isEmpty() : "chunks needing the planner were never marked changed: " + missed;
        for (Planner.Action a : plan.actions()) {
            if (a instanceof Planner.Copy cp) startCopy(cp);
            else if (a instanceof Planner.Drop d) startDrop(d);
        }
        dropOutdatedUnderLease(files, leasingInodes);
        skip.addAll(moving.keySet()); // the actions just started too: the archiver must not rewrite a chunk being copied
        skipped = skip;
        return true;
    }

    /**
     * Drops the outdated copies of chunks a write lease holds, which the planner otherwise leaves until the hold ends
     * (30 s past the lease's grant, commits or not): a copy whose version is older than the chunk's committed data
     * missed acknowledged writes and can never be current again, no reader is sent to it, and the lease's writes
     * (at a newer version) are refused by it. Only once the chunk has its whole goal of current copies, as tidying
     * asks; a copy reported at the current version but short or corrupt waits for the hold to end like every other
     * action, since the lease's own chain may be writing it (its judgement can change). The delete names the
     * outdated version, so a copy the lease has since bumped stays. Chaos {@code mixed} seed 7: stale copies of
     * chunks written just before a partition healed stayed ~45 s, most of the run's time to converge.
     */
    private void dropOutdatedUnderLease(Map<Long, InodeRecord> files, Set<Long> leasingInodes) {
        List<Planner.Drop> drops = new ArrayList<>();
        Map<String, Integer> load = new java.util.HashMap<>(busy);
        Set<Long> planned = new HashSet<>();
        for (Server s : registry.live()) {
            for (Map.Entry<Long, Long> e : s.staleChunks.entrySet()) {
                long id = e.getKey();
                // not leased: planned as usual; held by a window no lease of this master's explains: nothing is done to
                // the chunk (the planted WALL_CLOCK_LEASES shows only so in the sweep: a stale copy left behind it)
                if (!leaseUntil.containsKey(id) && !ownLeaseWindows.contains(id)) continue;
                if (moving.containsKey(id) || retryAt.containsKey(id) || replacing.containsKey(id) || planned.contains(id)) continue;
                if (load.getOrDefault(s.id, 0) >= Planner.Limits.DEFAULT.perServer()) continue;
                ChunkRecord rec = namespace.chunk(id);
                if (rec == null || e.getValue() >= rec.dataVersion()) continue;
                if (leasingInodes.contains(rec.inode()) || metaLog.changing(rec.inode())) continue;
                Planner.ChunkState st = chunkState(rec, files, leasingInodes, new HashSet<>());
                if (st == null || Planner.missing(st) > 0) continue;
                planned.add(id); // one drop per chunk and pass, as the planner's tidying would
                load.merge(s.id, 1, Integer::sum);
                drops.add(new Planner.Drop(id, e.getValue(), s, Planner.Reason.STALE));
            }
        }
        for (Planner.Drop d : drops) startDrop(d); // after the walk: a drop forgets the stale copy it names
    }

    /**
     * Forgets the copies {@code serverId} refused: it restarted, and what made it refuse (a disk written off that
     * is back now, a part since deleted) may be gone (sim seed 12419: a refusal outliving its reason left a chunk
     * with no target, and the planner made room by dropping a duplicate part whose twin was silently corrupt).
     */
    private void forgetRefusals(String serverId) {
        for (var it = refusals.values().iterator(); it.hasNext(); ) {
            java.util.Map<String, Long> by = it.next();
            if (by.remove(serverId) != null) refusalCount--;
            if (by.isEmpty()) it.remove();
        }
    }

    /** What the planner is told of one chunk; null for a chunk never committed that no server holds (nothing to plan). */
    private Planner.ChunkState chunkState(ChunkRecord c, Map<Long, InodeRecord> files, Set<Long> leasingInodes, Set<Long> skip) {
        InodeRecord f = files.computeIfAbsent(c.inode(), namespace::inode);
        if (leasingInodes.contains(c.inode()) || metaLog.changing(c.inode())) skip.add(c.chunkId());
        List<Holder> holders = registry.holders(c.chunkId());
        // no copy, and no commit ever vouched for one (allocated, perhaps leased again, never committed): nothing
        // anyone was told is durable is missing, so nothing is lost and nothing can be planned (power-loss chaos
        // seed 4: a put cut off by a power loss left such a chunk counted "lost" for good)
        if (!c.committed() && holders.isEmpty()) return null;
        List<Server> staleHolders = registry.staleHolders(c.chunkId());
        if (env.planted(Plant.DELETE_UNCHECKED) && !f.storageClass().isEc() && !staleHolders.isEmpty()) {
            // the planted bug: every copy counts as current (at the chunk's version, unchecked), so tidying may
            // keep a stale one and drop a current one
            holders = new ArrayList<>(holders);
            for (Server s : staleHolders) holders.add(new Holder(s, 0, c.version()));
            staleHolders = List.of();
        }
        java.util.Map<String, Long> refused = refusals.get(c.chunkId());
        return new Planner.ChunkState(c.chunkId(), c.version(), asPlanned(f.storageClass()), holders, staleHolders,
                refused == null ? Set.of() : Set.copyOf(refused.keySet()));
    }

    /**
     * The class as the planner is to keep it now: a class that overflows (its label's servers cannot hold all
     * copies, e.g. some were lost for good) is planned without its label, so copies on other servers count
     * toward the goal and a missing one is made on any server, instead of the chunk waiting under goal for
     * labelled room that may never come; once labelled servers can hold the copies again, the label is back
     * and the copies move home.
     */
    private StorageClass asPlanned(StorageClass cls) {
        if (!cls.overflow() || cls.disk().isEmpty()) return cls;
        Set<String> domains = new HashSet<>();
        for (Server s : registry.live()) {
            if (cls.disk().equals(s.topology.disk()) && s.acceptsChunks(Planner.Limits.DEFAULT.fullFraction())) domains.add(s.domain(cls.domain()));
        }
        boolean labelled = domains.size() >= cls.parts();
        Boolean before = overflowing.put(cls.placement().toString(), !labelled);
        // a class's chunks are planned differently from now on, and no change to them marked it: look at every chunk
        if (before != null && before == labelled) overflowFlipped = true;
        return labelled ? cls : cls.withDisk("");
    }

    /** Overflowing classes (by their placement) as last planned: true if planned without their label. */
    private final java.util.Map<String, Boolean> overflowing = new java.util.TreeMap<>();
    /** An overflowing class changed how it is planned during this pass. */
    private boolean overflowFlipped;

    /** Balance candidates on {@code server}, made as the planner asks for them: chunks it holds, nothing under way. */
    private Iterable<Planner.ChunkState> balanceCandidates(Server server, Set<Long> leasingInodes, Set<Long> skip) {
        List<Long> ids = new ArrayList<>(server.chunks);
        Map<Long, InodeRecord> files = new java.util.HashMap<>();
        return () -> new java.util.Iterator<>() {
            int i;
            Planner.ChunkState next;

            @Override public boolean hasNext() {
                while (next == null && i < ids.size()) {
                    long id = ids.get(i++);
                    ChunkRecord c = skip.contains(id) ? null : namespace.chunk(id);
                    if (c != null && !leasingInodes.contains(c.inode())) next = chunkState(c, files, leasingInodes, skip);
                }
                return next != null;
            }

            @Override public Planner.ChunkState next() {
                if (!hasNext()) throw new java.util.NoSuchElementException();
                Planner.ChunkState out = next;
                next = null;
                return out;
            }
        };
    }

    private void startCopy(Planner.Copy c) {
        StorageClass cls = c.cls();
        List<ServerRef> sources = new ArrayList<>();
        List<Integer> parts = new ArrayList<>();
        for (Holder h : c.sources()) {
            sources.add(h.server().ref());
            parts.add(h.part());
        }
        Server target = c.target();
        long incarnation = target.incarnation;
        List<String> involved = new ArrayList<>();
        involved.add(target.id);
        for (Holder h : c.sources()) involved.add(h.server().id);
        moving.merge(c.chunkId(), 1, Integer::sum);
        for (String id : involved) busy.merge(id, 1, Integer::sum);
        log.debug("planner: copy chunk {} v{} part {} to {} from {} ({}{})", c.chunkId(), c.version(), c.part(), target.id, parts, c.reason(),
                c.replacesPart() >= 0 ? ", over its second copy of part " + c.replacesPart()
                        : c.replacesPart() == MasterProtocol.ReplicateChunk.REPLACES_STALE ? ", over its stale copy" : "");
        ChunkRecord record = namespace.chunk(c.chunkId());
        InodeRecord file = record == null ? null : namespace.inodeOrNull(record.inode());
        // what the copy must hold: a chunk no commit named holds nothing a reader is served (its parts may be empty)
        long dataLength = file == null || !record.committed() ? 0 : dataLength(record, file);
        int capacity = file == null ? dev.cairn.core.chunk.ChunkFormat.MAX_BLOCKS : capacity(file.chunkSize(), cls);
        rpc.call(target.address, rid -> new MasterProtocol.ReplicateChunk(rid, c.chunkId(), c.version(), c.part(), cls.k(), cls.m(), dataLength,
                sources, parts, capacity, false, c.replacesPart(), term),
                Ack.class, COPY_CALL_NANOS).onComplete((ack, e) -> {
                    moving.computeIfPresent(c.chunkId(), (k, v) -> v > 1 ? v - 1 : null);
                    for (String id : involved) busy.computeIfPresent(id, (k, v) -> v > 1 ? v - 1 : null);
                    kickPlanner();
                    if (e != null || ack.status() != Status.OK) {
                        log.info("planner: copy of chunk {} to {} failed: {}", c.chunkId(), target.id, e != null ? e.getMessage() : ack.detail());
                        // not again at once: a copy that fails for a reason that lasts would otherwise be
                        // retried a round trip apart, forever
                        retryAt.put(c.chunkId(), env.clock().nanoTime() + COPY_RETRY_NANOS);
                        if (e == null && ack.status() == Status.EXISTS && refusalCount < MAX_REFUSALS
                                && refusals.computeIfAbsent(c.chunkId(), k -> new java.util.HashMap<>())
                                        .put(target.id, env.clock().nanoTime() + REFUSAL_NANOS) == null) refusalCount++;
                        return;
                    }
                    // the target's copy is the one just made (over any it held): a report of its old copy as corrupt no
                    // longer applies, and remembered it would condemn the new one at the server's next registration
                    badCopies.forget(target.id, c.chunkId());
                    ChunkRecord rec = namespace.chunk(c.chunkId());
                    if (!target.alive || target.incarnation != incarnation) return; // its registration reports the copy
                    if (rec == null) { // the file went away meanwhile
                        // (not while the command that took it is still being made durable: the next inventory deletes it then)
                        if (!metaLog.freeing(c.chunkId())) {
                            rpc.call(target.address, rid -> new DeleteChunk(rid, c.chunkId(), DeleteChunk.ANY_VERSION, term), Ack.class, CHUNKSERVER_CALL_NANOS);
                        }
                    } else if (rec.current(c.version(), cls.isEc())) {
                        registry.addLocation(c.chunkId(), target, c.part(), c.version());
                        copiesMade++;
                    } else {
                        registry.addStale(c.chunkId(), target, c.version()); // a lease moved the chunk on meanwhile
                    }
                });
    }

    private void startDrop(Planner.Drop d) {
        Server s = d.server();
        if (d.reason() == Planner.Reason.STALE) registry.removeStale(d.chunkId(), s);
        else registry.removeLocation(d.chunkId(), s.id); // no longer handed out, before it goes
        // nor vouched for by a commit of the chunk's lease: the copy the writer synced there is going
        leaseChains.computeIfPresent(d.chunkId(), (k, chain) -> chain.without(s));
        // one count per action: two drops of one chunk at once (two extra copies) keep it busy until both answer
        moving.merge(d.chunkId(), 1, Integer::sum);
        deletesSent.computeIfAbsent(d.chunkId(), k -> new HashSet<>()).add(s.id);
        busy.merge(s.id, 1, Integer::sum);
        log.debug("planner: delete chunk {} v{} on {} ({})", d.chunkId(), d.version(), s.id, d.reason());
        rpc.call(s.address, rid -> new DeleteChunk(rid, d.chunkId(), d.version(), term), Ack.class, CHUNKSERVER_CALL_NANOS).onComplete((ack, e) -> {
            moving.computeIfPresent(d.chunkId(), (k, v) -> v > 1 ? v - 1 : null);
            Set<String> to = deletesSent.get(d.chunkId());
            if (to != null && to.remove(s.id) && to.isEmpty()) deletesSent.remove(d.chunkId());
            busy.computeIfPresent(s.id, (k, v) -> v > 1 ? v - 1 : null);
            kickPlanner();
            if (e == null && ack.status() == Status.OK) {
                copiesDeleted++;
                badCopies.forget(s.id, d.chunkId());
            }
            // on failure the copy is still there: the server reports it when it registers again, and it is judged then
        });
    }

    // ---------------------------------------------------------------- admin

    private MasterProtocol.StatusReply status(MasterProtocol.ClusterStatus r) {
        List<MasterProtocol.ServerStatus> servers = new ArrayList<>();
        for (Server s : registry.all()) {
            servers.add(new MasterProtocol.ServerStatus(s.id, s.address == null ? config.listen() : s.address, s.topology, s.alive, s.draining,
                    s.usedBytes, s.capacityBytes, s.chunks.size(), s.staleChunks.size(), diskView(s)));
        }
        Planner.Counts c = counts;
        return new MasterProtocol.StatusReply(r.rid(), Status.OK, "", grace, c.chunks(), c.underGoal(), c.overGoal(), c.endangered(), c.lost(),
                c.stale(), moving.size(), copiesMade, copiesDeleted, servers, badCopies.size());
    }

    private final ClusterHistory history = new ClusterHistory();

    /** The last minutes of the cluster's health and space (the dashboard's plots); on the loop. */
    public ClusterHistory history() { return history; }

    /** What {@code cairn status} answers, now (the dashboard's tables); on the loop. */
    public MasterProtocol.StatusReply statusNow() { return status(new MasterProtocol.ClusterStatus(0)); }

    /** The cluster as this master sees it, for {@code --metrics}: what {@code cairn status} shows, per server and disk. */
    @Override public void metrics(dev.cairn.core.metrics.MetricsText m) {
        Planner.Counts c = counts;
        List<dev.cairn.core.metrics.MetricsText.Series> latency = new ArrayList<>();
        requestLatency.forEach((kind, h) -> latency.add(new dev.cairn.core.metrics.MetricsText.Series(h, "kind", kind)));
        m.histogram("cairn_master_request_seconds", "Time from a request's arrival to its reply (a change's durability in the metadata log included), by kind", latency);
        m.gauge("cairn_master_grace", "1 while the master waits after its start for the servers it knew (nothing repaired or deleted meanwhile)", grace ? 1 : 0);
        m.gauge("cairn_master_leader_term", "The leader term this master serves (0: a single master)", term);
        m.gauge("cairn_chunks", "Chunks in the namespace", c.chunks());
        m.gauge("cairn_chunks_under_goal", "Chunks with fewer good copies (or parts) than their class requires", c.underGoal());
        m.gauge("cairn_chunks_over_goal", "Chunks with more copies than their class requires", c.overGoal());
        m.gauge("cairn_chunks_endangered", "Chunks one failure away from loss", c.endangered());
        m.gauge("cairn_chunks_lost", "Chunks with no readable copy (or fewer than k parts)", c.lost());
        m.gauge("cairn_copies_stale", "Copies at an older version than their chunk's, awaiting deletion", c.stale());
        m.gauge("cairn_copies_moving", "Copies being made by the planner right now", moving.size());
        m.gauge("cairn_copies_marked_bad", "Copies reported corrupt and not yet replaced", badCopies.size());
        m.counter("cairn_planner_copies_made_total", "Copies the planner made (repair, drain, balance)", copiesMade);
        m.counter("cairn_planner_copies_deleted_total", "Copies the planner deleted (extra, stale, drained)", copiesDeleted);
        int alive = 0, down = 0, draining = 0;
        for (Server s : registry.all()) {
            if (s.alive) alive++; else down++;
            if (s.draining) draining++;
        }
        m.gauge("cairn_chunkservers", "Chunkservers known, by state", alive, "state", "alive");
        m.gauge("cairn_chunkservers", "Chunkservers known, by state", down, "state", "down");
        m.gauge("cairn_chunkservers_draining", "Chunkservers marked for removal", draining);
        for (Server s : registry.all()) m.gauge("cairn_chunkserver_up", "1 while the chunkserver is registered and heard from", s.alive ? 1 : 0, "server", s.id);
        for (Server s : registry.all()) m.gauge("cairn_chunkserver_used_bytes", "Bytes the chunkserver's chunks use", s.usedBytes, "server", s.id);
        for (Server s : registry.all()) m.gauge("cairn_chunkserver_capacity_bytes", "Space the chunkserver offers", s.capacityBytes, "server", s.id);
        for (Server s : registry.all()) m.gauge("cairn_chunkserver_chunks", "Current copies the chunkserver holds", s.chunks.size(), "server", s.id);
        for (Server s : registry.all()) m.gauge("cairn_chunkserver_stale_copies", "Stale copies the chunkserver holds", s.staleChunks.size(), "server", s.id);
        for (Server s : registry.all()) {
            for (Types.DiskReport d : diskView(s)) {
                for (Types.DiskState st : Types.DiskState.values()) {
                    m.gauge("cairn_disk_state", "1 for the disk's state as the master judges it", d.state() == st ? 1 : 0,
                            "server", s.id, "disk", d.name(), "state", st.name().toLowerCase(java.util.Locale.ROOT));
                }
            }
        }
        for (Server s : registry.all()) {
            for (Types.DiskReport d : s.disks) m.gauge("cairn_disk_latency_seconds", "The disk's recent operation latency, as reported", d.latencyMicros() / 1e6, "server", s.id, "disk", d.name());
        }
        for (Server s : registry.all()) {
            for (Types.DiskReport d : s.disks) m.gauge("cairn_disk_used_bytes", "Bytes of the chunks on the disk", d.usedBytes(), "server", s.id, "disk", d.name());
        }
        for (Server s : registry.all()) {
            for (Types.DiskReport d : s.disks) m.gauge("cairn_disk_quarantined", "Chunk files kept aside on the disk (unreadable headers)", d.quarantined(), "server", s.id, "disk", d.name());
        }
    }

    /** A server's disks as the master sees them: its reports, with the master's own slow verdicts. */
    private static List<Types.DiskReport> diskView(Server s) {
        List<Types.DiskReport> out = new ArrayList<>();
        for (Types.DiskReport d : s.disks) {
            boolean slow = s.slowDisks.contains(d.name());
            Types.DiskState st = d.state() == Types.DiskState.FAILED || d.state() == Types.DiskState.FULL ? d.state()
                    : slow ? Types.DiskState.SLOW : Types.DiskState.OK;
            out.add(new Types.DiskReport(d.name(), st, d.latencyMicros(), d.chunks(), d.usedBytes(), d.quarantined()));
        }
        return out;
    }

    private MasterProtocol.FileInfoReply fileInfo(MasterProtocol.FileInfo r) {
        InodeRecord f = namespace.resolve(r.path());
        List<MasterProtocol.ChunkInfo> out = new ArrayList<>();
        if (f.type() == FileType.FILE) {
            for (ChunkRecord c : namespace.chunks(f.inode(), 0, 4096)) {
                List<MasterProtocol.CopyInfo> copies = new ArrayList<>();
                for (Holder h : registry.holders(c.chunkId())) copies.add(new MasterProtocol.CopyInfo(h.server().id, h.part(), h.version(), true));
                for (Server s : registry.staleHolders(c.chunkId())) {
                    copies.add(new MasterProtocol.CopyInfo(s.id, 0, s.staleChunks.getOrDefault(c.chunkId(), 0L), false));
                }
                out.add(new MasterProtocol.ChunkInfo(c.index(), c.chunkId(), c.version(), copies));
            }
        }
        return new MasterProtocol.FileInfoReply(r.rid(), Status.OK, "", f.attr(), out);
    }

    /** Marks a server for removal (or back in service), durably: the mark outlives a master restart. */
    private Promise<Ack> drain(MasterProtocol.Drain r) {
        Server s = registry.server(r.serverId());
        // a drain mark can be taken back from a server that is gone (retired, or not registered since a restart)
        if (s == null && !(!r.drain() && drainingServers.contains(r.serverId()))) {
            throw new CairnException(Status.NOT_FOUND, "no chunkserver " + r.serverId() + " has registered");
        }
        String id = r.serverId();
        return metaLog.submit(new MetaCommand.SetDraining(id, r.drain())).map(was -> {
            if (r.drain()) drainingServers.add(id);
            else drainingServers.remove(id);
            if (s == null) return Ack.ok(r.rid());
            s.draining = r.drain();
            registry.touch(s); // its copies count as leaving now, or no longer
            log.info("chunkserver {} {}", s.id, r.drain() ? "draining: its chunks move elsewhere" : "back in service");
            return Ack.ok(r.rid());
        });
    }
}
