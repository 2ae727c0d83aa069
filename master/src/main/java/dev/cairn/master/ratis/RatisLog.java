package dev.cairn.master.ratis;

import dev.cairn.core.async.Promise;
import dev.cairn.core.env.Address;
import dev.cairn.core.env.Scheduler;
import dev.cairn.core.proto.CairnException;
import dev.cairn.core.proto.Status;
import dev.cairn.master.meta.ReplicatedLog;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.ratis.RaftConfigKeys;
import org.apache.ratis.conf.RaftProperties;
import org.apache.ratis.netty.NettyConfigKeys;
import org.apache.ratis.proto.RaftProtos.LogEntryProto;
import org.apache.ratis.protocol.ClientId;
import org.apache.ratis.protocol.Message;
import org.apache.ratis.protocol.RaftClientReply;
import org.apache.ratis.protocol.RaftClientRequest;
import org.apache.ratis.protocol.RaftGroup;
import org.apache.ratis.protocol.RaftGroupId;
import org.apache.ratis.protocol.RaftGroupMemberId;
import org.apache.ratis.protocol.RaftPeer;
import org.apache.ratis.protocol.RaftPeerId;
import org.apache.ratis.protocol.SetConfigurationRequest;
import org.apache.ratis.protocol.exceptions.GroupMismatchException;
import org.apache.ratis.protocol.exceptions.LeaderNotReadyException;
import org.apache.ratis.protocol.exceptions.NotLeaderException;
import org.apache.ratis.rpc.SupportedRpcType;
import org.apache.ratis.server.DivisionInfo;
import org.apache.ratis.server.RaftConfiguration;
import org.apache.ratis.server.RaftServer;
import org.apache.ratis.server.RaftServerConfigKeys;
import org.apache.ratis.server.protocol.TermIndex;
import org.apache.ratis.server.storage.RaftStorage;
import org.apache.ratis.server.raftlog.RaftLog;
import org.apache.ratis.server.storage.FileInfo;
import org.apache.ratis.statemachine.SnapshotInfo;
import org.apache.ratis.statemachine.SnapshotRetentionPolicy;
import org.apache.ratis.statemachine.StateMachineStorage;
import org.apache.ratis.statemachine.impl.FileListSnapshotInfo;
import org.apache.ratis.util.LifeCycle;
import org.apache.ratis.util.SizeInBytes;
import org.apache.ratis.statemachine.TransactionContext;
import org.apache.ratis.statemachine.impl.BaseStateMachine;
import org.apache.ratis.thirdparty.com.google.protobuf.ByteString;
import org.apache.ratis.util.TimeDuration;

/**
 * The master group's log on Apache Ratis (netty transport). Ratis runs on its own threads; everything it
 * tells the replica (committed entries, role changes, proposal outcomes) is posted to the replica's
 * scheduler in the order Ratis produced it, so the replica stays a single-threaded state machine.
 *
 * <p>The replica's RocksDB store is the state machine's state and records the last applied entry itself.
 * Every {@link Tuning#snapshotEvery} entries Ratis asks for a snapshot: the replica makes its store durable
 * and hands a point-in-time view of it, written to a {@link SnapshotFile} under the group's state-machine
 * directory while the replica goes on applying. The log is then purged behind the snapshot, as far as every
 * follower is known to have committed (a follower down for a while still finds its entries), and a follower
 * that lacks purged entries (a replaced disk, or down past a purge) is sent the snapshot file by Ratis and
 * installs it over its store. After a restart Ratis replays from the latest snapshot; entries the store
 * already holds are skipped here, so the replica sees each index once.
 */
public final class RatisLog implements ReplicatedLog {
    private static final org.slf4j.Logger LOG = org.slf4j.LoggerFactory.getLogger(RatisLog.class);
    /** Added to a master's client port to give its Raft port, unless the peer list says otherwise. */
    public static final int RAFT_PORT_OFFSET = 1000;
    /**
     * Election timeout range. Ratis's default (150–300 ms) is too tight for a loaded 2-core machine that pauses
     * for GC and fsync; 1–2 s made failovers take 2.4–5 s. At 0.5–1 s three CPU-bound masters held one leader
     * through ./cairn bench meta, and a new leader serves 1.2–2.3 s after a kill -9 (docs/benchmarks.md).
     */
    static final TimeDuration ELECTION_MIN = TimeDuration.valueOf(500, TimeUnit.MILLISECONDS);
    static final TimeDuration ELECTION_MAX = TimeDuration.valueOf(1000, TimeUnit.MILLISECONDS);
    /** How often the replica's role is compared with what it was last told (besides Ratis's own leader notices). */
    static final long ROLE_POLL_MILLIS = 100;
    /** One fixed group: a process serves one Cairn master group. */
    static final RaftGroupId GROUP = RaftGroupId.valueOf(UUID.nameUUIDFromBytes("cairn-masters".getBytes(StandardCharsets.UTF_8)));

