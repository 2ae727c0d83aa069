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
import org.apache.ratis.protocol.exceptions.LeaderNotReadyException;
import org.apache.ratis.protocol.exceptions.NotLeaderException;
import org.apache.ratis.rpc.SupportedRpcType;
import org.apache.ratis.server.DivisionInfo;
import org.apache.ratis.server.RaftServer;
import org.apache.ratis.server.RaftServerConfigKeys;
import org.apache.ratis.server.protocol.TermIndex;
import org.apache.ratis.server.storage.RaftStorage;
import org.apache.ratis.statemachine.SnapshotInfo;
import org.apache.ratis.statemachine.TransactionContext;
import org.apache.ratis.statemachine.impl.BaseStateMachine;
import org.apache.ratis.thirdparty.com.google.protobuf.ByteString;
import org.apache.ratis.util.TimeDuration;

/**
 * The master group's log on Apache Ratis (netty transport). Ratis runs on its own threads; everything it
 * tells the replica (committed entries, role changes, proposal outcomes) is posted to the replica's
 * scheduler in the order Ratis produced it, so the replica stays a single-threaded state machine.
 *
 * <p>The replica's RocksDB store is the state machine's state and records the last applied entry itself;
 * Ratis learns it through {@link CairnStateMachine#getLatestSnapshot} and replays the log from there after a
 * restart. The log is never purged yet (no snapshot to install on a follower that fell behind it), so a
 * replica with an empty disk catches up by replaying the whole log.
 */
