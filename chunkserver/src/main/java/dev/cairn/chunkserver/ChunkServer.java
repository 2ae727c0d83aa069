package dev.cairn.chunkserver;

import dev.cairn.core.async.Promise;
import dev.cairn.core.ec.CodecCache;
import dev.cairn.core.ec.ErasureCodec;
import dev.cairn.core.ec.Stripes;
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
import dev.cairn.core.proto.MasterProtocol.ReplicateChunk;
import dev.cairn.core.proto.Message;
import dev.cairn.core.proto.Status;
import dev.cairn.core.proto.Types;
import dev.cairn.core.proto.Types.ServerRef;
import dev.cairn.core.rpc.LeaderProbe;
import dev.cairn.core.rpc.Rpc;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.function.Function;
import java.util.function.LongFunction;
import java.util.function.Supplier;

/**
 * A chunkserver: stores chunk copies, takes part in replica chains (a write or sync is done here and
 * forwarded to the next server; the answer goes back only when both are done), serves verified reads,
 * and keeps the master informed (registration with every copy it holds, heartbeats).
 */
public final class ChunkServer implements Node, MessageHandler, dev.cairn.core.metrics.MetricsSource {
    static final long HEARTBEAT_NANOS = 1_000_000_000L;
    /** Every this many heartbeats, the full chunk list goes to the master for reconciliation (garbage collection). */
    static final int INVENTORY_EVERY_BEATS = 20;
    static final long MASTER_CALL_NANOS = 5_000_000_000L;
    static final long REGISTER_RETRY_NANOS = 1_000_000_000L;
    /**
     * Unanswered heartbeats after which a server of a master group registers again, trying the next master: the
     * first (a killed leader's connection is refused at once; a new leader has no registry until servers come).
     */
    static final int SILENT_BEATS_BEFORE_SWITCH = 1;

    /** A group's master that answered NOT_LEADER is followed by the next one this soon (an election takes about a second). */
    static final long NEXT_MASTER_NANOS = 200_000_000L;
    /** Time the next server in a chain gets to write or sync and answer (a slow disk is not a dead one). */
    static final long CHAIN_CALL_NANOS = 30_000_000_000L;
    /** Bytes per read when copying a chunk from a peer (one message). */
    static final int COPY_PIECE = 1 << 20;
    /** Time a peer gets to answer one read of a copy. */
    static final long COPY_READ_NANOS = 30_000_000_000L;
    /** How often the scrubber wakes; each wake verifies up to the configured bytes. */
    static final long SCRUB_TICK_NANOS = 1_000_000_000L;

    private final Env env;
    private final ChunkServerConfig config;
    private final Log log;
    private final Rpc rpc;
    private final LeaderProbe probe;
    private final ChunkStore store;
    private final long incarnation;
    private final Scrubber scrubber;
    private final Converter converter;
    private final CodecCache codecs = new CodecCache();
    private boolean registered;
    private long beats;
    /** Counts registrations, so a heartbeat loop of an earlier one stops when a new one starts. */
    private long registration;
    /**
     * True while a registration's report is on its way and unanswered: deletes are refused meanwhile (see
     * {@link #refusedWhileRegistering}).
     */
    private boolean reportInFlight;
    /** Which of {@code config.masters()} this server talks to: the group's leader, as far as it knows. */
    private int masterIndex;
    /** Heartbeats in a row that got no answer (with a master group: after {@link #SILENT_BEATS_BEFORE_SWITCH}, find the leader again). */
    private int silentBeats;
    /** The newest leader term heard from a master (0 for a single master); see {@link #newest}. Kept on disk. */
    private long masterTerm;
    private final TermFile termFile;
    private boolean stopped;

    public ChunkServer(Env env, ChunkServerConfig config) {
        this.env = env;
        this.config = config;
        this.log = env.log(ChunkServer.class);
        this.rpc = new Rpc(env);
        this.probe = new LeaderProbe(rpc, env.scheduler(), log);
        List<Volume> volumes = new ArrayList<>();
        for (String v : config.volumes()) volumes.add(env.volume(v));
        this.store = new ChunkStore(volumes, env.clock(), log, this::diskFailed);
        this.termFile = new TermFile(store.disks(), log);
        store.hooks(env);
        this.incarnation = env.random().nextLong();
        this.scrubber = new Scrubber(env, store, config.scrubBytesPerSecond(), config.scrubIntervalNanos(), this::reportBad, this::leaseClock, this::removeAbandoned);
        this.converter = new Converter(store, rpc, codecs);
    }

