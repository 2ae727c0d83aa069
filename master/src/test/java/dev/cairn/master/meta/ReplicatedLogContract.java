package dev.cairn.master.meta;

import static org.assertj.core.api.Assertions.assertThat;

import dev.cairn.core.proto.CairnException;
import dev.cairn.core.proto.Status;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.Test;

/**
 * What every {@link ReplicatedLog} must do, whatever carries it: Apache Ratis on the real machine
 * ({@code RatisLogContractTest}) or the simulator's model ({@code SimRaftContractTest}). Each member's
 * {@link Recorder} checks, as entries arrive, that none is applied twice or skipped.
 */
public abstract class ReplicatedLogContract {
    /** A group of three members under test. */
    protected interface Harness extends AutoCloseable {
        /** Starts member {@code i} (again, after {@link #crash}) from what its recorder holds. */
        void start(int i) throws Exception;

        /** Member {@code i} stops at once (what it applied stays in its recorder, as in its store). */
        void crash(int i) throws Exception;

        /** Member {@code i} stops at once and its store and log are gone (its disk replaced); start it again with {@link #start}. */
        void wipe(int i) throws Exception;

        /** Entries committed before the log is surely purged behind them (its snapshot interval, with room). */
        int entriesToPurge();

        /** Proposes on member {@code i}'s own scheduler. */
        Outcome propose(int i, byte[] entry);

        /** Asks member {@code i}, on its own scheduler, to confirm it leads; the outcome also records how many entries it had applied then. */
        Outcome confirm(int i);

        Recorder recorder(int i);

        /** Waits (in real or simulated time) until {@code done} holds; fails naming {@code what} after a bound. */
        void await(String what, BooleanSupplier done);

        @Override void close() throws Exception;
    }

    protected abstract Harness harness() throws Exception;

    /** A proposal's outcome, once known. */
    public static final class Outcome {
        private boolean done;
        private Throwable error;

        private int appliedThen = -1;

        public synchronized void set(Throwable e) {
            done = true;
            error = e;
        }

        /** Set with the entries the member's recorder held when the outcome came. */
        public synchronized void set(Throwable e, Recorder r) {
            appliedThen = r.count();
            set(e);
        }

        public synchronized int appliedThen() { return appliedThen; }

        public synchronized boolean done() { return done; }

        public synchronized Throwable error() { return error; }
    }

    /**
     * A member's view: the entries it applied, in order, and the last role it heard. Indexes only grow (Raft's may
     * skip: a new leader's own first entry, configuration entries, carry no command); that none is skipped is
     * seen by comparing members' logs.
     */
    public static final class Recorder implements ReplicatedLog.Listener {
        private final List<String> applied = new ArrayList<>();
        private long lastTerm;
        private long lastIndex;
        private ReplicatedLog.Role role = ReplicatedLog.Role.UNKNOWN;
        private String error;

        @Override public synchronized void apply(long term, long index, byte[] entry) {
            if (index <= lastIndex && error == null) error = "entry " + index + " applied after " + lastIndex;
            if (term < lastTerm && error == null) error = "entry " + index + " of term " + term + " after term " + lastTerm;
            lastTerm = term;
            lastIndex = index;
            applied.add(new String(entry, StandardCharsets.UTF_8));
        }

        @Override public synchronized void roleChanged(ReplicatedLog.Role r) { role = r; }

        private int snapshots, installs;

        /** The recorded entries, keyed by position, as a store would hold them. */
        @Override public synchronized dev.cairn.core.async.Promise<dev.cairn.core.env.KvStore.View> snapshot() {
            snapshots++;
            java.util.TreeMap<byte[], byte[]> m = new java.util.TreeMap<>(java.util.Arrays::compareUnsigned);
            for (int i = 0; i < applied.size(); i++) m.put(java.nio.ByteBuffer.allocate(8).putLong(i).array(), entry(applied.get(i)));
            dev.cairn.core.testing.MemKv kv = new dev.cairn.core.testing.MemKv();
            dev.cairn.core.env.KvBatch b = new dev.cairn.core.env.KvBatch();
            m.forEach(b::put);
            kv.write(b, true);
            return dev.cairn.core.async.Promise.completed(kv.view());
        }

