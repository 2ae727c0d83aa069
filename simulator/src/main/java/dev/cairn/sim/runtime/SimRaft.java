package dev.cairn.sim.runtime;

import dev.cairn.core.async.Promise;
import dev.cairn.core.proto.CairnException;
import dev.cairn.core.proto.Status;
import dev.cairn.master.meta.ReplicatedLog;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.TreeMap;
import java.util.function.BiConsumer;

/**
 * The master group's log in the simulator: a model of what Raft guarantees, not Raft itself (Apache Ratis owns
 * threads and clocks, so it cannot run here). The model keeps one committed log for the group:
 * <ul>
 *   <li>an entry commits only while its leader reaches a majority of the masters (up, not paused, not
 *       partitioned from it either way), after a replication delay; committed entries survive any crash or
 *       power loss (a majority's disks hold them), and every member applies them in order, exactly once per
 *       index above what its own store holds, catching up after a restart;</li>
 *   <li>entries not committed when their leader is deposed may vanish, or be carried into the next term (a
 *       random prefix of them, as when they had reached the new leader): their proposer hears UNAVAILABLE
 *       either way;</li>
 *   <li>a leader that crashes, or cannot reach a majority for an election timeout, is replaced by a member
 *       that can, after a randomized election delay; a leader cut off from the majority keeps believing it
 *       leads until its own step-down timeout (or until it hears of the new term), so two members can
 *       believe they lead at once — what fencing is for, and why a leader confirms it leads (a round trip
 *       that needs a majority around it, {@code confirmLeadership}) before a read is answered from its state;</li>
 *   <li>every member snapshots its store every {@link #PURGE_GAP} entries (the store made durable up to the
 *       snapshot's index, as Ratis's {@code takeSnapshot} does) and the log is purged behind the latest snapshot
 *       of every member that is up; a member whose store is behind the purged entries (down
 *       meanwhile, or its store wiped) gets the leader's snapshot installed over its store instead, then follows
 *       the log, and cannot be elected meanwhile.</li>
 * </ul>
 * Members are the {@link ReplicatedLog} of each master host's replica, one per incarnation.
 */
public final class SimRaft {
    /** Randomized election delay after the leader is lost (Raft's election timeout plus a vote). */
    static final long MIN_ELECTION_NANOS = 300_000_000L, MAX_ELECTION_NANOS = 1_500_000_000L;
    /** Replicating a batch to a majority and syncing it there. */
    static final long MIN_REPLICATE_NANOS = 300_000L, MAX_REPLICATE_NANOS = 3_000_000L;
    /** A member hearing of a commit (or of a new term) after it happened. */
    static final long MIN_NOTICE_NANOS = 50_000L, MAX_NOTICE_NANOS = 2_000_000L;
    /** How often the group's failure detection looks. */
    static final long TICK_NANOS = 50_000_000L;
    /** A leader that has not reached a majority for this long steps down by itself. */
    static final long STEP_DOWN_NANOS = 2_000_000_000L;

    /** Entries applied between a member's snapshots (small, so that purges and installs happen in short runs). */
    static final long PURGE_GAP = 16;
    /** A snapshot install that has not finished in this long (its leader crashed meanwhile) may be tried again. */
    static final long INSTALL_RETRY_NANOS = 5_000_000_000L;

    /** A committed entry. */
    public record Entry(long term, byte[] bytes) {}

    private final Simulation sim;
    private final SimNetwork net;
    private final SplittableRandom rnd;
    /** The masters, by host name. */
    private final TreeMap<String, SimHost> hosts = new TreeMap<>();
    /** The running member of each master host (its current incarnation's), by host name. */
    private final TreeMap<String, Member> members = new TreeMap<>();
    private final List<Entry> committed = new ArrayList<>();
    private final List<BiConsumer<Long, Entry>> commitListeners = new ArrayList<>();
    private long term;
    /** The current leader's host name, or null during an election. */
    private String leader;
    /** A deposed leader that has not noticed yet (cut off from the majority), or null. */
    private String staleLeader;
    private long staleSince;
    /** When the current leader last stopped reaching a majority (-1: it reaches one). */
    private long cutOffSince = -1;
    /** Committed entries up to this index are gone from the log: a member behind it needs a snapshot. */
    private long purged;
    /** The index of each master host's latest snapshot (its store durable up to there); kept across restarts. */
    private final Map<String, Long> snapshotted = new HashMap<>();
    private long installs;
    private boolean electionScheduled;
    private boolean replicationScheduled;
    private boolean ticking;
    private long elections;

