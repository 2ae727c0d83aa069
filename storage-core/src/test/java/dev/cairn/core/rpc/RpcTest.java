package dev.cairn.core.rpc;

import static org.assertj.core.api.Assertions.assertThat;

import dev.cairn.core.env.Address;
import dev.cairn.core.env.Clock;
import dev.cairn.core.env.Env;
import dev.cairn.core.env.KvStore;
import dev.cairn.core.env.Log;
import dev.cairn.core.env.Scheduler;
import dev.cairn.core.env.Transport;
import dev.cairn.core.env.Volume;
import dev.cairn.core.proto.Ack;
import dev.cairn.core.proto.MasterProtocol.DeleteChunk;
import java.util.SplittableRandom;
import java.util.random.RandomGenerator;
import org.junit.jupiter.api.Test;

/**
 * A request delivered twice is handed to the node once; replies and other senders are not confused with it.
 * A call ends exactly once: with its reply, or failed at its deadline, on a lost connection or at shutdown.
 */
class RpcTest {
    /** Only the random source is used by the inbound path. */
    static Env env() {
        RandomGenerator random = new SplittableRandom(1);
        return new Env() {
            @Override public String hostId() { return "test"; }
            @Override public Clock clock() { throw new UnsupportedOperationException(); }
            @Override public Scheduler scheduler() { throw new UnsupportedOperationException(); }
            @Override public RandomGenerator random() { return random; }
            @Override public Transport transport() { throw new UnsupportedOperationException(); }
            @Override public Volume volume(String name) { throw new UnsupportedOperationException(); }
            @Override public KvStore kv() { throw new UnsupportedOperationException(); }
            @Override public Log log(Class<?> owner) { throw new UnsupportedOperationException(); }
        };
    }

    final Address a = new Address("a", 1), b = new Address("b", 1);

    @Test void aRepeatedRequestIsConsumedOnlyTheSecondTime() {
        Rpc rpc = new Rpc(env());
        assertThat(rpc.onMessage(a, new DeleteChunk(7, 1, 1))).as("first delivery goes to the node").isFalse();
        assertThat(rpc.onMessage(a, new DeleteChunk(7, 1, 1))).as("the duplicate is dropped").isTrue();
        assertThat(rpc.onMessage(b, new DeleteChunk(7, 1, 1))).as("same id from another sender").isFalse();
        assertThat(rpc.onMessage(a, new DeleteChunk(8, 1, 1))).isFalse();
        assertThat(rpc.onMessage(a, Ack.ok(7))).as("a reply with no call pending is consumed, never treated as a request").isTrue();
    }

    @Test void aRequestIsADuplicateExactlyWhenItIsAmongTheLastRememberedOnes() {
        for (int seed = 0; seed < 20; seed++) {
            java.util.SplittableRandom r = new java.util.SplittableRandom(seed);
            Rpc rpc = new Rpc(env());
            java.util.ArrayDeque<Long> model = new java.util.ArrayDeque<>(); // ids remembered, oldest first
            for (int i = 0; i < 5000; i++) {
                long rid = 1 + r.nextInt(1500); // repeats within and beyond the window
                boolean duplicate = model.contains(rid);
                if (!duplicate) {
                    model.addLast(rid);
                    if (model.size() > Rpc.REMEMBERED_RIDS) model.removeFirst();
                }
                assertThat(rpc.onMessage(a, new DeleteChunk(rid, 1, 1))).as("seed %d, request %d (id %d)", seed, i, rid).isEqualTo(duplicate);
            }
        }
    }

    @Test void memoryPerSenderIsBoundedOldestForgottenFirst() {
        Rpc rpc = new Rpc(env());
        for (long rid = 1; rid <= Rpc.REMEMBERED_RIDS + 1; rid++) assertThat(rpc.onMessage(a, new DeleteChunk(rid, 1, 1))).isFalse();
        assertThat(rpc.onMessage(a, new DeleteChunk(Rpc.REMEMBERED_RIDS + 1, 1, 1))).as("recent id remembered").isTrue();
        assertThat(rpc.onMessage(a, new DeleteChunk(1, 1, 1))).as("oldest id forgotten").isFalse();
    }