        @Override public synchronized void install(long term, long index, ReplicatedLog.StateReader state) {
            if (index <= lastIndex && error == null) error = "snapshot at " + index + " installed after entry " + lastIndex;
            List<String> got = new ArrayList<>();
            state.read((k, v) -> got.add(new String(v, StandardCharsets.UTF_8)));
            applied.clear();
            applied.addAll(got);
            lastTerm = term;
            lastIndex = index;
            installs++;
        }

        /** Snapshots installed here (the entries before them were purged from the log). */
        public synchronized int installs() { return installs; }

        /** A new, empty recorder (a wiped store). */
        public synchronized void wipe() {
            applied.clear();
            lastTerm = 0;
            lastIndex = 0;
        }

        public synchronized List<String> applied() { return List.copyOf(applied); }

        /** The last applied entry's index (what a store would record). */
        public synchronized long appliedIndex() { return lastIndex; }

        public synchronized int count() { return applied.size(); }

        public synchronized long appliedTerm() { return lastTerm; }

        public synchronized ReplicatedLog.Role role() { return role; }

        synchronized String error() { return error; }
    }

    protected static byte[] entry(String s) { return s.getBytes(StandardCharsets.UTF_8); }

    protected int leader(Harness h, int... among) {
        int[] found = {-1};
        h.await("a leader", () -> {
            for (int i : among) if (h.recorder(i).role().leads()) { found[0] = i; return true; }
            return false;
        });
        return found[0];
    }

    /** Proposes until one is accepted: a new leader may refuse until it is ready. */
    protected void commit(Harness h, int[] members, String e) {
        long deadline = System.nanoTime() + 120_000_000_000L;
        while (true) {
            int l = leader(h, members);
            Outcome o = h.propose(l, entry(e));
            h.await("the outcome of " + e, o::done);
            if (o.error() == null) return;
            assertThat(System.nanoTime() - deadline).as("%s never committed: %s", e, o.error()).isNegative();
        }
    }

    protected void allHold(Harness h, List<String> expected, int... members) {
        for (int i : members) {
            h.await("member " + i + " applied " + expected.size() + " entries", () -> h.recorder(i).count() >= expected.size());
            List<String> a = h.recorder(i).applied();
            assertThat(a.subList(0, expected.size())).as("member %d's log", i).isEqualTo(expected);
            assertThat(h.recorder(i).error()).as("member %d", i).isNull();
        }
    }

    @Test void committedEntriesAreAppliedOnceInTheSameOrderEverywhere() throws Exception {
        try (Harness h = harness()) {
            for (int i = 0; i < 3; i++) h.start(i);
            int l = leader(h, 0, 1, 2);
            List<String> want = new ArrayList<>();
            List<Outcome> outcomes = new ArrayList<>();
            for (int n = 0; n < 20; n++) {
                want.add("e" + n);
                outcomes.add(h.propose(l, entry("e" + n)));
            }
            for (Outcome o : outcomes) {
                h.await("a proposal's outcome", o::done);
                assertThat(o.error()).isNull();
            }
            // proposed back to back by one leader: committed in that order, after whatever the group committed first
            List<String> at = h.recorder(l).applied();
            List<String> ours = at.subList(at.size() - 20, at.size());
            assertThat(ours).isEqualTo(want);
            allHold(h, at, 0, 1, 2);
        }
    }