    public SimRaft(Simulation sim, SimNetwork net) {
        this.sim = sim;
        this.net = net;
        this.rnd = sim.random().split();
    }

    /** Adds a master host to the group (before the run starts). */
    public void add(SimHost host) { hosts.put(host.name(), host); }

    /** The member for a new incarnation of {@code hostName}'s replica. */
    public ReplicatedLog member(String hostName) { return new Member(hostName); }

    /** Told of every entry as it commits (index from 1), before any member applies it. */
    public void onCommit(BiConsumer<Long, Entry> l) { commitListeners.add(l); }

    public List<Entry> committed() { return java.util.Collections.unmodifiableList(committed); }

    public long term() { return term; }

    /** The host that leads now, or null. */
    public SimHost leader() { return leader == null ? null : hosts.get(leader); }

    public long elections() { return elections; }

    /** {@code host}'s store was wiped (its disk replaced): it holds no snapshot any more. */
    public void storeWiped(String host) { snapshotted.remove(host); }

    /** Snapshots installed on members whose store was behind the purged log. */
    public long installs() { return installs; }

    /** The last purged index (entries up to it are gone from the log). */
    public long purged() { return purged; }

    public int size() { return hosts.size(); }

    // ---------------------------------------------------------------- the group

    private boolean healthy(SimHost h) { return h.isUp() && !h.isLost() && !h.isPaused(); }

    /** Both ways, as a Raft round trip needs. */
    private boolean reach(SimHost a, SimHost b) {
        if (!healthy(a) || !healthy(b)) return false;
        return a == b || (!net.blocks(a, b) && !net.blocks(b, a));
    }

    private boolean majorityAround(SimHost h) {
        int n = 0;
        for (SimHost o : hosts.values()) if (reach(h, o)) n++;
        return n > hosts.size() / 2;
    }

    private long between(long lo, long hi) { return lo + rnd.nextLong(hi - lo + 1); }

    private void ensureTicking() {
        if (ticking) return;
        ticking = true;
        sim.at(TICK_NANOS, null, Simulation.Kind.TIMER, 0x7A1L, this::tick);
    }

    private void tick() {
        sim.at(TICK_NANOS, null, Simulation.Kind.TIMER, 0x7A1L, this::tick);
        if (staleLeader != null) {
            SimHost s = hosts.get(staleLeader);
            // a cut-off leader steps down on its own timeout, or at once when it hears of the newer term
            boolean hears = leader != null && reach(s, hosts.get(leader));
            if (!healthy(s) || hears || sim.now() - staleSince >= STEP_DOWN_NANOS) {
                Member m = members.get(staleLeader);
                staleLeader = null;
                if (m != null) m.tell(role(m.host));
            }
        }
        if (leader != null) {
            SimHost l = hosts.get(leader);
            if (!l.isUp() || l.isLost()) {
                depose(false);
            } else if (!majorityAround(l)) {
                if (cutOffSince < 0) cutOffSince = sim.now();
                // the rest elect a new leader once their election timeout passes, if a majority of them can
                long waited = sim.now() - cutOffSince;
                if (waited >= MIN_ELECTION_NANOS && someoneElse()) depose(true);
                else if (waited >= STEP_DOWN_NANOS) depose(false);
            } else {
                cutOffSince = -1;
            }
        }
        purge();
        deliverAll(); // members that were cut off or down hear of what committed meanwhile
        if (leader == null && !electionScheduled) {
            electionScheduled = true;
            sim.at(between(MIN_ELECTION_NANOS, MAX_ELECTION_NANOS), null, Simulation.Kind.TIMER, 0x7A2L, this::elect);
        }
    }

    /** True if a member other than the leader reaches a majority (so the others can elect). */
    private boolean someoneElse() {
        for (SimHost h : hosts.values()) if (!h.name().equals(leader) && majorityAround(h) && members.containsKey(h.name())) return true;
        return false;
    }