    @Override public void start() {
        store.recover().flatMap(n -> termFile.load().map(term -> {
            masterTerm = term;
            return n;
        })).onComplete((n, e) -> {
            if (stopped) return;
            if (e != null) {
                log.warn("recovery failed: {}", e.toString());
                return;
            }
            log.info("chunkserver {} recovered {} chunks{}; listening on {}", config.serverId(), n,
                    masterTerm > 0 ? ", newest master term " + masterTerm : "", config.listen());
            env.transport().start(config.listen(), this);
            register();
            scrubber.start();
        });
    }

    @Override public void stop() {
        stopped = true;
        scrubber.stop();
        rpc.failAll("chunkserver stopping");
    }

    public boolean isRegistered() { return registered; }

    public int chunkCount() { return store.count(); }

    // ---------------------------------------------------------------- master

    /**
     * The capacity advertised to the master (what its used fraction, balancing and "full" judge by): the configured
     * figure if one was given, else what the disks hold plus their filesystems' free space, measured at each
     * report; {@link ChunkServerConfig#FALLBACK_CAPACITY_BYTES} if the disks cannot say.
     */
    long capacityBytes() {
        if (config.capacityBytes() > 0) return config.capacityBytes();
        long measured = store.measuredCapacityBytes();
        if (measured >= 0) return measured;
        if (!capacityUnknownLogged) {
            capacityUnknownLogged = true;
            log.warn("the disks' free space cannot be read: advertising {} GiB (set --capacity-gb)", ChunkServerConfig.FALLBACK_CAPACITY_BYTES >> 30);
        }
        return ChunkServerConfig.FALLBACK_CAPACITY_BYTES;
    }

    private boolean capacityUnknownLogged;

    private void register() {
        if (stopped) return;
        registered = false;
        long attempt = ++registration;
        reportInFlight = true;
        Promise<RegisterReply> call = rpc.call(master(), rid -> new Register(rid, config.serverId(), incarnation, config.listen(), config.topology(),
                capacityBytes(), store.usedBytes(), report()), RegisterReply.class, MASTER_CALL_NANOS);
        watchIfGroup(call, attempt);
        call.onComplete((r, e) -> {
                    if (stopped || attempt != registration) return;
                    reportInFlight = false;
                    if (e != null || r.status() != Status.OK || !newest(r.term())) {
                        log.debug("registration with {} failed ({}); retrying", master(), e != null ? e.getMessage() : r.status() + " in term " + r.term());
                        nextMaster(); // that one is down or does not lead: try the group's next
                        // a group's next master is asked soon, whether this one refused or is down (a killed leader: an
                        // election takes a second or two, and every 200 ms here is up to 200 ms of writes waiting);
                        // a single master that does not answer is given a second
                        boolean refused = e == null && r.status() == Status.NOT_LEADER;
                        boolean group = config.masters().size() > 1;
                        env.scheduler().schedule(refused || group ? NEXT_MASTER_NANOS : REGISTER_RETRY_NANOS, () -> {
                            if (attempt == registration) register();
                        });
                        return;
                    }
                    for (long id : r.deleteChunks()) store.delete(id, DeleteChunk.ANY_VERSION);
                    registered = true;
                    env.scheduler().schedule(HEARTBEAT_NANOS, () -> heartbeat(attempt));
                });
    }

    private Address master() { return config.masters().get(masterIndex); }

    /**
     * The copies this server holds, for a registration or an inventory: not one a planner copy is still making
     * with no durable header under it (sim seed 13596: a copy of an empty erasure-coded part, reported mid-copy at
     * a re-registration, looked whole at 0 bytes; the master counted it, deleted its source's part as extra, and
     * the copy then failed). The master hears of the copy when it completes.
     */
    private List<dev.cairn.core.proto.Types.ChunkReport> report() {
        List<dev.cairn.core.proto.Types.ChunkReport> all = store.report(leaseClock());
        if (copying.isEmpty()) return all;
        List<dev.cairn.core.proto.Types.ChunkReport> out = new ArrayList<>(all.size());
        for (var c : all) if (!copying.contains(c.chunkId()) || store.holdsDurableHeader(c.chunkId())) out.add(c);
        return out;
    }

