package dev.cairn.sim;

import static org.assertj.core.api.Assertions.assertThat;

import dev.cairn.client.CairnClient;
import dev.cairn.client.FileWriter;
import dev.cairn.core.async.Promise;
import dev.cairn.core.chunk.ChunkFormat;
import dev.cairn.core.proto.CairnException;
import dev.cairn.core.proto.Status;
import dev.cairn.core.proto.StorageClass;
import dev.cairn.core.proto.Types.FileAttr;
import dev.cairn.sim.runtime.SimHost;
import dev.cairn.sim.runtime.SimWorld;
import dev.cairn.sim.runtime.Simulation;
import dev.cairn.sim.workload.Oracle;
import java.util.Arrays;
import java.util.List;
import java.util.function.Supplier;
import org.junit.jupiter.api.Test;

/** Erasure-coded files end to end in the simulator: placement, degraded reads, refusals. */
class ErasureCodedFilesSimTest {
    static final int CHUNK = 1 << 20;

    final Simulation sim = new Simulation(8);
    final SimWorld world = new SimWorld(sim, false);

    SimCluster cluster(int chunkservers) {
        SimCluster c = new SimCluster(world, chunkservers);
        c.startAll();
        sim.runUntil(sim.now() + 2_000_000_000L);
        return c;
    }

    <T> T run(SimCluster c, Supplier<Promise<T>> op) {
        return sim.await(c.clientHost(), op, 600_000_000_000L);
    }

    Status failure(SimCluster c, Supplier<Promise<?>> op) {
        try {
            run(c, op::get);
            return Status.OK;
        } catch (CairnException e) {
            return e.status();
        }
    }

    FileAttr write(SimCluster c, String path, StorageClass cls, byte[] data) {
        CairnClient client = c.client();
        FileAttr attr = run(c, () -> client.create(path, CHUNK, cls));
        FileWriter w = client.writer(attr);
        run(c, () -> w.write(data).flatMap(v -> w.close()));
        return run(c, () -> client.lookup(path));
    }

    byte[] read(SimCluster c, String path) {
        CairnClient client = c.client();
        return run(c, () -> client.lookup(path).flatMap(a -> client.reader(a).readAll()));
    }

    @Test void ec83OnElevenServersReadsBackAfterAnyThreeAreDown() {
        SimCluster c = cluster(11);
        // two full chunks and a partial one: full stripes, a partial last stripe, a partial cell
        byte[] data = Oracle.content(83, 2 * CHUNK + 3 * 65536 + 12345);
        FileAttr attr = write(c, "/ec", StorageClass.ec(8, 3), data);
        assertThat(attr.size()).isEqualTo(data.length);
        assertThat(attr.storageClass()).isEqualTo(StorageClass.ec(8, 3));
        List<SimHost> hosts = c.chunkservers();
        int combinations = 0;
        for (int a = 0; a < 11; a++) {
            for (int b = a + 1; b < 11; b++) {
                for (int d = b + 1; d < 11; d++) {
                    for (int x : new int[] {a, b, d}) hosts.get(x).crash();
                    byte[] back = read(c, "/ec");
                    assertThat(Arrays.equals(back, data)).as("down: cs" + (a + 1) + ", cs" + (b + 1) + ", cs" + (d + 1)).isTrue();
                    for (int x : new int[] {a, b, d}) hosts.get(x).start();
                    sim.runUntil(sim.now() + 1_500_000_000L); // they register again
                    combinations++;
                }
            }
        }
        assertThat(combinations).isEqualTo(165);
        // four down is more than m: a clear error, never wrong bytes
        for (int x = 0; x < 4; x++) hosts.get(x).crash();
        assertThat(failure(c, () -> c.client().lookup("/ec").flatMap(a -> c.client().reader(a).readAll()))).isEqualTo(Status.UNAVAILABLE);
        assertThat(sim.violations()).isEmpty();
    }

    @Test void corruptPartsAreRebuiltFromTheOthersForEveryPairOfServers() {
        SimCluster c = cluster(6);
        List<SimHost> hosts = c.chunkservers();
        long chunkId = 0;
        for (int i = 0; i < 6; i++) {
            for (int j = i + 1; j < 6; j++) {
                byte[] data = Oracle.content(i * 6 + j, 300_000); // one chunk: two stripes of 4 cells
                write(c, "/f" + i + j, StorageClass.ec(4, 2), data);
                chunkId++; // one chunk per file, ids in order
                // silent corruption of the first cell of whatever parts these two servers hold
                for (int x : new int[] {i, j}) hosts.get(x).flipBit("disk0", ChunkFormat.fileName(chunkId), ChunkFormat.DATA_OFFSET + 100, 1);
                assertThat(read(c, "/f" + i + j)).as("corrupt on cs" + (i + 1) + " and cs" + (j + 1)).isEqualTo(data);
            }
        }
        assertThat(sim.violations()).isEmpty();
    }

    @Test void tooFewServersForTheClassIsAClearRefusal() {
        SimCluster c = cluster(3);
        CairnClient client = c.client();
        FileAttr attr = run(c, () -> client.create("/wide", CHUNK, StorageClass.ec(2, 2)));
        FileWriter w = client.writer(attr);
        try {
            run(c, () -> w.write(new byte[1000]).flatMap(v -> w.close()));
            throw new AssertionError("write should have been refused");
        } catch (CairnException e) {
            assertThat(e.status()).isEqualTo(Status.NO_SPACE);
            assertThat(e.getMessage()).contains("ec(2,2) needs 4 live chunkservers");
        }
    }

    @Test void aMidFileSyncOfAnErasureCodedFileIsRefused() {
        SimCluster c = cluster(4);
        CairnClient client = c.client();
        FileAttr attr = run(c, () -> client.create("/e", CHUNK, StorageClass.ec(2, 1)));
        FileWriter w = client.writer(attr);
        assertThat(failure(c, () -> w.write(new byte[10]).flatMap(v -> w.sync()))).isEqualTo(Status.BAD_REQUEST);
    }
}
