package dev.cairn.sim;

import static org.assertj.core.api.Assertions.assertThat;

import dev.cairn.client.CairnClient;
import dev.cairn.client.ChunkSession;
import dev.cairn.client.Uncommitted;
import dev.cairn.core.async.Promise;
import dev.cairn.core.proto.StorageClass;
import dev.cairn.core.proto.Types.FileAttr;
import dev.cairn.sim.runtime.SimHost;
import dev.cairn.sim.runtime.SimWorld;
import dev.cairn.sim.runtime.Simulation;
import dev.cairn.sim.workload.Oracle;
import java.util.Arrays;
import java.util.function.Supplier;
import org.junit.jupiter.api.Test;

/**
 * A copy of the chain that lost the chunk (its host lost power before the chunk was ever synced there, so the file
 * is gone) answers NOT_FOUND; the writer leaves it out under a new lease and sends what is not yet durable again,
 * as for any failed copy. It failed the writes instead (an NFS client saw its WRITE fail after a chunkserver restart:
 * the sweep's NFS lane, 10 s seed 154).
 */
class ChainCopyLostSimTest {
    static final long SECOND = 1_000_000_000L;
    static final int CHUNK = 128 << 10;

    final Simulation sim = new Simulation(13);
    final SimWorld world = new SimWorld(sim, false);
    final SimCluster cluster = new SimCluster(world, 4);

    <T> T run(Supplier<Promise<T>> op) { return sim.await(cluster.clientHost(), op, 120 * SECOND); }

    @Test void aCopyThatLostAnUnsyncedChunkIsLeftOutAndTheWritesGoOn() {
        cluster.startAll();
        sim.runUntil(2 * SECOND);
        CairnClient c = cluster.client();
        FileAttr file = run(() -> c.create("/f", CHUNK, StorageClass.replicated(2)));
        Uncommitted mine = new Uncommitted();
        ChunkSession s = c.session(file, 0, mine);
        byte[] first = Oracle.content(1, 5000);
        run(() -> s.write(0, first)); // taken by both copies, synced by neither

        SimHost holder = null;
        for (SimHost h : cluster.chunkservers()) if (!GroundTruth.chunkIds(h, "disk0").isEmpty()) { holder = h; break; }
        assertThat(holder).as("a copy of the chunk").isNotNull();
        holder.powerLoss(); // the chunk file was never synced there: it is gone
        holder.start();
        sim.runUntil(sim.now() + 3 * SECOND);
        assertThat(GroundTruth.chunkIds(holder, "disk0")).as("the power loss took the unsynced chunk").isEmpty();

        byte[] second = Oracle.content(2, 3000);
        run(() -> s.write(first.length, second).flatMap(v -> s.sync()));
        run(() -> c.commitLength(file.inode(), first.length + second.length, mine));

        byte[] expected = Arrays.copyOf(first, first.length + second.length);
        System.arraycopy(second, 0, expected, first.length, second.length);
        assertThat(run(() -> c.reader(run(() -> c.lookup("/f"))).readAll())).isEqualTo(expected);
    }
}