    /** A node's clock, scheduler and outbox, run by hand: tasks run at exactly their time, in order. */
    static final class Manual {
        long now = 1_000;
        long seq;
        final java.util.TreeMap<long[], Runnable> tasks = new java.util.TreeMap<>((x, y) -> x[0] != y[0] ? Long.compare(x[0], y[0]) : Long.compare(x[1], y[1]));
        final java.util.List<dev.cairn.core.proto.Message> sent = new java.util.ArrayList<>();
        final Env env;

        Manual() {
            Env random = env();
            Clock clock = new Clock() {
                @Override public long nanoTime() { return now; }
                @Override public long wallMillis() { return now / 1_000_000; }
            };
            Scheduler scheduler = new Scheduler() {
                @Override public void execute(Runnable task) { schedule(0, task); }
                @Override public dev.cairn.core.env.Cancellable schedule(long delayNanos, Runnable task) {
                    long[] key = {now + Math.max(0, delayNanos), seq++};
                    tasks.put(key, task);
                    return () -> tasks.remove(key);
                }
            };
            Transport transport = new Transport() {
                @Override public void start(Address local, dev.cairn.core.env.MessageHandler h) { }
                @Override public void send(Address to, dev.cairn.core.proto.Message m) { sent.add(m); }
                @Override public void stop() { }
            };
            env = new Env() {
                @Override public String hostId() { return "manual"; }
                @Override public Clock clock() { return clock; }
                @Override public Scheduler scheduler() { return scheduler; }
                @Override public RandomGenerator random() { return random.random(); }
                @Override public Transport transport() { return transport; }
                @Override public Volume volume(String name) { throw new UnsupportedOperationException(); }
                @Override public KvStore kv() { throw new UnsupportedOperationException(); }
                @Override public Log log(Class<?> owner) { throw new UnsupportedOperationException(); }
            };
        }

        /** Runs every task due by {@code until}, in time order, then sets the clock to it. */
        void runUntil(long until) {
            while (!tasks.isEmpty() && tasks.firstKey()[0] <= until) {
                var e = tasks.pollFirstEntry();
                now = e.getKey()[0];
                e.getValue().run();
            }
            now = until;
        }
    }

    /** What became of one call, and when. */
    record Outcome(long at, String how) {}

