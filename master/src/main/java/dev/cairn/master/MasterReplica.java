package dev.cairn.master;

import dev.cairn.core.env.Address;
import dev.cairn.core.env.Env;
import dev.cairn.core.env.Log;
import dev.cairn.core.env.MessageHandler;
import dev.cairn.core.env.Node;
import dev.cairn.core.proto.CairnException;
import dev.cairn.core.proto.MasterProtocol;
import dev.cairn.core.proto.Message;
import dev.cairn.core.proto.Status;
import dev.cairn.master.meta.MetaCommand;
import dev.cairn.master.meta.ReplicaMetaLog;
import dev.cairn.master.meta.ReplicatedLog;
import dev.cairn.master.namespace.Namespace;
import java.util.List;

/**
 * One master of a group. Every replica applies the committed metadata log to its own store; only the
 * leader serves. On becoming leader a replica first commits a {@link MetaCommand.Barrier} (so its store
 * holds every command committed before its term), then starts a fresh {@link Master} for the term on a
 * {@link FencedEnv}: the chunk registry, leases, planner and archiver are that master's soft state, rebuilt
 * from chunkserver registrations exactly as after a master restart (start-up grace included). When the
 * term ends the master is retired and forgotten. Requests reaching a replica that does not serve are
 * answered {@link Status#NOT_LEADER} with the leader's address, and nothing is done.
 */
public final class MasterReplica implements Node, MessageHandler, dev.cairn.core.metrics.MetricsSource {
    /** A new leader whose barrier failed (leadership lost meanwhile, or the log busy) tries again after this. */
    static final long BARRIER_RETRY_NANOS = 500_000_000L;

    private final Env env;
    private final MasterConfig config;
    private final ReplicatedLog raft;
    private final Log log;
    private Namespace namespace;
    private ReplicaMetaLog metaLog;
    private ReplicatedLog.Role role = ReplicatedLog.Role.UNKNOWN;
    /** The master serving the current leader term, or null. */
    private Master master;
    private FencedEnv fence;
    /** The term {@link #master} serves, or the term whose barrier is in flight. */
    private long term = -1;
    private boolean stopped;

    public MasterReplica(Env env, MasterConfig config, ReplicatedLog raft) {
        this.env = env;
        this.config = config;
        this.raft = raft;
        this.log = env.log(MasterReplica.class);
    }

    @Override public void start() {
        namespace = new Namespace(env.kv(), config.defaultGoal());
        if (!namespace.isEmpty()) namespace.checkFormat();
        metaLog = new ReplicaMetaLog(env, namespace, raft, this::roleChanged);
        // a leader never installs a snapshot (its log holds everything it lacks), but a master built on the old state must not outlive it
        metaLog.onInstalled(() -> retire("a snapshot replaced this master's state"));
        env.transport().start(config.listen(), this);
        log.info("master replica listening on {}; its store holds the log up to entry {}", config.listen(), metaLog.appliedIndex());
        raft.start(metaLog.appliedTerm(), metaLog.appliedIndex(), metaLog);
    }

    @Override public void stop() {
        stopped = true;
        retire("stopping");
        raft.stop();
    }

    /** True while this replica leads and its master is ready to serve. */
    public boolean serving() { return master != null && master.isReady(); }

    /** Its place in the group, then, if it leads, the cluster as its master sees it. */
    @Override public void metrics(dev.cairn.core.metrics.MetricsText m) {
        m.gauge("cairn_raft_leader", "1 while this master leads the group", role.leads() ? 1 : 0);
        m.gauge("cairn_raft_term", "The group's term as this master knows it", Math.max(0, role.term()));
        m.gauge("cairn_raft_applied_index", "The last log entry applied to this master's store", metaLog == null ? 0 : metaLog.appliedIndex());
        m.gauge("cairn_raft_serving", "1 while this master serves as leader (caught up with the log)", serving() ? 1 : 0);
        if (master != null) master.metrics(m);
    }

    /** The master of the current leader term (null unless this replica leads). */
    public Master master() { return master; }

    public ReplicatedLog.Role role() { return role; }

    public Namespace namespace() { return namespace; }

    public long appliedIndex() { return metaLog.appliedIndex(); }

    /** The replica's metadata log (tests: commands submitted to the group directly). */
    ReplicaMetaLog metaLog() { return metaLog; }