    /** Closed log segments whose entries stay on the heap (for followers a little behind), and their bytes at most. */
    static final int SEGMENTS_CACHED = 2;
    static final long SEGMENT_CACHE_BYTES = 16L << 20;
    /** How long Ratis remembers a request's reply for a retry under the same call id (which Cairn never makes). */
    static final TimeDuration RETRY_CACHE_EXPIRY = TimeDuration.valueOf(5, TimeUnit.SECONDS);
    /** A leadership confirmation (a read) not answered in this long fails: the reader's call is then retried elsewhere. */
    static final TimeDuration READ_TIMEOUT = TimeDuration.valueOf(3, TimeUnit.SECONDS);
    /** How long a snapshot waits for the replica's store to become durable before the attempt is given up. */
    static final long SNAPSHOT_WAIT_SECONDS = 120;

    /**
     * Log housekeeping: a snapshot every {@code snapshotEvery} applied entries, log segments of
     * {@code segmentBytes} (only whole closed segments are purged).
     */
    public record Tuning(long snapshotEvery, long segmentBytes) {
        /**
         * About 10-40 MB of log between snapshots. Segments of 1 MiB: the open segment's entries all stay on the heap
         * (about 4× their size on disk: ~65,000 entries of an 8 MiB segment held 30 MB), and only closed ones are purged.
         */
        public static final Tuning DEFAULT = new Tuning(100_000, 1L << 20);
    }

    /** A master of the group: its id, its Raft address and the address clients and chunkservers use. */
    public record Peer(String id, Address raft, Address client) {
        /** The group of masters at these client addresses, each with its Raft port at {@link #RAFT_PORT_OFFSET}. */
        public static List<Peer> of(List<Address> clients) {
            List<Peer> out = new ArrayList<>();
            for (Address a : clients) {
                out.add(new Peer(a.host() + "_" + a.port(), new Address(a.host(), a.port() + RAFT_PORT_OFFSET), a));
            }
            return List.copyOf(out);
        }
    }

    /**
     * {@code n} client addresses on 127.0.0.1 whose ports and Raft ports ({@link #RAFT_PORT_OFFSET} above) are free
     * now, for a group started on this machine by a test or a chaos run.
     */
    public static List<Address> freeLoopbackGroup(int n) throws IOException {
        List<Address> out = new ArrayList<>();
        while (out.size() < n) out.add(new Address("127.0.0.1", dev.cairn.core.real.LoopbackPorts.take(RAFT_PORT_OFFSET)));
        return List.copyOf(out);
    }

    private final List<Peer> peers;
    private final Peer self;
    private final Path dir;
    private final Scheduler loop;
    private final Tuning tuning;
    private final ClientId clientId = ClientId.randomId();
    private final AtomicLong callId = new AtomicLong();
    private RaftServer server;
    private ScheduledExecutorService poller;
    /** Where calls into Ratis are made ({@link #submit}). */
    private java.util.concurrent.ExecutorService submitter;
    private volatile Listener listener;
    private volatile Role told = Role.UNKNOWN;
    /** The division was there once: its disappearance (not at stop) means this master was removed from the group. */
    private volatile boolean seen;
    /** The group's members as the latest configuration seen had them. */
    private volatile List<Address> lastMembers = List.of();
    /** Set when the replica stops: Ratis threads waiting for the replica's loop (which is the thread closing Ratis) give up. */
    private volatile boolean closing;
    /**
     * Applies handed to the loop and not done: failed at stop, since Ratis's closing waits for its updater thread,
     * which may be waiting for them, and the loop that would do them is the one closing Ratis.
     */
    private final java.util.Set<CompletableFuture<Message>> applying = java.util.concurrent.ConcurrentHashMap.newKeySet();