    /**
     * The leader is replaced. Its uncommitted entries: a random prefix is carried into the next term (it had
     * reached the next leader), the rest vanish; its proposers hear UNAVAILABLE. {@code unaware}: it is up but
     * cut off, and goes on believing it leads for a while.
     */
    private void depose(boolean unaware) {
        Member old = members.get(leader);
        if (old != null && !old.pending.isEmpty()) {
            int carried = rnd.nextInt(old.pending.size() + 1);
            for (int i = 0; i < carried; i++) commit(old.pending.get(i).bytes, term);
            List<Proposal> all = new ArrayList<>(old.pending);
            old.pending.clear();
            for (Proposal p : all) p.promise.fail(new CairnException(Status.UNAVAILABLE, dev.cairn.core.proto.MasterProtocol.LEADERSHIP_LOST
                    + ": deposed before the entry committed"));
        }
        if (unaware && old != null) {
            staleLeader = leader;
            staleSince = sim.now();
        }
        leader = null;
        cutOffSince = -1;
        if (!unaware) for (Member m : members.values()) m.tell(role(m.host));
    }

    private void elect() {
        electionScheduled = false;
        if (leader != null) return;
        List<String> candidates = new ArrayList<>();
        for (Map.Entry<String, Member> e : members.entrySet()) {
            // a member whose store is behind the purged log has no log to win a vote with
            if (!e.getKey().equals(staleLeader) && e.getValue().applied >= purged && majorityAround(hosts.get(e.getKey()))) candidates.add(e.getKey());
        }
        if (candidates.isEmpty()) return; // the next tick tries again
        term++;
        elections++;
        leader = candidates.get(rnd.nextInt(candidates.size()));
        cutOffSince = -1;
        for (Member m : members.values()) if (!m.host.equals(staleLeader)) m.tell(role(m.host));
    }

    private ReplicatedLog.Role role(String host) {
        if (host.equals(leader) || host.equals(staleLeader)) return new ReplicatedLog.Role(true, term, hosts.get(host).address());
        return new ReplicatedLog.Role(false, term, leader == null ? null : hosts.get(leader).address());
    }

    private void commit(byte[] bytes, long entryTerm) {
        Entry e = new Entry(entryTerm, bytes);
        committed.add(e);
        long index = committed.size();
        for (BiConsumer<Long, Entry> l : commitListeners) l.accept(index, e);
    }

    private void scheduleReplication() {
        if (replicationScheduled) return;
        replicationScheduled = true;
        sim.at(between(MIN_REPLICATE_NANOS, MAX_REPLICATE_NANOS), null, Simulation.Kind.TIMER, 0x7A3L, this::replicate);
    }

    private void replicate() {
        replicationScheduled = false;
        Member m = leader == null ? null : members.get(leader);
        if (m == null || m.pending.isEmpty()) return;
        if (!majorityAround(hosts.get(leader))) {
            sim.at(TICK_NANOS, null, Simulation.Kind.TIMER, 0x7A4L, () -> { if (!m.pending.isEmpty()) scheduleReplication(); });
            return;
        }
        for (Proposal p : m.pending) {
            commit(p.bytes, term);
            m.awaitingApply.put((long) committed.size(), p.promise);
        }
        m.pending.clear();
        deliverAll();
    }

    /** Members snapshot what they applied; the log is purged behind every master's latest snapshot. */
    private void purge() {
        for (Member m : members.values()) m.maybeSnapshot();
        long upTo = Long.MAX_VALUE;
        // a master that is down does not hold the purge back (Ratis may purge past a follower it has not heard from:
        // behind a snapshot, as far as its own setting lets it), so one that comes back late installs a snapshot over
        // the store it has, not only over an empty one
        for (String h : hosts.keySet()) if (healthy(hosts.get(h))) upTo = Math.min(upTo, snapshotted.getOrDefault(h, 0L));
        if (upTo != Long.MAX_VALUE && upTo > purged) purged = upTo;
    }

    private void deliverAll() {
        for (Member m : members.values()) m.catchUp();
    }

    private record Proposal(byte[] bytes, Promise<Void> promise) {}

    /** One incarnation of a master's replica in the group. */
    private final class Member implements ReplicatedLog {
        final String host;
        Listener listener;
        long applied;
        boolean delivering;
        boolean snapshotting;
        /** When a snapshot install began (-1: none under way). */
        long installingSince = -1;
        boolean stopped;
        /** The incarnation of the host this member belongs to: a restarted host's tasks are never this member's. */
        final int incarnation;
        ReplicatedLog.Role told;
        /** When the last role notice is delivered: the next one comes after it. */
        private long lastNoticeAt;
        final List<Proposal> pending = new ArrayList<>();
        /** Committed index -> the promise of an entry this member proposed, completed once it applies it. */
        final Map<Long, Promise<Void>> awaitingApply = new HashMap<>();
        /** Read index -> confirmations of leadership waiting for this member to apply up to it. */
        final TreeMap<Long, List<Promise<Void>>> readsWaiting = new TreeMap<>();