    /**
     * True if {@code term} is at least the newest master term this server has heard of (which it then becomes):
     * commands and registration answers of an older term come from a deposed leader and are refused. Kept on disk
     * ({@link TermFile}), so a restarted server does not take a deposed leader it meets first for the current one.
     */
    private boolean newest(long term) {
        if (term < masterTerm) return false;
        if (term > masterTerm) {
            if (masterTerm > 0) log.info("a master of term {} leads now (was {})", term, masterTerm);
            masterTerm = term;
            termFile.save(term);
        }
        return true;
    }

    private void nextMaster() { masterIndex = (masterIndex + 1) % config.masters().size(); }

    private void heartbeat(long attempt) {
        if (stopped || !registered || attempt != registration) return;
        for (Disk d : store.disks()) d.recheckFull(); // space freed by others than this server counts too
        Promise<HeartbeatReply> beat = rpc.call(master(), rid -> new Heartbeat(rid, config.serverId(), incarnation, capacityBytes(),
                store.usedBytes(), store.count(), store.diskReports()), HeartbeatReply.class, MASTER_CALL_NANOS);
        watchIfGroup(beat, attempt);
        beat.onComplete((r, e) -> {
                    if (stopped || attempt != registration) return;
                    if (e == null && r.known() && !newest(r.term())) {
                        log.info("master {} leads no more (term {} < {}); looking for the leader", master(), r.term(), masterTerm);
                        nextMaster();
                        register();
                        return;
                    }
                    silentBeats = e == null ? 0 : silentBeats + 1;
                    if (config.masters().size() > 1 && silentBeats >= SILENT_BEATS_BEFORE_SWITCH) {
                        log.info("master {} does not answer; looking for the group's leader", master());
                        silentBeats = 0;
                        nextMaster();
                        register();
                        return;
                    }
                    if (e == null && !r.known()) {
                        log.info("master does not know this incarnation; registering again");
                        register();
                        return;
                    }
                    if (e == null) {
                        for (Disk d : store.disks()) {
                            boolean slow = r.slowDisks().contains(d.name());
                            if (slow != d.slow()) log.warn("the master judges disk {} {}", d.name(), slow ? "slow: no new chunks go to it" : "no longer slow");
                            d.setSlow(slow);
                        }
                    }
                    if (e == null && ++beats % INVENTORY_EVERY_BEATS == 0) inventory(attempt);
                    env.scheduler().schedule(HEARTBEAT_NANOS, () -> heartbeat(attempt));
                });
    }

    /**
     * With a master group, a registration or heartbeat its master leaves unanswered is watched: a leader that answers
     * nothing (stopped, its host hung) is left for the one the group elected meanwhile, without waiting out the call (the
     * new leader places chunks only on servers registered with it; chaos leader-stall seed 2: a registration sent just
     * before its leader stopped held all five servers 11.7 s). Moving a registration is safe because a report on its way
     * is kept true ({@link #refusedWhileRegistering}).
     */
    private void watchIfGroup(Promise<?> call, long attempt) {
        Address asked = master();
        probe.watch(call, asked, config::masters, () -> attempt == registration && !stopped && master().equals(asked), found -> {
            // the new leader's term is taken before registering with it: a command the old one sent meanwhile (a delete
            // planned before it stopped, delivered late) is refused from now on, not carried out behind the registration,
            // whose report would then name a copy gone (group sim seed 2107: the new leader, believing it, dropped
            // another copy as extra and left one)
            if (!newest(found.term())) return;
            masterIndex = config.masters().indexOf(found.address());
            register();
        });
    }

    /**
     * A delete that lands while a registration's report is on its way would make the report name a copy that is gone,
     * and the master it goes to, believing it, may drop another copy as extra. The master does not report copies it is
     * deleting itself, but with a master group the delete may come from a deposed leader the new one knows nothing of
     * (group sim seed 2107: a delete the stopped leader planned landed behind a registration with the new one, which
     * then left the chunk one copy). Refused, the copy stays and is reported; whoever sent the delete judges again
     * (the planner's next pass, or the next inventory's answer for a removed file's chunk).
     */
    private boolean refusedWhileRegistering(Message m) {
        return reportInFlight && m instanceof DeleteChunk;
    }

    /** Sends the full chunk list; deletes what the master names (chunks of removed files). */
    private void inventory(long attempt) {
        rpc.call(master(), rid -> new dev.cairn.core.proto.MasterProtocol.ChunkInventory(rid, config.serverId(), incarnation, report()),
                        RegisterReply.class, MASTER_CALL_NANOS)
                .onComplete((r, e) -> {
                    if (stopped || attempt != registration || e != null || r.status() != Status.OK || !newest(r.term())) return;
                    for (long id : r.deleteChunks()) store.delete(id, DeleteChunk.ANY_VERSION);
                });
    }