    /** @param loop the replica's scheduler, on which every call back runs */
    public RatisLog(List<Peer> peers, Address selfClient, Path dir, Scheduler loop) { this(peers, selfClient, dir, loop, Tuning.DEFAULT); }

    public RatisLog(List<Peer> peers, Address selfClient, Path dir, Scheduler loop, Tuning tuning) {
        this.tuning = tuning;
        this.peers = List.copyOf(peers);
        this.self = peers.stream().filter(p -> p.client().equals(selfClient)).findFirst()
                .orElseThrow(() -> new IllegalArgumentException("this master (" + selfClient + ") is not in the group " + clients(peers)));
        this.dir = dir;
        this.loop = loop;
    }

    private static List<Address> clients(List<Peer> peers) { return peers.stream().map(Peer::client).toList(); }

    @Override public void start(long appliedTerm, long appliedIndex, Listener l) {
        this.listener = l;
        RaftProperties p = new RaftProperties();
        RaftConfigKeys.Rpc.setType(p, SupportedRpcType.NETTY);
        NettyConfigKeys.Server.setHost(p, self.raft().host());
        NettyConfigKeys.Server.setPort(p, self.raft().port());
        RaftServerConfigKeys.setStorageDir(p, List.of(dir.toFile()));
        RaftServerConfigKeys.Rpc.setTimeoutMin(p, ELECTION_MIN);
        RaftServerConfigKeys.Rpc.setTimeoutMax(p, ELECTION_MAX);
        RaftServerConfigKeys.Snapshot.setAutoTriggerEnabled(p, true);
        RaftServerConfigKeys.Snapshot.setAutoTriggerThreshold(p, tuning.snapshotEvery());
        // a snapshot needs the replica's loop, which is the thread that stops the server: none at stop
        RaftServerConfigKeys.Snapshot.setTriggerWhenStopEnabled(p, false);
        RaftServerConfigKeys.Snapshot.setTriggerWhenRemoveEnabled(p, false);
        // purge behind the snapshot only as far as every follower has committed: one that was down briefly replays
        // from the leader's log instead of fetching a snapshot
        RaftServerConfigKeys.Log.setPurgeUptoSnapshotIndex(p, false);
        RaftServerConfigKeys.Log.setPurgeGap(p, (int) Math.min(1024, tuning.snapshotEvery()));
        RaftServerConfigKeys.Log.setSegmentSizeMax(p, SizeInBytes.valueOf(tuning.segmentBytes()));
        RaftServerConfigKeys.Log.setPreallocatedSize(p, SizeInBytes.valueOf(Math.min(4L << 20, tuning.segmentBytes())));
        RaftServerConfigKeys.Log.Appender.setInstallSnapshotEnabled(p, true);
        // memory: Ratis keeps the entries of up to 6 closed segments on the heap by default, and every request's
        // reply for 60 s for retries (Cairn never retries a proposal under its call id: retries carry op ids, and
        // the namespace answers them): 1.1 GiB of heap per million creates in ./cairn bench meta before these
        RaftServerConfigKeys.Log.setSegmentCacheNumMax(p, SEGMENTS_CACHED);
        RaftServerConfigKeys.Log.setSegmentCacheSizeMax(p, SizeInBytes.valueOf(SEGMENT_CACHE_BYTES));
        RaftServerConfigKeys.RetryCache.setExpiryTime(p, RETRY_CACHE_EXPIRY);
        // confirmLeadership: a read request is answered after a ReadIndex round (or within the leader's lease, which
        // Ratis keeps below the election timeout from its followers' acknowledgements on the monotonic clock), once the
        // state machine applied up to the read index
        RaftServerConfigKeys.Read.setOption(p, RaftServerConfigKeys.Read.Option.LINEARIZABLE);
        RaftServerConfigKeys.Read.setLeaderLeaseEnabled(p, true);
        RaftServerConfigKeys.Read.setTimeout(p, READ_TIMEOUT);
        // the group it starts with; a master added later starts with the group's members and itself, and counts
        // only once the leader has added it (changeMembers); after a restart the configuration in its log rules
        List<RaftPeer> group = new ArrayList<>();
        for (Peer peer : peers) group.add(raftPeer(peer));
        submitter = Executors.newSingleThreadExecutor(r -> {
            Thread t = new Thread(r, "cairn-raft-submit");
            t.setDaemon(true);
            return t;
        });
        poller = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "cairn-raft-role");
            t.setDaemon(true);
            return t;
        });
        try {
            dev.cairn.core.real.DurableDirectories.create(dir);
            boolean fresh;
            try (var s = Files.list(dir)) { fresh = s.findAny().isEmpty(); }
            TermIndex stored = TermIndex.valueOf(appliedTerm, appliedIndex);
            SnapshotFile.Found local = SnapshotFile.latest(stateMachineDir());
            if (local != null && local.index() > appliedIndex) {
                // the store lost what the snapshot holds (an install cut short, a store replaced): the snapshot comes first
                l.install(local.term(), local.index(), sink -> readSnapshot(local, sink));
                stored = TermIndex.valueOf(local.term(), local.index());
            }
            CairnStateMachine machine = new CairnStateMachine(stored);
            server = RaftServer.newBuilder()
                    .setServerId(RaftPeerId.valueOf(self.id()))
                    .setGroup(RaftGroup.valueOf(GROUP, group))
                    .setStateMachine(machine)
                    .setProperties(p)
                    .setOption(fresh ? RaftStorage.StartupOption.FORMAT : RaftStorage.StartupOption.RECOVER)
                    .build();
            server.start();
            if (stored.getIndex() > 0 && SnapshotFile.latest(stateMachineDir()) == null) snapshotNow(machine);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot start the master group's log in " + dir + ": " + e.getMessage(), e);
        }
        poller.scheduleWithFixedDelay(this::checkRole, 0, ROLE_POLL_MILLIS, TimeUnit.MILLISECONDS);
    }

    /**
     * The store holds entries but no snapshot file exists (none was due yet, or the file was lost): until one is
     * taken, replay starts at the store's own index with a snapshot that has no file, and that cannot be sent to a
     * member that lacks the entries before it — which happens as soon as this log lost its early entries (segments
     * whose names a power cut took on a filesystem that does not journal them): Ratis then fails every install with
     * "Failed to compute total size for snapshot", and the member never catches up. A real snapshot is taken in the
     * background at once (it goes through the replica's loop, on which this start runs, so it cannot be awaited here).
     */
    private void snapshotNow(CairnStateMachine machine) {
        Thread t = new Thread(() -> {
            try {
                long at = machine.takeSnapshot();
                if (at > 0) LOG.info("no snapshot file was there at start: took one at log entry {}", at);
            } catch (IOException | RuntimeException e) {
                if (!closing) LOG.warn("no snapshot file was there at start, and taking one failed (the next one is due after {} entries): {}",
                        tuning.snapshotEvery(), e.toString());
            }
        }, "cairn-raft-first-snapshot");
        t.setDaemon(true);
        t.start();
    }

    /** Where Ratis keeps the state machine's files (the snapshots): {@code DIR/GROUP-ID/sm}. */
    private Path stateMachineDir() { return dir.resolve(GROUP.getUuid().toString()).resolve("sm"); }

    private static void readSnapshot(SnapshotFile.Found f, java.util.function.BiConsumer<byte[], byte[]> sink) {
        try {
            SnapshotFile.read(f, sink);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read the snapshot " + f.path() + ": " + e.getMessage(), e);
        }
    }

    /** Tells the replica its role when it differs from what it was last told. */
    private synchronized void checkRole() {
        Role now;
        try {
            var division = server.getDivision(GROUP);
            DivisionInfo info = division.getInfo();
            RaftConfiguration conf = division.getRaftConf();
            seen = true;
            lastMembers = clientsOf(conf);
            // in a joint configuration (a change under way) this master still counts
            boolean member = !conf.getPreviousPeers().isEmpty() || conf.getPeer(RaftPeerId.valueOf(self.id())) != null;
            boolean leads = member && info.isLeader() && info.isLeaderReady();
            RaftPeerId leaderId = info.getLeaderId();
            Address leader = null;
            if (leaderId != null) {
                // from the latest configuration: the leader may be a master added since this one started
                RaftPeer p = conf.getPeer(leaderId);
                if (p != null) leader = clientOf(p);
                for (Peer peer : peers) if (leader == null && peer.id().equals(leaderId.toString())) leader = peer.client();
            }
            if (!member && (leader == null || leader.equals(self.client()))) leader = anotherMember();
            now = new Role(leads, info.getCurrentTerm(), leads ? self.client() : leader);
        } catch (IOException | RuntimeException e) {
            // the division is not there yet (starting) or any more: closing, or removed from the group (Ratis shuts
            // a leader's division down once a configuration without it is committed)
            if (!seen || closing) return;
            now = new Role(false, told.term(), anotherMember());
        }
        if (now.equals(told)) return;
        if (!now.leads() && !lastMembers.contains(self.client()) && !told.equals(Role.UNKNOWN)) {
            LOG.info("this master is no longer a member of the group {}: it serves nothing; stop it", lastMembers);
        }
        told = now;
        Listener l = listener;
        Role role = now;
        loop.execute(() -> l.roleChanged(role));
    }

    /** A member of the group this master was last part of, other than itself: who to send a client to. */
    private Address anotherMember() {
        for (Address a : lastMembers) if (!a.equals(self.client())) return a;
        return null;
    }

    @Override public List<Address> members() {
        try {
            return clientsOf(server.getDivision(GROUP).getRaftConf());
        } catch (IOException | RuntimeException e) {
            return seen ? lastMembers : clients(peers); // removed (the group it left), or not started (the group it was started with)
        }
    }

    /** The client addresses of a configuration's current members. */
    private static List<Address> clientsOf(RaftConfiguration conf) {
        return conf.getCurrentPeers().stream().map(RatisLog::clientOf).toList();
    }

    private static Address clientOf(RaftPeer p) {
        return p.getClientAddress() != null && !p.getClientAddress().isEmpty() ? Address.parse(p.getClientAddress())
                : Address.parse(p.getId().toString().replace('_', ':'));
    }

    private static RaftPeer raftPeer(Peer peer) {
        return RaftPeer.newBuilder().setId(peer.id()).setAddress(peer.raft().toString()).setClientAddress(peer.client().toString()).build();
    }

    /**
     * Ratis's joint consensus: the leader first brings a new member up to date with the log (it is not counted
     * until then), then commits the old and new configurations together, then the new one alone. Compare-and-set
     * against the configuration read here, so two changes at once cannot undo each other.
     */
    @Override public Promise<List<Address>> changeMembers(Address client, boolean add) {
        List<RaftPeer> current;
        try {
            var division = server.getDivision(GROUP);
            if (!division.getInfo().isLeader()) return Promise.failed(new CairnException(Status.NOT_LEADER, "this master is not the leader"));
            current = List.copyOf(division.getRaftConf().getCurrentPeers());
        } catch (IOException | RuntimeException e) {
            return Promise.failed(new CairnException(Status.UNAVAILABLE, "the master group's log is not running: " + e.getMessage()));
        }
        Peer peer = Peer.of(List.of(client)).get(0);
        boolean member = current.stream().anyMatch(p -> p.getId().toString().equals(peer.id()));
        if (add == member) return Promise.completed(current.stream().map(RatisLog::clientOf).toList());
        List<RaftPeer> next = new ArrayList<>();
        for (RaftPeer p : current) if (add || !p.getId().toString().equals(peer.id())) next.add(p);
        if (add) next.add(raftPeer(peer));
        if (next.isEmpty()) return Promise.failed(new CairnException(Status.BAD_REQUEST, "the group's last master cannot be removed"));
        SetConfigurationRequest req = new SetConfigurationRequest(clientId, RaftPeerId.valueOf(self.id()), GROUP, callId.incrementAndGet(),
                SetConfigurationRequest.Arguments.newBuilder().setServersInNewConf(next).setServersInCurrentConf(current)
                        .setMode(SetConfigurationRequest.Mode.COMPARE_AND_SET).build());
        Promise<List<Address>> out = new Promise<>();
        submit(() -> server.setConfigurationAsync(req)).whenComplete((reply, e) -> loop.execute(() -> {
            Throwable err = e != null ? e : reply.isSuccess() ? null : reply.getException();
            if (err != null) {
                out.fail(failure(err, reply != null && reply.getNotLeaderException() != null));
                return;
            }
            out.complete(next.stream().map(RatisLog::clientOf).toList());
        }));
        return out;
    }

    @Override public Promise<Void> propose(byte[] entry) {
        return request(Message.valueOf(ByteString.copyFrom(entry)), RaftClientRequest.writeRequestType());
    }

    /** A read request with nothing to read: Ratis answers it as a linearizable read (see {@link #start}), which is the confirmation. */
    @Override public Promise<Void> confirmLeadership() {
        // a follower's linearizable read would ask the leader and succeed: the confirmation is the leader's alone
        try {
            if (!server.getDivision(GROUP).getInfo().isLeader()) return Promise.failed(new CairnException(Status.NOT_LEADER, "this master is not the leader"));
        } catch (IOException | RuntimeException e) {
            return Promise.failed(new CairnException(Status.UNAVAILABLE, "the master group's log is not running: " + e.getMessage()));
        }
        // whatever stopped it (a ReadIndexException while no leader is known, a timeout, a step-down), the read did
        // nothing: NOT_LEADER sends the reader to the other masters (UNAVAILABLE surfaced as a failed READ in chaos
        // leader-stall seed 2: "ReadIndexException: Leader is unknown")
        return request(Message.EMPTY, RaftClientRequest.readRequestType()).then((v, e) -> e == null ? Promise.completed(null)
                : Promise.failed(new CairnException(Status.NOT_LEADER, "this master cannot confirm it leads: " + CairnException.detailOf(e))));
    }

    private Promise<Void> request(Message message, RaftClientRequest.Type type) {
        Promise<Void> out = new Promise<>();
        RaftClientRequest req = RaftClientRequest.newBuilder()
                .setClientId(clientId).setServerId(RaftPeerId.valueOf(self.id())).setGroupId(GROUP)
                .setCallId(callId.incrementAndGet())
                .setMessage(message)
                .setType(type)
                .build();
        submit(() -> server.submitClientRequestAsync(req)).whenComplete((reply, e) -> loop.execute(() -> {
            if (e != null) {
                out.fail(failure(e, false));
            } else if (reply.isSuccess()) {
                out.complete(null);
            } else {
                out.fail(failure(reply.getException(), reply.getNotLeaderException() != null));
            }
        }));
        return out;
    }

    /** A call into Ratis that may block its caller. */
    private interface RatisCall {
        CompletableFuture<RaftClientReply> call() throws IOException;
    }

    /**
     * Makes a Ratis call on {@link #submitter}, never on the replica's loop: Ratis's "asynchronous" submit hands the
     * request to its own executor and joins it, and that executor can wait for work queued on the loop (an apply, a
     * closing division), which then never comes (a master removed from the group hung its loop and its stop this way).
     * One thread keeps proposals in the order the loop made them.
     */
    private CompletableFuture<RaftClientReply> submit(RatisCall call) {
        CompletableFuture<RaftClientReply> out = new CompletableFuture<>();
        try {
            submitter.execute(() -> {
                try {
                    call.call().whenComplete((r, e) -> {
                        if (e != null) out.completeExceptionally(e);
                        else out.complete(r);
                    });
                } catch (IOException | RuntimeException e) {
                    out.completeExceptionally(new IOException("the metadata log refused the request: " + e, e));
                }
            });
        } catch (java.util.concurrent.RejectedExecutionException e) {
            out.completeExceptionally(new IOException("the metadata log is stopping"));
        }
        return out;
    }

    private static CairnException failure(Throwable e, boolean notLeader) {
        Throwable c = e instanceof java.util.concurrent.CompletionException && e.getCause() != null ? e.getCause() : e;
        if (notLeader || c instanceof NotLeaderException || c instanceof LeaderNotReadyException || c instanceof GroupMismatchException) {
            // refused before it was appended: nothing was done
            return new CairnException(Status.NOT_LEADER, "this master is not the leader: " + Objects.toString(c));
        }
        return new CairnException(Status.UNAVAILABLE, "metadata log: " + Objects.toString(c));
    }

    /**
     * Waits on a Ratis thread for work posted to the replica's loop, giving up when the replica stops (its loop
     * is then inside {@link #stop}, waiting for these threads: waiting on would deadlock) or after {@code seconds}.
     */
    private <T> T awaitLoop(CompletableFuture<T> f, long seconds, String what) throws IOException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(seconds);
        while (true) {
            if (closing) throw new IOException(what + ": the master is stopping");
            try {
                return f.get(100, TimeUnit.MILLISECONDS);
            } catch (java.util.concurrent.TimeoutException e) {
                if (System.nanoTime() - deadline > 0) throw new IOException(what + ": no answer in " + seconds + " s");
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IOException(what + ": interrupted", e);
            } catch (java.util.concurrent.ExecutionException e) {
                throw new IOException(what + ": " + e.getCause(), e.getCause());
            }
        }
    }

    @Override public void stop() {
        closing = true;
        for (CompletableFuture<Message> f : applying) f.completeExceptionally(new IOException("the master is stopping"));
        if (poller != null) poller.shutdownNow();
        try {
            if (server != null) server.close();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } finally {
            if (submitter != null) submitter.shutdownNow(); // a call still queued fails: the server is closed
        }
    }

    /**
     * Hands committed entries to the replica in log order, skipping those its store already holds; takes and
     * installs snapshots (see the class comment).
     */
    private final class CairnStateMachine extends BaseStateMachine {
        /** Entries up to this index are in the replica's store already (replayed after a restart or a snapshot). */
        private volatile long skipThrough;
        private final TermIndex storedAtStart;
        private final SnapshotStorage storage = new SnapshotStorage();

        CairnStateMachine(TermIndex storedAtStart) {
            this.storedAtStart = storedAtStart;
            this.skipThrough = storedAtStart.getIndex();
        }

        @Override public void initialize(RaftServer raftServer, RaftGroupId groupId, RaftStorage raftStorage) throws IOException {
            getLifeCycle().startAndTransition(() -> {
                super.initialize(raftServer, groupId, raftStorage);
                storage.init(raftStorage);
                // Ratis replays from the latest snapshot (or from the store's own index when there is none yet)
                SnapshotInfo s = getLatestSnapshot();
                if (s != null) setLastAppliedTermIndex(s.getTermIndex());
            });
        }

        @Override public SnapshotStorage getStateMachineStorage() { return storage; }

        @Override public SnapshotInfo getLatestSnapshot() {
            SnapshotInfo file = storage.getLatestSnapshot();
            if (file != null) return file;
            if (storedAtStart.getIndex() <= 0) return null;
            // no snapshot taken yet: the store itself says where replay starts (nothing was purged behind it)
            return new SnapshotInfo() {
                @Override public TermIndex getTermIndex() { return storedAtStart; }

                @Override public List<org.apache.ratis.server.storage.FileInfo> getFiles() { return List.of(); }
            };
        }

        /** Synchronized: Ratis's own trigger and {@link #snapshotNow} may ask at once, and both write to one directory. */
        @Override public synchronized long takeSnapshot() throws IOException {
            CompletableFuture<Object[]> taken = new CompletableFuture<>();
            Listener l = listener;
            loop.execute(() -> {
                TermIndex at = getLastAppliedTermIndex();
                l.snapshot().onComplete((view, e) -> {
                    if (e != null) taken.completeExceptionally(e);
                    else taken.complete(new Object[] {at, view});
                });
            });
            Object[] got;
            try {
                got = awaitLoop(taken, SNAPSHOT_WAIT_SECONDS, "a snapshot of the store");
            } catch (IOException e) {
                taken.thenAccept(late -> ((dev.cairn.core.env.KvStore.View) late[1]).close()); // given up: released when it comes
                throw e;
            }
            TermIndex at = (TermIndex) got[0];
            long started = System.nanoTime();
            Path written;
            try (dev.cairn.core.env.KvStore.View view = (dev.cairn.core.env.KvStore.View) got[1]) {
                if (at == null || at.getIndex() <= 0) return RaftLog.INVALID_LOG_INDEX;
                written = SnapshotFile.write(storage.dir(), at.getTerm(), at.getIndex(), view);
            }
            RatisLog.LOG.info("snapshot of the metadata store at log entry {}: {} MiB written in {} ms", at.getIndex(),
                    Files.size(written) >> 20, (System.nanoTime() - started) / 1_000_000);
            SnapshotFile.Found latest = SnapshotFile.latest(storage.dir());
            if (latest != null) SnapshotFile.deleteAllBut(storage.dir(), latest);
            storage.refresh();
            return at.getIndex();
        }

        /** Before Ratis moves an installed snapshot into place. */
        @Override public void pause() {
            if (getLifeCycleState() == LifeCycle.State.RUNNING) {
                getLifeCycle().transition(LifeCycle.State.PAUSING);
                getLifeCycle().transition(LifeCycle.State.PAUSED);
            }
        }

        /** A snapshot from the leader is in place: it replaces the replica's store, and entries after it follow. */
        @Override public void reinitialize() throws IOException {
            storage.refresh(); // Ratis has just put the leader's snapshot in place of the directory
            SnapshotFile.Found f = SnapshotFile.latest(storage.dir());
            if (f != null && f.index() > skipThrough) {
                SnapshotFile.read(f, (k, v) -> { }); // checked whole before the store is touched
                CompletableFuture<Void> done = new CompletableFuture<>();
                Listener l = listener;
                loop.execute(() -> {
                    try {
                        l.install(f.term(), f.index(), sink -> readSnapshot(f, sink));
                        done.complete(null);
                    } catch (RuntimeException | Error e) {
                        done.completeExceptionally(e);
                    }
                });
                awaitLoop(done, SNAPSHOT_WAIT_SECONDS, "installing the snapshot " + f.path());
                skipThrough = f.index();
                setLastAppliedTermIndex(TermIndex.valueOf(f.term(), f.index()));
            }
            if (getLifeCycleState() == LifeCycle.State.PAUSED) {
                getLifeCycle().transition(LifeCycle.State.STARTING);
                getLifeCycle().transition(LifeCycle.State.RUNNING);
            }
        }

        @Override public CompletableFuture<Message> applyTransaction(TransactionContext trx) {
            LogEntryProto e = trx.getLogEntry();
            long term = e.getTerm();
            long index = e.getIndex();
            if (index <= skipThrough) {
                // replayed from before the store's own index: the store holds it
                loop.execute(() -> updateLastAppliedTermIndex(term, index));
                return CompletableFuture.completedFuture(Message.EMPTY);
            }
            byte[] data = e.getStateMachineLogEntry().getLogData().toByteArray();
            CompletableFuture<Message> done = new CompletableFuture<>();
            applying.add(done);
            done.whenComplete((m, x) -> applying.remove(done));
            if (closing) done.completeExceptionally(new IOException("the master is stopping"));
            Listener l = listener;
            loop.execute(() -> {
                if (closing) return; // not applied: the store's index says so, and the entry is replayed at the next start
                try {
                    l.apply(term, index, data);
                    updateLastAppliedTermIndex(term, index);
                    done.complete(Message.EMPTY);
                } catch (RuntimeException | Error x) {
                    done.completeExceptionally(x);
                }
            });
            return done;
        }

        /** {@link #confirmLeadership}'s read: Ratis calls it once the read is linearizable; there is nothing to read. */
        @Override public CompletableFuture<Message> query(Message request) { return CompletableFuture.completedFuture(Message.EMPTY); }

        /** Entries that are not commands (configuration, a new leader's first entry): applied in the same order. */
        @Override public void notifyTermIndexUpdated(long term, long index) {
            loop.execute(() -> updateLastAppliedTermIndex(term, index));
        }

        @Override public void notifyLeaderChanged(RaftGroupMemberId member, RaftPeerId newLeader) {
            poller.execute(RatisLog.this::checkRole); // at once, not at the next poll
        }
    }

    /**
     * The state machine's files: the latest {@link SnapshotFile} in Ratis's state-machine directory, looked up
     * when it changes (written, installed, found at start), not at each of Ratis's many questions.
     */
    private static final class SnapshotStorage implements StateMachineStorage {
        private volatile Path dir;
        private volatile SnapshotInfo latest;

        @Override public void init(RaftStorage raftStorage) throws IOException {
            dir = raftStorage.getStorageDir().getStateMachineDir().toPath();
            Files.createDirectories(dir);
            refresh();
        }

        Path dir() { return dir; }

        /** Looks again for the latest snapshot (after one was written or installed). */
        void refresh() throws IOException {
            SnapshotFile.Found f = dir == null ? null : SnapshotFile.latest(dir);
            latest = f == null ? null : new FileListSnapshotInfo(List.of(new FileInfo(f.path(), null)), f.term(), f.index());
        }

        @Override public SnapshotInfo getLatestSnapshot() { return latest; }

        @Override public void format() {}

        @Override public void cleanupOldSnapshots(SnapshotRetentionPolicy policy) throws IOException {
            SnapshotFile.Found f = SnapshotFile.latest(dir);
            if (f != null) SnapshotFile.deleteAllBut(dir, f);
            refresh();
        }
    }
}
