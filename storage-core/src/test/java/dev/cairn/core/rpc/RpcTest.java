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

/** A request delivered twice is handed to the node once; replies and other senders are not confused with it. */
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
}