    /**
     * A disk failed and its chunks were dropped: register again, so the master learns at once which
     * copies this server still has (the registration carries all of them) and repairs the rest.
     */
    private void diskFailed(Disk d) {
        if (stopped) return;
        env.scheduler().schedule(0, this::register);
    }

    // ---------------------------------------------------------------- requests

    /** Requests taken, by message type, and the data bytes they carried (for {@code --metrics}). */
    private final java.util.Map<Class<?>, long[]> requests = new java.util.HashMap<>();

    /** Its disks, chunks and the requests it took, for {@code --metrics}. */
    @Override public void metrics(dev.cairn.core.metrics.MetricsText m) {
        m.gauge("cairn_chunkserver_registered", "1 while this chunkserver is registered with the leader", registered ? 1 : 0);
        m.gauge("cairn_chunkserver_master_term", "The newest master term this chunkserver has seen (it refuses older ones)", masterTerm);
        m.gauge("cairn_chunkserver_chunks", "Chunk copies held here", store.count());
        List<Types.DiskReport> disks = store.diskReports();
        for (Types.DiskReport d : disks) {
            for (Types.DiskState st : Types.DiskState.values()) {
                m.gauge("cairn_disk_state", "1 for the disk's state as this server sees it", d.state() == st ? 1 : 0, "disk", d.name(),
                        "state", st.name().toLowerCase(java.util.Locale.ROOT));
            }
        }
        for (Types.DiskReport d : disks) m.gauge("cairn_disk_latency_seconds", "The disk's recent operation latency", d.latencyMicros() / 1e6, "disk", d.name());
        for (Disk d : store.disks()) m.counter("cairn_disk_read_errors_total", "Read errors that failed the copy read (3 within 10 minutes fail the disk)", d.readErrors(), "disk", d.name());
        for (Types.DiskReport d : disks) m.gauge("cairn_disk_chunks", "Chunk copies on the disk", d.chunks(), "disk", d.name());
        for (Types.DiskReport d : disks) m.gauge("cairn_disk_used_bytes", "Bytes of the chunks on the disk", d.usedBytes(), "disk", d.name());
        for (Types.DiskReport d : disks) m.gauge("cairn_disk_quarantined", "Chunk files kept aside (unreadable headers)", d.quarantined(), "disk", d.name());
        List<dev.cairn.core.metrics.MetricsText.Series> diskLatency = new java.util.ArrayList<>();
        for (Disk d : store.disks()) {
            for (Disk.Op op : Disk.Op.values()) {
                diskLatency.add(new dev.cairn.core.metrics.MetricsText.Series(d.latency(op), "disk", d.name(), "op", op.name().toLowerCase(java.util.Locale.ROOT)));
            }
        }
        m.histogram("cairn_disk_operation_seconds", "Time from a disk call's start to its end (queueing on the disk's threads included), by kind", diskLatency);
        java.util.TreeMap<String, long[]> byKind = new java.util.TreeMap<>();
        requests.forEach((k, v) -> byKind.put(k.getSimpleName(), v));
        byKind.forEach((k, v) -> m.counter("cairn_chunkserver_requests_total", "Requests taken, by message type", v[0], "kind", k));
        long written = 0;
        for (long[] v : requests.values()) written += v[1];
        m.counter("cairn_chunkserver_written_bytes_total", "Data bytes taken in writes (a chain's forward counted at each hop)", written);
    }

