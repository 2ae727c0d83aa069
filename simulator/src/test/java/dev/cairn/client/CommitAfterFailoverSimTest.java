package dev.cairn.client;

import static org.assertj.core.api.Assertions.assertThat;

import dev.cairn.core.async.Promise;
import dev.cairn.core.proto.StorageClass;
import dev.cairn.core.proto.Types.FileAttr;
import dev.cairn.sim.SimCluster;
import dev.cairn.sim.runtime.SimHost;
import dev.cairn.sim.runtime.SimWorld;
import dev.cairn.sim.runtime.Simulation;
import dev.cairn.sim.workload.Oracle;
import java.util.Arrays;
import java.util.List;
import java.util.function.Supplier;
import org.junit.jupiter.api.Test;

/**
 * A write whose lease was granted by one leader and whose commit reaches the next. The new leader never knew the
 * lease's chain, and the copies registered with it in the middle of the write, shorter than what the commit covers.
 * The writer commits a version only once its upload is durable on every copy of the lease's chain, and only the
 * chain's copies are at the lease's version (a copy that fails is left out by a new lease, at a new version): a
 * copy at the committed version holds every acknowledged byte, whatever length it registered with. The new leader
 * once judged every such copy short, marked them all stale, and counted the chunk lost — its acknowledged bytes
 * unreadable until the servers' next inventory (`./cairn chaos --scenario partition --seed 10`: "the master counts
 * 1 chunks lost", one read failing, nothing lost after a restart).
 */
class CommitAfterFailoverSimTest {
    final Simulation sim = new Simulation(5);
    final SimWorld world = new SimWorld(sim, false);
    final SimCluster cluster = new SimCluster(world, 3, List.of("disk0"), 1L << 40, List.of(), 1, false, 3);

    <T> T run(Supplier<Promise<T>> op) {
        return sim.await(cluster.clientHost(), op, 120_000_000_000L);
    }

    void await(int seconds, java.util.function.BooleanSupplier done, String what) {
        long deadline = sim.now() + seconds * 1_000_000_000L;
        while (!done.getAsBoolean()) {
            assertThat(sim.now()).as("waiting for " + what).isLessThan(deadline);
            sim.runUntil(sim.now() + 100_000_000L);
        }
    }

    @Test void copiesRegisteredMidWriteWithANewLeaderAreCurrentOnceTheWriterCommits() {
        cluster.startAll();
        await(30, () -> cluster.servingMaster() != null, "a serving leader");
        CairnClient c = cluster.client();
        await(30, () -> !run(() -> c.status()).grace(), "every chunkserver registered");
        byte[] first = Oracle.content(91, 40_000), second = Oracle.content(92, 60_000);
        FileAttr attr = run(() -> c.create("/f", 1 << 20, StorageClass.replicated(3)));
        FileWriter w = c.writer(attr);
        run(() -> w.write(first)); // under a lease of the first leader; nothing committed yet

        SimHost old = cluster.master();
        old.crash();
        await(30, () -> cluster.servingMaster() != null && cluster.master() != old, "a new leader");
        await(30, () -> !run(() -> c.status()).grace(), "every chunkserver registered with the new leader");

        run(() -> w.write(second).flatMap(v -> w.sync())); // longer copies, committed at the new leader
        FileAttr now = run(() -> c.lookup("/f"));
        assertThat(now.size()).isEqualTo(first.length + second.length);
        byte[] back = run(() -> c.reader(now).readAll()); // before any inventory: "no readable copy (0 copies known)"
        byte[] want = Arrays.copyOf(first, first.length + second.length);
        System.arraycopy(second, 0, want, first.length, second.length);
        assertThat(Arrays.equals(back, want)).as("the acknowledged bytes read back at once").isTrue();
        sim.runUntil(sim.now() + 3_000_000_000L); // planner passes, no inventory yet
        var status = run(() -> c.status());
        assertThat(status.lost()).as("a chunk whose every copy holds the acknowledged bytes").isZero();
        assertThat(status.staleCopies()).as("copies of the chain the writer synced").isZero();
        assertThat(status.underGoal()).isZero();
        assertThat(sim.violations()).isEmpty();
    }
}
