package dev.cairn.client;

import static org.assertj.core.api.Assertions.assertThat;

import dev.cairn.core.async.Promise;
import dev.cairn.core.env.Address;
import dev.cairn.master.MasterReplica;
import dev.cairn.sim.SimCluster;
import dev.cairn.sim.runtime.SimHost;
import dev.cairn.sim.runtime.SimWorld;
import dev.cairn.sim.runtime.Simulation;
import java.util.List;
import java.util.function.Supplier;
import org.junit.jupiter.api.Test;

/**
 * A leader cut off from the other masters (clients still reach it) goes on believing it leads until its step-down
 * timeout, while the others elect a new leader that commits changes it never hears of. A read it answered from its
 * own state then would be stale: a file created, grown or replaced at the new leader — and acknowledged — would be
 * missing or old. So a master in a group answers a read only after confirming it still leads (Raft's ReadIndex,
 * {@code MetaLog.readBarrier}); the deposed one cannot, and the client's read goes on to the new leader.
 */
class DeposedLeaderReadSimTest {
    static final long SECOND = 1_000_000_000L;
    final Simulation sim = new Simulation(17);
    final SimWorld world = new SimWorld(sim, false);
    final SimCluster cluster = new SimCluster(world, 3, List.of("disk0"), 1L << 40, List.of(), 1, false, 3);

    <T> T run(SimHost on, Supplier<Promise<T>> op) { return sim.await(on, op, 120 * SECOND); }

    void await(int seconds, java.util.function.BooleanSupplier done, String what) {
        long deadline = sim.now() + seconds * SECOND;
        while (!done.getAsBoolean()) {
            assertThat(sim.now()).as("waiting for " + what).isLessThan(deadline);
            sim.runUntil(sim.now() + 10_000_000L);
        }
    }

    @Test void aLeaderCutOffFromTheOtherMastersAnswersNoReadFromItsOldState() {
        cluster.startAll();
        await(30, () -> cluster.servingMaster() != null, "a serving leader");
        CairnClient c = cluster.client();
        run(cluster.clientHost(), () -> c.mkdir("/before")); // the client talks to the leader
        SimHost old = cluster.master();

        for (SimHost m : cluster.masters()) if (m != old) world.network().partition(old, m, true);
        await(10, () -> cluster.raft().leader() != null && cluster.raft().leader() != old, "a new leader among the others");
        SimHost fresh = cluster.raft().leader();
        await(10, () -> ((MasterReplica) fresh.node()).serving(), "the new leader serving");
        // a second client that knows only the new leader makes a change there
        Address at = fresh.address();
        SimHost other = world.addHost("client2", new Address("client2", 7301), 0, env -> new CairnClient(env, List.of(at)));
        other.start();
        CairnClient c2 = (CairnClient) other.node();
        long made = run(other, () -> c2.mkdir("/after")).inode();

        assertThat(((MasterReplica) old.node()).serving()).as("the cut-off leader still believes it leads").isTrue();
        assertThat(run(cluster.clientHost(), () -> c.lookup("/after")).inode()).as("a lookup through the client that used the old leader").isEqualTo(made);
        assertThat(run(cluster.clientHost(), () -> c.list("/")).stream().map(e -> e.name()).toList()).contains("before", "after");
    }
}