public final class RatisLog implements ReplicatedLog {
    /** Added to a master's client port to give its Raft port, unless the peer list says otherwise. */
    public static final int RAFT_PORT_OFFSET = 1000;
    /** Election timeout range: generous, since a loaded 2-core machine pauses for GC and fsync. */
    static final TimeDuration ELECTION_MIN = TimeDuration.valueOf(1000, TimeUnit.MILLISECONDS);
    static final TimeDuration ELECTION_MAX = TimeDuration.valueOf(2000, TimeUnit.MILLISECONDS);
    /** How often the replica's role is compared with what it was last told (besides Ratis's own leader notices). */
    static final long ROLE_POLL_MILLIS = 100;
    /** One fixed group: a process serves one Cairn master group. */
    static final RaftGroupId GROUP = RaftGroupId.valueOf(UUID.nameUUIDFromBytes("cairn-masters".getBytes(StandardCharsets.UTF_8)));

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
        while (out.size() < n) {
            int port;
            try (java.net.ServerSocket s = new java.net.ServerSocket(0, 1, java.net.InetAddress.getByName("127.0.0.1"))) {
                port = s.getLocalPort();
            }
            Address a = new Address("127.0.0.1", port);
            if (port + RAFT_PORT_OFFSET <= 65535 && !out.contains(a) && free(port + RAFT_PORT_OFFSET)) out.add(a);
        }
        return List.copyOf(out);
    }

    private static boolean free(int port) {
        try (java.net.ServerSocket s = new java.net.ServerSocket(port, 1, java.net.InetAddress.getByName("127.0.0.1"))) {
            return true;
        } catch (IOException e) {
            return false;
        }
    }

    private final List<Peer> peers;
    private final Peer self;
    private final Path dir;
    private final Scheduler loop;
    private final ClientId clientId = ClientId.randomId();
    private final AtomicLong callId = new AtomicLong();
    private RaftServer server;
    private ScheduledExecutorService poller;
    private volatile Listener listener;
    private volatile Role told = Role.UNKNOWN;

    /** @param loop the replica's scheduler, on which every call back runs */
    public RatisLog(List<Peer> peers, Address selfClient, Path dir, Scheduler loop) {
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
        RaftServerConfigKeys.Snapshot.setAutoTriggerEnabled(p, false);
        RaftServerConfigKeys.Log.setPurgeUptoSnapshotIndex(p, false);
        List<RaftPeer> group = new ArrayList<>();
        for (Peer peer : peers) {
            group.add(RaftPeer.newBuilder().setId(peer.id()).setAddress(peer.raft().toString()).setClientAddress(peer.client().toString()).build());
        }
        poller = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "cairn-raft-role");
            t.setDaemon(true);
            return t;
        });
        try {
            Files.createDirectories(dir);
            boolean fresh;
            try (var s = Files.list(dir)) { fresh = s.findAny().isEmpty(); }
            server = RaftServer.newBuilder()
                    .setServerId(RaftPeerId.valueOf(self.id()))
                    .setGroup(RaftGroup.valueOf(GROUP, group))
                    .setStateMachine(new CairnStateMachine(TermIndex.valueOf(appliedTerm, appliedIndex)))
                    .setProperties(p)
                    .setOption(fresh ? RaftStorage.StartupOption.FORMAT : RaftStorage.StartupOption.RECOVER)
                    .build();
            server.start();
        } catch (IOException e) {
            throw new UncheckedIOException("cannot start the master group's log in " + dir + ": " + e.getMessage(), e);
        }
        poller.scheduleWithFixedDelay(this::checkRole, 0, ROLE_POLL_MILLIS, TimeUnit.MILLISECONDS);
    }

    /** Tells the replica its role when it differs from what it was last told. */
    private synchronized void checkRole() {
        try {
            DivisionInfo info = server.getDivision(GROUP).getInfo();
            boolean leads = info.isLeader() && info.isLeaderReady();
            RaftPeerId leaderId = info.getLeaderId();
            Address leader = null;
            if (leaderId != null) {
                for (Peer peer : peers) if (peer.id().equals(leaderId.toString())) leader = peer.client();
            }
            Role now = new Role(leads, info.getCurrentTerm(), leads ? self.client() : leader);
            if (now.equals(told)) return;
            told = now;
            Listener l = listener;
            loop.execute(() -> l.roleChanged(now));
        } catch (IOException | RuntimeException e) {
            // the division is not there yet (starting) or any more (closing): nothing to tell
        }
    }

    @Override public Promise<Void> propose(byte[] entry) {
        Promise<Void> out = new Promise<>();
        RaftClientRequest req = RaftClientRequest.newBuilder()
                .setClientId(clientId).setServerId(RaftPeerId.valueOf(self.id())).setGroupId(GROUP)
                .setCallId(callId.incrementAndGet())
                .setMessage(Message.valueOf(ByteString.copyFrom(entry)))
                .setType(RaftClientRequest.writeRequestType())
                .build();
        CompletableFuture<RaftClientReply> f;
        try {
            f = server.submitClientRequestAsync(req);
        } catch (IOException | RuntimeException e) {
            return Promise.failed(new CairnException(Status.UNAVAILABLE, "the metadata log refused the entry: " + e));
        }
        f.whenComplete((reply, e) -> loop.execute(() -> {
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

    private static CairnException failure(Throwable e, boolean notLeader) {
        Throwable c = e instanceof java.util.concurrent.CompletionException && e.getCause() != null ? e.getCause() : e;
        if (notLeader || c instanceof NotLeaderException || c instanceof LeaderNotReadyException) {
            // refused before it was appended: nothing was done
            return new CairnException(Status.NOT_LEADER, "this master is not the leader: " + Objects.toString(c));
        }
        return new CairnException(Status.UNAVAILABLE, "metadata log: " + Objects.toString(c));
    }

    @Override public void stop() {
        if (poller != null) poller.shutdownNow();
        try {
            if (server != null) server.close();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /**
     * Hands committed entries to the replica in log order. The replica's store is the state; it records the
     * last applied entry itself, which is where Ratis resumes after a restart.
     */
    private final class CairnStateMachine extends BaseStateMachine {
        private final TermIndex appliedAtStart;

        CairnStateMachine(TermIndex appliedAtStart) { this.appliedAtStart = appliedAtStart; }

        @Override public void initialize(RaftServer raftServer, RaftGroupId groupId, RaftStorage storage) throws IOException {
            super.initialize(raftServer, groupId, storage);
            if (appliedAtStart.getIndex() > 0) setLastAppliedTermIndex(appliedAtStart);
        }

        @Override public SnapshotInfo getLatestSnapshot() {
            if (appliedAtStart.getIndex() <= 0) return null;
            return new SnapshotInfo() {
                @Override public TermIndex getTermIndex() { return appliedAtStart; }

                @Override public List<org.apache.ratis.server.storage.FileInfo> getFiles() { return List.of(); }
            };
        }

        @Override public CompletableFuture<Message> applyTransaction(TransactionContext trx) {
            LogEntryProto e = trx.getLogEntry();
            byte[] data = e.getStateMachineLogEntry().getLogData().toByteArray();
            long term = e.getTerm();
            long index = e.getIndex();
            CompletableFuture<Message> done = new CompletableFuture<>();
            Listener l = listener;
            loop.execute(() -> {
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

        /** Entries that are not commands (configuration, a new leader's first entry): applied in the same order. */
        @Override public void notifyTermIndexUpdated(long term, long index) {
            loop.execute(() -> updateLastAppliedTermIndex(term, index));
        }

        @Override public void notifyLeaderChanged(RaftGroupMemberId member, RaftPeerId newLeader) {
            poller.execute(RatisLog.this::checkRole); // at once, not at the next poll
        }
    }
}