    private void roleChanged(ReplicatedLog.Role r) {
        ReplicatedLog.Role was = role;
        role = r;
        if (stopped) return;
        if (!r.leads()) {
            if (was.leads()) log.info("no longer the leader (term {}; leader now {})", r.term(), r.leader() == null ? "unknown" : r.leader());
            retire("lost the leadership");
            term = -1;
            return;
        }
        if (term == r.term()) return; // already serving, or becoming the leader of, this term
        retire("a new term");
        term = r.term();
        log.info("elected leader for term {}: catching up with the log before serving", r.term());
        becomeLeader(r.term());
    }

    private void becomeLeader(long t) {
        if (stopped || !role.leads() || role.term() != t || master != null) return;
        if (metaLog.broken() != null) {
            log.warn("cannot serve as leader: {}", metaLog.broken());
            return;
        }
        // the first leader of an empty group formats it; later ones find it formatted (a no-op)
        metaLog.submit(new MetaCommand.Format(env.clock().wallMillis()))
                .flatMap(f -> metaLog.submit(new MetaCommand.Barrier(t)))
                .onComplete((v, e) -> {
                    if (stopped || !role.leads() || role.term() != t || master != null) return;
                    if (e != null) {
                        log.info("leader barrier for term {} failed ({}); retrying", t, e.getMessage());
                        env.scheduler().schedule(BARRIER_RETRY_NANOS, () -> becomeLeader(t));
                        return;
                    }
                    fence = new FencedEnv(env);
                    master = new Master(fence, config, namespace, metaLog, t);
                    master.start();
                    log.info("serving as leader for term {} from log entry {}", t, metaLog.appliedIndex());
                });
    }

    private void retire(String why) {
        if (master == null) return;
        fence.retire();
        master.stop();
        namespace.watch(Namespace.Watcher.NONE);
        log.info("master of term {} retired: {}", term, why);
        master = null;
        fence = null;
    }

    @Override public void onMessage(Address from, Message m) {
        if (m instanceof MasterProtocol.ReplicaStatus r) {
            Address leader = role.leads() ? config.listen() : role.leader();
            env.transport().send(from, new MasterProtocol.ReplicaStatusReply(r.rid(), Status.OK, "", role.leads(), serving(), role.term(),
                    metaLog.appliedIndex(), leader == null ? "" : leader.toString(), names(raft.members())));
            return;
        }
        if (m instanceof MasterProtocol.ChangeMasters r && serving()) {
            changeMembers(from, r);
            return;
        }
        if (master != null) {
            master.onMessage(from, m);
            return;
        }
        if (m.isReply()) return; // an answer to a retired master's request
        Address leader = role.leads() ? config.listen() : role.leader();
        String detail = role.leads() ? "the leader is starting; leader=" + leader
                : leader == null ? "this master is not the leader and knows no leader yet" : "this master is not the leader; leader=" + leader;
        Message out = Master.errorReply(m, Status.NOT_LEADER, detail);
        if (out != null) env.transport().send(from, out);
    }

    /** A membership change, asked of the leader: the group commits it (after catching an added master up). */
    private void changeMembers(Address from, MasterProtocol.ChangeMasters r) {
        Address who;
        try {
            who = Address.parse(r.address());
        } catch (IllegalArgumentException e) {
            env.transport().send(from, new MasterProtocol.MastersReply(r.rid(), Status.BAD_REQUEST, "not HOST:PORT: " + r.address(), List.of()));
            return;
        }
        log.info("{} master {}: changing the group's membership", r.add() ? "adding" : "removing", who);
        raft.changeMembers(who, r.add()).onComplete((members, e) -> {
            if (e != null) {
                log.warn("could not {} master {}: {}", r.add() ? "add" : "remove", who, e.getMessage());
                env.transport().send(from, new MasterProtocol.MastersReply(r.rid(), CairnException.statusOf(e), CairnException.detailOf(e), List.of()));
                return;
            }
            log.info("the master group is now {}", members);
            if (!members.contains(config.listen()) && !members.isEmpty()) {
                // this leader removed itself: it serves nothing from now on, and sends clients to the group it left
                // (its log tells it too, a poll later; a request taken meanwhile would fail with its outcome unknown)
                retire("removed from the group");
                role = new ReplicatedLog.Role(false, role.term(), members.get(0));
                term = -1;
            }
            env.transport().send(from, new MasterProtocol.MastersReply(r.rid(), Status.OK, "", names(members)));
        });
    }

    private static List<String> names(List<Address> members) { return members.stream().map(Address::toString).toList(); }

    @Override public void onDisconnect(Address peer) {
        if (master != null) master.onDisconnect(peer);
    }
}