    @Override public void onMessage(Address from, Message m) {
        if (rpc.onMessage(from, m)) return;
        if (stopped) return;
        long[] taken = requests.computeIfAbsent(m.getClass(), k -> new long[2]);
        taken[0]++;
        if (m instanceof WriteData w) taken[1] += w.data().length;
        if (m instanceof WriteData w) {
            chain(from, w.rid(), w.forward(), () -> reportingCorrupt(w.chunkId(), w.version(), store.write(w.chunkId(), w.version(), w.offset(), w.data(), leaseClock())),
                    next -> rid -> new WriteData(rid, w.chunkId(), w.version(), w.offset(), w.data(), next), true);
        } else if (m instanceof SyncChunk s) {
            chain(from, s.rid(), s.forward(), () -> reportingCorrupt(s.chunkId(), s.version(), store.sync(s.chunkId(), s.version(), s.written(), s.pieces())),
                    next -> rid -> new SyncChunk(rid, s.chunkId(), s.version(), s.written(), s.pieces(), next), !env.planted(dev.cairn.core.env.Plant.CHAIN_SYNC_EARLY));
        } else if (m instanceof ReadData r) {
            read(from, r);
        } else if (m instanceof dev.cairn.core.proto.MasterProtocol.Fenced f && !newest(f.term())) {
            env.transport().send(from, new Ack(m.rid(), Status.NOT_LEADER, "refused " + m.getClass().getSimpleName() + " of master term " + f.term()
                    + ": a newer leader (term " + masterTerm + ") has spoken to this server"));
        } else if (refusedWhileRegistering(m)) {
            env.transport().send(from, new Ack(m.rid(), Status.BUSY, "a registration is under way: its report must stay true until it is answered"));
        } else if (m instanceof CreateChunk c) {
            long until = leaseClock() + dev.cairn.core.proto.Leases.WINDOW_NANOS;
            ack(from, c.rid(), guard(() -> store.create(c.chunkId(), c.version(), c.part(), c.capacity(), c.nothingCommitted(), until)));
        } else if (m instanceof BumpVersion b) {
            long until = leaseClock() + dev.cairn.core.proto.Leases.WINDOW_NANOS;
            ack(from, b.rid(), guard(() -> store.bump(b.chunkId(), b.fromVersion(), b.toVersion(), until, b.cutTo())));
        } else if (m instanceof DeleteChunk d) {
            ack(from, d.rid(), guard(() -> store.delete(d.chunkId(), d.version())));
        } else if (m instanceof dev.cairn.core.proto.MasterProtocol.CloseWindow w) {
            ack(from, w.rid(), guard(() -> store.closeWindow(w.chunkId(), leaseClock())));
        } else if (m instanceof dev.cairn.core.proto.MasterProtocol.VerifyChunk v) {
            ack(from, v.rid(), reportingCorrupt(v.chunkId(), v.version(), guard(() -> store.verifyAll(v.chunkId(), v.version()))));
        } else if (m instanceof ReplicateChunk r) {
            ack(from, r.rid(), replicate(r));
        } else if (m instanceof dev.cairn.core.proto.MasterProtocol.ConvertChunk r) {
            ack(from, r.rid(), guard(() -> converter.convert(r)));
        } else {
            env.transport().send(from, new Ack(m.rid(), Status.BAD_REQUEST, "chunkserver does not serve " + m.getClass().getSimpleName()));
        }
    }

    @Override public void onDisconnect(Address peer) { rpc.onDisconnect(peer); }

    /** A copy created and never synced, left so between two of the scrubber's searches: it goes (see {@link ChunkStore#abandoned}). */
    private void removeAbandoned(long id, long version) {
        log.info("chunk {} v{} was never synced and nothing has written it since the last search: removing it", id, version);
        store.delete(id, version);
    }

    /** The clock lease windows are timed on: this host's monotonic clock (a planted bug uses the wall clock). */
    private long leaseClock() {
        return env.planted(dev.cairn.core.env.Plant.WALL_CLOCK_LEASES) ? env.clock().wallMillis() * 1_000_000L : env.clock().nanoTime();
    }

