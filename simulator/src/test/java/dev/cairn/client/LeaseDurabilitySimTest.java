package dev.cairn.client;

import static org.assertj.core.api.Assertions.assertThat;

import dev.cairn.core.async.Promise;
import dev.cairn.core.proto.MasterProtocol.LeaseReply;
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
 * A new write lease bumps the version of every live copy. If that bump were not durable, losing power on
 * every copy before the next sync would bring them all back at the old version, stale against the
 * master's, and the prefix already acknowledged by an earlier sync would be unreadable.
 */
class LeaseDurabilitySimTest {
    final Simulation sim = new Simulation(3);
    final SimWorld world = new SimWorld(sim, false);
    final SimCluster cluster = new SimCluster(world, 3);

    <T> T run(Supplier<Promise<T>> op) {
        return sim.await(cluster.clientHost(), op, 120_000_000_000L);
    }

    @Test void anAcknowledgedPrefixSurvivesPowerLossOfEveryCopyRightAfterANewLease() {
        cluster.startAll();
        sim.runUntil(2_000_000_000L);
        CairnClient c = cluster.client();
        byte[] data = Oracle.content(77, 10_000);
        FileAttr attr = run(() -> c.create("/f", 128 << 10, StorageClass.replicated(3)));
        FileWriter w = c.writer(attr);
        run(() -> w.write(data).flatMap(v -> w.sync()));  // 10 000 bytes acknowledged at version v

        LeaseReply lease = run(() -> c.lease(attr.inode(), 0, List.of()));  // version v+1 on every copy
        assertThat(lease.chain()).hasSize(3);
        for (SimHost h : cluster.chunkservers()) h.powerLoss();
        for (SimHost h : cluster.chunkservers()) h.start();
        sim.runUntil(sim.now() + 3_000_000_000L);

        FileAttr now = run(() -> c.lookup("/f"));
        assertThat(now.size()).isEqualTo(10_000);
        byte[] back = run(() -> c.reader(now).readAll());
        assertThat(Arrays.equals(back, data)).as("acknowledged prefix reads back").isTrue();
        assertThat(sim.violations()).isEmpty();
    }
}