    /**
     * Seeded sweep: calls with a few timeout values, answered (with the right type or a wrong one) before
     * or after their deadline or never, some peers' connections lost, then a shutdown. Each call must end
     * exactly once, the way and at the time a model of the contract says; a call is never failed early.
     */
    @Test void everyCallEndsOnceAsItsDeadlineReplyOrConnectionSays() {
        long[] timeouts = {1_000_000_000L, 3_000_000_000L, 250_000_000L};
        Address[] peers = {a, b, new Address("c", 1)};
        for (int s = 0; s < 200; s++) {
            final int seed = s;
            SplittableRandom r = new SplittableRandom(seed);
            Manual m = new Manual();
            Rpc rpc = new Rpc(m.env);
            java.util.Map<Long, Outcome> seen = new java.util.HashMap<>();
            java.util.Map<Long, Outcome> expected = new java.util.HashMap<>();
            java.util.Map<Long, Long> deadline = new java.util.HashMap<>();
            java.util.Map<Long, Address> peerOf = new java.util.HashMap<>();
            // planned events: {time, kind (0 reply, 1 wrong reply, 2 disconnect), rid or peer index}
            java.util.TreeMap<Long, long[]> plan = new java.util.TreeMap<>();
            int calls = 30 + r.nextInt(40);
            for (int i = 0; i < calls; i++) {
                m.runUntil(m.now + r.nextLong(400_000_000L)); // odd gaps: no event lands exactly on a deadline
                long timeout = timeouts[r.nextInt(timeouts.length)];
                Address to = peers[r.nextInt(peers.length)];
                long start = m.now;
                final long[] ridBox = {0};
                rpc.call(to, rid -> { ridBox[0] = rid; return new DeleteChunk(rid, 1, 1); }, Ack.class, timeout).onComplete((v, e) -> {
                    Outcome o = new Outcome(m.now, e == null ? "OK" : dev.cairn.core.proto.CairnException.statusOf(e).name());
                    assertThat(seen.put(ridBox[0], o)).as("seed %d: call %d ends once", seed, ridBox[0]).isNull();
                });
                long rid = ridBox[0];
                deadline.put(rid, start + timeout);
                peerOf.put(rid, to);
                int fate = r.nextInt(10);
                if (fate < 6) plan.put(start + 1 + 2 * r.nextLong(timeout), new long[] {0, rid}); // in time or late, never on the dot
                else if (fate < 7) plan.put(start + 1 + 2 * r.nextLong(timeout / 2), new long[] {1, rid});
                if (r.nextInt(20) == 0) plan.put(start + 1 + 2 * r.nextLong(timeout), new long[] {2, r.nextInt(peers.length)});
                // replay the planned events that are due before the next call
                for (var e = plan.firstEntry(); e != null && e.getKey() <= m.now + 400_000_000L; e = plan.firstEntry()) {
                    plan.pollFirstEntry();
                    m.runUntil(e.getKey());
                    long[] ev = e.getValue();
                    if (ev[0] == 2) {
                        rpc.onDisconnect(peers[(int) ev[1]]);
                        for (var d : peerOf.entrySet()) {
                            if (d.getValue().equals(peers[(int) ev[1]]) && !expected.containsKey(d.getKey()) && deadline.get(d.getKey()) > m.now) {
                                expected.put(d.getKey(), new Outcome(m.now, "UNAVAILABLE"));
                            }
                        }
                    } else {
                        long id = ev[1];
                        boolean inTime = m.now < deadline.get(id) && !expected.containsKey(id);
                        assertThat(rpc.onMessage(to, ev[0] == 0 ? Ack.ok(id) : new dev.cairn.core.proto.MasterProtocol.RegisterReply(id, dev.cairn.core.proto.Status.OK, java.util.List.of())))
                                .as("a reply is always consumed").isTrue();
                        if (inTime) expected.put(id, new Outcome(m.now, ev[0] == 0 ? "OK" : "BAD_REQUEST"));
                    }
                }
            }
            long shutdown = m.now + 1_000_000_001L;
            m.runUntil(shutdown);
            rpc.failAll("test over");
            for (long id : deadline.keySet()) {
                Outcome want = expected.getOrDefault(id, deadline.get(id) <= shutdown ? new Outcome(deadline.get(id), "UNAVAILABLE") : new Outcome(shutdown, "UNAVAILABLE"));
                assertThat(seen.get(id)).as("seed %d: call %d (deadline %d)", seed, id, deadline.get(id)).isEqualTo(want);
            }
            assertThat(rpc.inFlight()).isZero();
            assertThat(m.tasks).as("no timer left after shutdown").isEmpty();
            assertThat(m.sent).hasSize(deadline.size());
        }
    }

    /** Lanes keep a call answered in time only until they are swept: memory follows the calls pending, not the calls made. */
    @Test void answeredCallsDoNotPileUpBehindAStuckOne() {
        Manual m = new Manual();
        Rpc rpc = new Rpc(m.env);
        rpc.call(a, rid -> new DeleteChunk(rid, 1, 1), Ack.class, 60_000_000_000L); // never answered
        for (int i = 0; i < 100_000; i++) {
            long[] box = {0};
            rpc.call(b, rid -> { box[0] = rid; return new DeleteChunk(rid, 1, 1); }, Ack.class, 60_000_000_000L);
            rpc.onMessage(b, Ack.ok(box[0]));
        }
        assertThat(rpc.inFlight()).isEqualTo(1);
        assertThat(rpc.laneLength()).isLessThanOrEqualTo(2 + dev.cairn.core.async.InFlight.SLACK);
        assertThat(m.tasks).as("one timer for all of them").hasSize(1);
    }
}