    /**
     * Runs the local half of a chain step and, at the same time, forwards the request to the next server;
     * answers OK only when both are done. A failure names the server that failed so the client can leave
     * it out of the next lease.
     */
    private void chain(Address from, long rid, List<ServerRef> forward, Supplier<Promise<Void>> localOp,
                       Function<List<ServerRef>, LongFunction<Message>> nextRequest, boolean waitDownstream) {
        String bad = badChain(forward);
        if (bad != null) {
            // refused before anything is done: a peer naming this server again (or the same server twice, or a
            // chain longer than any class) would make one request travel round and round
            env.transport().send(from, new ChainReply(rid, Status.BAD_REQUEST, "", bad));
            return;
        }
        Promise<Void> local = guard(localOp);
        Promise<ChainReply> downstream = new Promise<>();
        if (forward.isEmpty()) {
            downstream.complete(new ChainReply(rid, Status.OK, "", ""));
        } else {
            ServerRef next = forward.get(0);
            rpc.call(next.address(), nextRequest.apply(forward.subList(1, forward.size())), ChainReply.class, CHAIN_CALL_NANOS)
                    .onComplete((r, e) -> downstream.complete(e == null ? r
                            : new ChainReply(rid, CairnException.statusOf(e), next.id(), CairnException.detailOf(e))));
            env.hazard(dev.cairn.core.env.Hazard.CHAIN_FORWARDED);
            // the planted bug CHAIN_SYNC_EARLY: the answer goes once this server is done, whatever the rest says
            if (!waitDownstream) downstream.complete(new ChainReply(rid, Status.OK, "", ""));
        }
        local.onComplete((v, e) -> downstream.onSuccess(down -> {
            ChainReply reply;
            if (e != null) {
                Status st = CairnException.statusOf(e);
                // a closed write window is not this server's fault: the client should not leave it out
                reply = new ChainReply(rid, st, st == Status.EXPIRED ? "" : config.serverId(), CairnException.detailOf(e));
            } else if (down.status() != Status.OK) {
                reply = new ChainReply(rid, down.status(), down.failedServer(), down.detail());
            } else {
                reply = new ChainReply(rid, Status.OK, "", "");
            }
            env.transport().send(from, reply);
        }));
    }

    /** Why a chain's rest is not one a client could send (null if it is): too long, naming a server twice, or this one. */
    private String badChain(List<ServerRef> forward) {
        if (forward.size() >= dev.cairn.core.proto.StorageClass.MAX_REPLICAS) {
            return "a chain of " + (forward.size() + 1) + " servers is longer than any class's " + dev.cairn.core.proto.StorageClass.MAX_REPLICAS;
        }
        java.util.Set<String> seen = new java.util.HashSet<>();
        seen.add(config.serverId());
        for (ServerRef r : forward) if (!seen.add(r.id())) return "the chain names " + r.id() + " twice";
        return null;
    }

    /** Turns a synchronous refusal (unknown chunk, bad range) into a failed promise. */
    private static <T> Promise<T> guard(Supplier<Promise<T>> op) {
        try {
            return op.get();
        } catch (RuntimeException e) {
            return Promise.failed(dev.cairn.core.async.Unexpected.report(e));
        }
    }

    private void read(Address from, ReadData r) {
        guard(() -> store.read(r.chunkId(), r.version(), r.part(), r.offset(), Math.min(r.length(), Codec.MAX_DATA_BYTES))).onComplete((data, e) -> {
            if (e == null) {
                env.transport().send(from, new DataReply(r.rid(), Status.OK, "", data));
                return;
            }
            Status s = CairnException.statusOf(e);
            if (s == Status.CORRUPT) reportBad(r.chunkId(), r.version(), e.getMessage());
            env.transport().send(from, new DataReply(r.rid(), s, CairnException.detailOf(e), new byte[0]));
        });
    }

    /**
     * {@code op} on a copy, the master told if it finds the copy corrupt: a client write that merges old bytes
     * checks them, and a bit flip found there was only refused to the writer, so the master went on counting the
     * copy intact and never repaired the chunk (sim seed 13366: 2 good copies of 3 after 200 s of quiet).
     */
    private Promise<Void> reportingCorrupt(long chunkId, long version, Promise<Void> op) {
        return op.onFailure(e -> {
            if (CairnException.statusOf(e) == Status.CORRUPT) reportBad(chunkId, version, e.getMessage());
        });
    }

    /** A copy failed its checksum: never served again, and the master is told so it repairs the chunk elsewhere. */
    private void reportBad(long chunkId, long version, String why) {
        log.warn("{}", why);
        store.markBad(chunkId, version);
        rpc.call(master(), rid -> new ReportBad(rid, config.serverId(), chunkId, version, why), Ack.class, MASTER_CALL_NANOS);
    }

    // ---------------------------------------------------------------- copies for the planner