        Member(String host) {
            this.host = host;
            this.incarnation = hosts.get(host).incarnation();
        }

        /**
         * Stopped, or its process gone: a crash does not stop a member, and between a host's restart and its new
         * replica's start the old member is still the one listed (seed 68: it delivered entries into the wiped
         * store of the new incarnation).
         */
        boolean gone() {
            SimHost h = simHost();
            return stopped || !h.isUp() || h.incarnation() != incarnation;
        }

        private SimHost simHost() { return hosts.get(host); }

        @Override public void start(long appliedTerm, long appliedIndex, Listener l) {
            if (appliedIndex > committed.size()) {
                sim.violation("raft", host + " holds log entry " + appliedIndex + " but only " + committed.size() + " committed");
            }
            if (appliedIndex < snapshotted.getOrDefault(host, 0L)) {
                sim.violation("raft", host + "'s store holds the log up to entry " + appliedIndex + ", behind its own snapshot at entry "
                        + snapshotted.get(host) + " (a snapshot must leave the store durable up to its index: the log behind it is purged)");
            }
            listener = l;
            applied = appliedIndex;
            members.put(host, this);
            // a leader that restarted before anyone noticed it went down comes back a follower
            if (host.equals(leader)) depose(false);
            if (host.equals(staleLeader)) staleLeader = null;
            ensureTicking();
            tell(role(host));
            catchUp();
        }

        @Override public java.util.List<dev.cairn.core.env.Address> members() {
            java.util.List<dev.cairn.core.env.Address> out = new ArrayList<>();
            for (SimHost h : hosts.values()) out.add(h.address());
            return out;
        }

        /** The simulated group's membership is fixed (its hosts); a change is refused, never half done. */
        @Override public Promise<java.util.List<dev.cairn.core.env.Address>> changeMembers(dev.cairn.core.env.Address client, boolean add) {
            return Promise.failed(new CairnException(Status.BAD_REQUEST, "the simulated master group's membership is fixed"));
        }

        @Override public Promise<Void> propose(byte[] entry) {
            if (gone() || !(host.equals(leader) || host.equals(staleLeader)) || members.get(host) != this) {
                return Promise.failed(new CairnException(Status.NOT_LEADER, host + " does not lead"));
            }
            Promise<Void> p = new Promise<>();
            pending.add(new Proposal(entry, p));
            if (host.equals(leader)) scheduleReplication(); // a stale leader's proposals never commit
            return p;
        }

        /**
         * Raft's ReadIndex: the index committed now is noted, a heartbeat round (a replication delay) shows whether this
         * member still leads the same term with a majority around it, and the answer waits until it has applied up to
         * that index. A leader cut off from the majority — one that believes it leads while another was elected (the
         * group's stale leader) included — is refused: its round would find no majority.
         */
        @Override public Promise<Void> confirmLeadership() {
            if (gone() || !host.equals(leader) || members.get(host) != this) {
                return Promise.failed(new CairnException(Status.NOT_LEADER, host + " cannot show it leads"));
            }
            long asked = term;
            long readIndex = committed.size();
            Promise<Void> p = new Promise<>();
            sim.at(between(MIN_REPLICATE_NANOS, MAX_REPLICATE_NANOS), simHost(), Simulation.Kind.TASK, 0x7ABL, () -> {
                if (gone()) return; // the process is gone: nobody waits on the answer
                if (term != asked || !host.equals(leader) || !majorityAround(simHost())) {
                    p.fail(new CairnException(Status.NOT_LEADER, host + " cannot show it leads term " + asked));
                } else if (applied >= readIndex) {
                    p.complete(null);
                } else {
                    readsWaiting.computeIfAbsent(readIndex, k -> new ArrayList<>()).add(p);
                    catchUp();
                }
            });
            return p;
        }

        @Override public void stop() {
            stopped = true;
            if (members.get(host) == this) members.remove(host);
        }

        void tell(ReplicatedLog.Role r) {
            if (r.equals(told)) return;
            told = r;
            SimHost h = simHost();
            // notices arrive in the order they were given, as the real log's do (posted to the node's loop in turn):
            // a newer notice overtaking an older one left a just-elected leader told it had lost the leadership of
            // an older term, and the group without a leader for good (group seed 396)
            long at = Math.max(sim.now() + between(MIN_NOTICE_NANOS, MAX_NOTICE_NANOS), lastNoticeAt + 1);
            lastNoticeAt = at;
            sim.at(at - sim.now(), h, Simulation.Kind.TASK, 0x7A5L, () -> {
                if (gone()) return;
                if (!r.leads()) failPending();
                listener.roleChanged(r);
            });
        }