    /**
     * A leader confirms it leads, and by then has applied everything committed before it was asked (what a read after
     * the confirmation sees); a follower cannot confirm.
     */
    @Test void theLeaderConfirmsItLeadsWithEverythingCommittedAppliedAndAFollowerCannot() throws Exception {
        try (Harness h = harness()) {
            for (int i = 0; i < 3; i++) h.start(i);
            commit(h, new int[] {0, 1, 2}, "before");
            int l = leader(h, 0, 1, 2);
            List<Outcome> proposed = new ArrayList<>();
            for (int n = 0; n < 5; n++) proposed.add(h.propose(l, entry("r" + n)));
            for (Outcome o : proposed) h.await("a proposal's outcome", o::done);
            Outcome ok = h.confirm(l);
            h.await("the leader's confirmation", ok::done);
            assertThat(ok.error()).isNull();
            assertThat(ok.appliedThen()).as("entries applied when the confirmation completed").isGreaterThanOrEqualTo(h.recorder(l).count())
                    .isGreaterThanOrEqualTo(6);
            int f = (l + 1) % 3;
            h.await("the follower knows the leader", () -> h.recorder(f).role().term() > 0);
            Outcome no = h.confirm(f);
            h.await("the follower's refusal", no::done);
            assertThat(CairnException.statusOf(no.error())).isEqualTo(Status.NOT_LEADER);
        }
    }

    @Test void aFollowerRefusesAProposalAndNothingIsDone() throws Exception {
        try (Harness h = harness()) {
            for (int i = 0; i < 3; i++) h.start(i);
            int l = leader(h, 0, 1, 2);
            int f = (l + 1) % 3;
            h.await("the follower knows the leader", () -> h.recorder(f).role().term() > 0);
            Outcome o = h.propose(f, entry("refused"));
            h.await("the refusal", o::done);
            assertThat(CairnException.statusOf(o.error())).isEqualTo(Status.NOT_LEADER);
            commit(h, new int[] {0, 1, 2}, "after");
            int last = leader(h, 0, 1, 2);
            assertThat(h.recorder(last).applied()).doesNotContain("refused").contains("after");
        }
    }

    @Test void committedEntriesSurviveTheLeadersLossAndARestartedMemberCatchesUp() throws Exception {
        try (Harness h = harness()) {
            for (int i = 0; i < 3; i++) h.start(i);
            int l = leader(h, 0, 1, 2);
            for (int n = 0; n < 10; n++) commit(h, new int[] {l}, "before" + n);
            h.crash(l);
            int[] rest = l == 0 ? new int[] {1, 2} : l == 1 ? new int[] {0, 2} : new int[] {0, 1};
            int l2 = leader(h, rest);
            assertThat(l2).isNotEqualTo(l);
            for (int n = 0; n < 5; n++) commit(h, rest, "after" + n);
            List<String> log = h.recorder(l2).applied();
            assertThat(log).containsSubsequence("before0", "before9", "after0", "after4");
            allHold(h, log, rest);
            h.start(l);
            allHold(h, log, l);
        }
    }

    @Test void aMemberWhoseDiskWasReplacedCatchesUpByASnapshotOnceTheLogIsPurged() throws Exception {
        try (Harness h = harness()) {
            for (int i = 0; i < 3; i++) h.start(i);
            int l = leader(h, 0, 1, 2);
            int w = (l + 1) % 3;
            int[] all = {0, 1, 2};
            for (int n = 0; n < h.entriesToPurge(); n++) commit(h, all, "old" + n);
            allHold(h, h.recorder(l).applied(), all);
            h.wipe(w);
            for (int n = 0; n < h.entriesToPurge(); n++) commit(h, all, "new" + n);
            h.start(w);
            int l2 = leader(h, all);
            List<String> log = h.recorder(l2).applied();
            assertThat(log).containsSubsequence("old0", "new0", "new" + (h.entriesToPurge() - 1));
            allHold(h, log, all);
            assertThat(h.recorder(w).installs()).as("snapshots installed on the wiped member").isPositive();
            // and it follows the log after the snapshot
            commit(h, all, "last");
            allHold(h, h.recorder(leader(h, all)).applied(), all);
        }
    }
}
