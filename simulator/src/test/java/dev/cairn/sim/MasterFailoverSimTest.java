package dev.cairn.sim;

import static org.assertj.core.api.Assertions.assertThat;

import dev.cairn.core.async.Promise;
import dev.cairn.core.proto.StorageClass;
import dev.cairn.sim.runtime.SimHost;
import java.util.List;
import org.junit.jupiter.api.Test;

/** What a client sees of a master group's failover, driven step by step. */
class MasterFailoverSimTest extends ClusterScenario {
    /**
     * A new leader learns where parts are only as chunkservers register. A read of an erasure-coded file asked of it
     * while one part's holder has reported must wait ("the leader is starting") rather than be handed one part of the
     * k it needs and fail (chaos leader-kill seed 12: "only 1 of the 3 parts of chunk 240 are readable").
     */
    @Test void anErasureCodedReadDuringANewLeadersGraceWaitsForEnoughPartsRatherThanFailing() {
        cluster(new SimCluster(world, 3, List.of("disk0"), SimCluster.CAPACITY_BYTES, List.of(), 1, false, 3));
        await(30, () -> c.servingMaster() != null, "a serving leader");
        byte[] data = write("/ec", StorageClass.ec(2, 1), 300_000, 7);
        SimHost old = c.master();
        // two of the three chunkservers cannot reach any master: the next leader hears from one part's holder only
        for (SimHost m : c.masters()) for (SimHost cs : c.chunkservers().subList(1, 3)) world.network().partition(cs, m, true);
        old.crash();
        await(30, () -> c.servingMaster() != null && c.master() != old, "a new leader");
        assertThat(status().grace()).as("the new leader is in its start-up grace").isTrue();
        // the partition heals 5 s into the read, which meanwhile must wait, not fail
        run(() -> {
            c.client().env().scheduler().schedule(5 * SECOND, () -> world.network().healPartitions());
            return Promise.completed(null);
        });
        assertThat(read("/ec")).isEqualTo(data);
    }
}