        private void failPending() {
            List<Promise<Void>> reads = new ArrayList<>();
            for (List<Promise<Void>> l : readsWaiting.values()) reads.addAll(l);
            readsWaiting.clear();
            for (Promise<Void> r : reads) r.fail(new CairnException(Status.NOT_LEADER, host + " lost the leadership before it caught up"));
            List<Proposal> all = new ArrayList<>(pending);
            pending.clear();
            for (Proposal p : all) p.promise.fail(new CairnException(Status.UNAVAILABLE, dev.cairn.core.proto.MasterProtocol.LEADERSHIP_LOST + " (" + host
                    + ") before the entry committed"));
        }

        /**
         * Applies, on this member's host, the committed entries it does not hold yet, in order: only while it
         * hears from the leader (a member cut off from it, a deposed leader included, learns nothing new).
         */
        void catchUp() {
            if (gone()) return;
            if (delivering || applied >= committed.size()) return;
            if (leader == null || !(host.equals(leader) || reach(simHost(), hosts.get(leader)))) return;
            if (applied < purged) {
                install();
                return;
            }
            delivering = true;
            sim.at(between(MIN_NOTICE_NANOS, MAX_NOTICE_NANOS), simHost(), Simulation.Kind.TASK, 0x7A6L, () -> {
                delivering = false;
                if (gone()) return;
                while (applied < committed.size()) {
                    long index = applied + 1;
                    Entry e = committed.get((int) index - 1);
                    listener.apply(e.term(), index, e.bytes());
                    applied = index;
                    Promise<Void> p = awaitingApply.remove(index);
                    if (p != null) p.complete(null);
                }
                while (!readsWaiting.isEmpty() && readsWaiting.firstKey() <= applied) {
                    for (Promise<Void> r : readsWaiting.pollFirstEntry().getValue()) r.complete(null);
                }
            });
        }

        /** Every {@link #PURGE_GAP} entries: the store made durable and its view taken, as a snapshot would be. */
        void maybeSnapshot() {
            if (snapshotting || gone() || !healthy(simHost()) || applied - snapshotted.getOrDefault(host, 0L) < PURGE_GAP) return;
            snapshotting = true;
            sim.at(between(MIN_NOTICE_NANOS, MAX_NOTICE_NANOS), simHost(), Simulation.Kind.TASK, 0x7A9L, () -> {
                if (gone()) return;
                long index = applied;
                listener.snapshot().onComplete((view, e) -> {
                    snapshotting = false;
                    if (e != null) return;
                    view.close();
                    if (!gone()) snapshotted.merge(host, index, Math::max);
                });
            });
        }

        /**
         * The entries this member lacks are purged: the leader's replica snapshots its state (durable first), and
         * the snapshot is installed here; the log then follows from the snapshot's index.
         */
        private void install() {
            if (installingSince >= 0 && sim.now() - installingSince < INSTALL_RETRY_NANOS) return;
            Member from = members.get(leader);
            if (from == null || from == this || from.gone() || from.applied < purged) return;
            installingSince = sim.now();
            long started = installingSince;
            SimHost src = hosts.get(from.host);
            sim.at(between(MIN_NOTICE_NANOS, MAX_NOTICE_NANOS), src, Simulation.Kind.TASK, 0x7A7L, () -> {
                if (from.gone()) return;
                long index = from.applied;
                long entryTerm = committed.get((int) index - 1).term();
                from.listener.snapshot().onComplete((view, e) -> {
                    if (e != null) return; // the next catch-up after the retry delay tries again
                    sim.at(between(MIN_REPLICATE_NANOS, MAX_REPLICATE_NANOS), simHost(), Simulation.Kind.TASK, 0x7A8L, () -> {
                        try {
                            if (gone() || installingSince != started || applied >= index) return;
                            listener.install(entryTerm, index, sink -> view.scan((k, v) -> {
                                sink.accept(k, v);
                                return true;
                            }));
                            applied = index;
                            installs++;
                                } finally {
                            view.close();
                            if (installingSince == started) installingSince = -1;
                        }
                        catchUp();
                    });
                });
            });
        }
    }
}