    /**
     * Makes the copy the master asked for: piece by piece from one source holding the same thing, or, for
     * a lost erasure-coded part, rebuilt from k other parts read at the same offsets (the code works byte
     * by byte across parts, so any aligned range of the parts decodes on its own). Synced before the OK; a
     * failure removes the partial copy. A copy here that holds durable data (a stale one) stays until the new
     * one is durable and takes its place ({@link ChunkStore#createCopy}).
     */
    private Promise<Void> replicate(ReplicateChunk r) {
        boolean rebuild = r.k() > 0 && !(r.sources().size() == 1 && r.sourceParts().get(0) == r.part());
        if (r.sources().isEmpty() || r.sources().size() != r.sourceParts().size() || (rebuild && r.sources().size() != r.k())
                || r.dataLength() < 0 || r.dataLength() > dev.cairn.core.chunk.ChunkFormat.MAX_CHUNK_SIZE
                || r.replacesPart() < ReplicateChunk.REPLACES_STALE || r.replacesPart() >= Math.max(1, r.k() + r.m()) || r.replacesPart() == r.part()) {
            return Promise.failed(new CairnException(Status.BAD_REQUEST, "replicate chunk " + r.chunkId() + ": sources do not fit the class"));
        }
        // one copy of a chunk made at a time here: a second request (the planner asking again after a lost answer)
        // would replace the first's copy under it, and whichever failed would then delete the other's, synced or
        // not (sim seed 5499 at 30 s: a parity part deleted right after it was rebuilt)
        if (!copying.add(r.chunkId())) {
            return Promise.failed(new CairnException(Status.BUSY, "a copy of chunk " + r.chunkId() + " is already being made here"));
        }
        return copy(r, rebuild).onComplete((v, e) -> copying.remove(r.chunkId()));
    }

    /** Chunks a planner copy is being made of here. */
    private final java.util.Set<Long> copying = new java.util.HashSet<>();

    private Promise<Void> copy(ReplicateChunk r, boolean rebuild) {
        // A copy synced here at this version (a lease's top-up copy the master hears of only at the next
        // report) is filled in place rather than replaced: the same version has the same bytes, and a copy that
        // fails must not have destroyed it first (simulator seed 27 at 60 s lost data that way). Its durable
        // header stays as it was until the new sync.
        boolean synced = store.holdsDurable(r.chunkId(), r.version(), r.part());
        if (r.writable() && !synced && store.holdsAnyDurable(r.chunkId())) {
            // a lease's top-up is a new copy: never made over one here that may hold acknowledged bytes (a holder
            // the master lost track of, one a bump reached silently); the lease goes on without this server
            return Promise.failed(new CairnException(Status.BUSY, "chunk " + r.chunkId() + " already has a copy here"));
        }
        Promise<Void> started = synced ? Promise.completed(null) : guard(() -> store.createCopy(r.chunkId(), r.version(), r.part(), r.capacity(), r.replacesPart()));
        // a copy refused before anything was made (no room, another part here) leaves nothing to abandon: abandoning
        // it would delete the copy that was here before, at the same version (sim seed 13898: a durable part 1
        // deleted because a copy of part 0 over it found its disk full)
        boolean[] made = {false};
        started.onSuccess(v -> made[0] = true);
        Promise<Void> done = started
                .flatMap(v -> copyPieces(r, rebuild, 0))
                .flatMap(copied -> store.syncCopy(r.chunkId(), r.version(), copied))
                .map(v -> {
                    // a lease's top-up copy, filled: it takes the writer's writes from now on, as the chain's others do
                    if (r.writable()) store.openWindow(r.chunkId(), r.version(), leaseClock() + dev.cairn.core.proto.Leases.WINDOW_NANOS);
                    return null;
                });
        return done.then((v, e) -> {
            if (e == null) return Promise.completed(null);
            log.info("copy of chunk {} v{} part {} failed: {}", r.chunkId(), r.version(), r.part(), e.getMessage());
            // (a copy beside the old one whose header write failed is this attempt's, and goes: the old one stays)
            if (synced || (!made[0] && !store.buildingBeside(r.chunkId()))) return Promise.<Void>failed(e);
            return store.abandonCopy(r.chunkId(), r.version()).then((x, y) -> Promise.<Void>failed(e));
        });
    }

    /** Copies from {@code offset} to the end of the source; returns how far the copy got. */
    private Promise<Long> copyPieces(ReplicateChunk r, boolean rebuild, long offset) {
        if (stopped) return Promise.failed(new CairnException(Status.UNAVAILABLE, "chunkserver stopping"));
        Promise<byte[]> piece = rebuild ? rebuildPiece(r, offset) : readPiece(r.sources().get(0), r.chunkId(), r.version(), r.k() > 0 ? r.sourceParts().get(0) : ReadData.ANY_PART, offset);
        return piece.flatMap(data -> {
            if (data.length == 0) return Promise.completed(offset);
            long end = offset + data.length;
            return store.writeCopy(r.chunkId(), r.version(), offset, data)
                    .flatMap(v -> data.length < COPY_PIECE ? Promise.completed(end) : copyPieces(r, rebuild, end));
        });
    }

