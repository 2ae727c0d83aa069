package dev.cairn.client;

import static org.assertj.core.api.Assertions.assertThat;

import dev.cairn.core.async.Promise;
import dev.cairn.core.chunk.ChunkFormat;
import dev.cairn.core.proto.Codec;
import dev.cairn.core.proto.StorageClass;
import dev.cairn.core.proto.Types.FileAttr;
import dev.cairn.sim.SimCluster;
import dev.cairn.sim.runtime.SimHost;
import dev.cairn.sim.runtime.SimWorld;
import dev.cairn.sim.runtime.Simulation;
import dev.cairn.sim.workload.Oracle;
import java.util.function.Supplier;
import org.junit.jupiter.api.Test;

/**
 * An erasure-coded chunk's upload made its parts durable and was never committed (the writer died, or its commit
 * was lost); nothing in the chunk was acknowledged. A second upload of the chunk must go through, on the very
 * servers holding the leftover parts when the class needs all of them. Each server refused the new part
 * ("durable bytes at v1: not replaced") and the master re-leased for ever (sim seed 1159 with three masters: an NFS
 * client's WRITE unanswered for 150 s).
 */
class EcUploadRetriedSimTest {
    static final long SECOND = 1_000_000_000L;
    static final int CHUNK = 128 << 10;

    final Simulation sim = new Simulation(14);
    final SimWorld world = new SimWorld(sim, false);
    final SimCluster cluster = new SimCluster(world, 3); // ec(2,1) takes every server

    <T> T run(Supplier<Promise<T>> op) { return sim.await(cluster.clientHost(), op, 120 * SECOND); }

    @Test void aSecondUploadReplacesDurableLeftoverPartsOfAChunkNothingWasAcknowledgedIn() {
        cluster.startAll();
        sim.runUntil(2 * SECOND);
        CairnClient c = cluster.client();
        FileAttr file = run(() -> c.create("/e", CHUNK, StorageClass.ec(2, 1)));
        byte[] abandoned = Oracle.content(1, CHUNK);
        run(() -> new ChunkUpload(c, file, 0, abandoned, Codec.MAX_DATA_BYTES, new Uncommitted()).run()); // durable, never committed
        for (SimHost h : cluster.chunkservers()) {
            assertThat(h.diskOrNull("disk0").durableFiles()).as("a durable leftover part on " + h.name())
                    .anyMatch(f -> ChunkFormat.chunkIdOf(f) >= 0);
        }

        byte[] data = Oracle.content(2, CHUNK - 777);
        Uncommitted mine = new Uncommitted();
        run(() -> new ChunkUpload(c, file, 0, data, Codec.MAX_DATA_BYTES, mine).run());
        run(() -> c.commitLength(file.inode(), data.length, mine));
        assertThat(run(() -> c.reader(run(() -> c.lookup("/e"))).readAll())).isEqualTo(data);
    }
}