    private Promise<byte[]> readPiece(ServerRef source, long chunkId, long version, int part, long offset) {
        return rpc.call(source.address(), rid -> new ReadData(rid, chunkId, version, offset, COPY_PIECE, part), DataReply.class, COPY_READ_NANOS)
                .map(d -> {
                    if (d.status() != Status.OK) throw new CairnException(d.status(), "reading from " + source.id() + ": " + d.detail());
                    return d.data();
                });
    }

    /**
     * Rebuilds the piece of part {@code r.part()} at {@code offset}. Each source must hold at least what the
     * chunk's committed bytes put in its part (a source holding less missed writes and fails the rebuild); one
     * holding more (the chunk was coded over more bytes than are committed now: a truncate since, or a write
     * never committed) holds bytes of the same coded image at this version, so all it holds is used, and past
     * that a cell is zeros, as it was coded. The rebuilt piece runs as far as the longest source's: a part
     * trimmed to the committed bytes would no longer agree with the parity, which still codes the rest, and a
     * later rebuild from it would decode garbage into committed bytes (sim seed 3245 at 30 s: part 1 rebuilt
     * trimmed after a truncate, then part 0 rebuilt from it and the parity).
     */
    private Promise<byte[]> rebuildPiece(ReplicateChunk r, long offset) {
        int total = r.k() + r.m();
        List<Promise<byte[]>> reads = new ArrayList<>();
        for (int i = 0; i < r.sources().size(); i++) reads.add(readPiece(r.sources().get(i), r.chunkId(), r.version(), r.sourceParts().get(i), offset));
        return Promise.all(reads).map(pieces -> {
            // the first data part, and every parity part, is the longest: as committed, or as coded if longer;
            // the chunk was coded over at least as many bytes as the committed ones and every source's length says
            int span = pieceOf(r, 0, offset);
            long coded = r.dataLength();
            for (int i = 0; i < pieces.size(); i++) {
                span = Math.max(span, pieces.get(i).length);
                if (pieces.get(i).length > 0) coded = Math.max(coded, Stripes.minChunkBytes(offset + pieces.get(i).length, r.k(), r.sourceParts().get(i)));
            }
            if (span == 0) return new byte[0];
            ErasureCodec codec = codecs.get(r.k(), r.m());
            ByteBuffer[] parts = new ByteBuffer[total];
            boolean[] present = new boolean[total];
            for (int i = 0; i < total; i++) parts[i] = ByteBuffer.allocateDirect(span);
            for (int i = 0; i < pieces.size(); i++) {
                int p = r.sourceParts().get(i);
                if (p < 0 || p >= total || present[p]) throw new CairnException(Status.BAD_REQUEST, "bad source part " + p);
                int holds = pieceOf(r, p, offset);
                if (pieces.get(i).length < holds) {
                    throw new CairnException(Status.IO, "part " + p + " from " + r.sources().get(i).id() + " has " + pieces.get(i).length
                            + " of the " + holds + " committed bytes at offset " + offset);
                }
                parts[p].put(0, pieces.get(i), 0, Math.min(span, pieces.get(i).length));
                present[p] = true;
            }
            codec.decode(parts, present);
            byte[] decoded = new byte[span];
            parts[r.part()].get(0, decoded);
            // the part as long as that coding made it; longer if the lost part itself held the last bytes (its
            // decoded bytes past that are not the coder's zeros): trailing zeros left off agree with the parity
            int want = (int) Math.max(0, Math.min(span, Stripes.partLength(coded, r.k(), r.part()) - offset));
            for (int i = span - 1; i >= want; i--) {
                if (decoded[i] != 0) { want = span; break; }
            }
            return want == span ? decoded : Arrays.copyOf(decoded, want);
        });
    }

    /** Bytes of part {@code part} in the copy piece at {@code offset}. */
    private static int pieceOf(ReplicateChunk r, int part, long offset) {
        return (int) Math.max(0, Math.min(COPY_PIECE, Stripes.partLength(r.dataLength(), r.k(), part) - offset));
    }

    private void ack(Address from, long rid, Promise<Void> op) {
        op.onComplete((v, e) -> env.transport().send(from, e == null ? Ack.ok(rid)
                : new Ack(rid, CairnException.statusOf(e), CairnException.detailOf(e))));
    }
}
