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

    /**
     * Parts longer than a piece are coded and sent a range of stripes at a time (`ChunkUpload`), every part's piece
     * of a range in turn. A part server that dies as the second range reaches it fails the attempt; the retry codes
     * everything again under a new lease, on the spare server. Read back whole, and degraded with each server down
     * (every stripe's parity decoded), the file must be what was written.
     */
    @Test void partsLongerThanAPieceAreCodedRangeByRangeAndCodedAgainAfterAFailure() {
        SimCluster c = cluster(4);
        int chunk = 8 << 20; // ec(2,1): parts of 4 MiB, four ranges of a MiB each
        CairnClient client = c.client();
        byte[] data = Oracle.content(21, 2 * chunk + 5 * 65536 + 777);
        SimHost[] victim = {null};
        sim.onDeliver((to, m) -> {
            if (victim[0] == null && m instanceof dev.cairn.core.proto.ChunkProtocol.WriteData w && w.offset() == 1 << 20) {
                victim[0] = to;
                to.crash(); // as the second range's first piece arrives: never written
            }
        });
        FileAttr attr = run(c, () -> client.create("/big", chunk, StorageClass.ec(2, 1)));
        FileWriter w = client.writer(attr);
        run(c, () -> w.write(data).flatMap(v -> w.close()));
        assertThat(victim[0]).as("a part server died mid-upload").isNotNull();
        assertThat(read(c, "/big")).as("read whole").isEqualTo(data);
        victim[0].start();
        sim.runUntil(sim.now() + 3_000_000_000L);
        for (SimHost down : c.chunkservers()) {
            down.crash();
            assertThat(Arrays.equals(read(c, "/big"), data)).as("read with " + down.name() + " down").isTrue();
            down.start();
            sim.runUntil(sim.now() + 1_500_000_000L);
        }
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

    /** The parts of every chunk on the hosts' disks, by part index (ground truth, not the master's view). */
    static java.util.Map<Integer, List<GroundTruth.Copy>> partsOnDisk(SimCluster c, long chunkId) {
        java.util.Map<Integer, List<GroundTruth.Copy>> out = new java.util.TreeMap<>();
        for (SimHost h : c.chunkservers()) {
            if (h.isLost()) continue;
            for (GroundTruth.Copy k : GroundTruth.copies(h)) {
                if (k.chunkId() == chunkId) out.computeIfAbsent(k.part(), p -> new java.util.ArrayList<>()).add(k);
            }
        }
        return out;
    }

    static SimHost holderOf(SimCluster c, long chunkId, int part) {
        String host = partsOnDisk(c, chunkId).get(part).get(0).host();
        return c.chunkservers().stream().filter(h -> h.name().equals(host)).findFirst().orElseThrow();
    }

    @Test void aPartialLastStripeIsStoredTrimmedReadDegradedAndRebuiltAtItsLength() {
        SimCluster c = cluster(7);
        int cell = dev.cairn.core.ec.Stripes.CELL;
        byte[] small = Oracle.content(1, 10_000); // part 0 and the parity hold 10,000 bytes; parts 1-3 nothing
        byte[] tail = Oracle.content(2, 4 * cell + cell + 100); // a full stripe, then a cell and a bit
        write(c, "/small", StorageClass.ec(4, 2), small);
        write(c, "/tail", StorageClass.ec(4, 2), tail);
        long[] ids = {1, 2};
        int[] sizes = {small.length, tail.length};
        for (int f = 0; f < 2; f++) {
            var parts = partsOnDisk(c, ids[f]);
            assertThat(parts.keySet()).containsExactly(0, 1, 2, 3, 4, 5);
            for (var e : parts.entrySet()) {
                GroundTruth.Copy k = e.getValue().get(0);
                assertThat(k.length()).as("chunk " + ids[f] + " part " + e.getKey()).isEqualTo(dev.cairn.core.ec.Stripes.partLength(sizes[f], 4, e.getKey()));
                assertThat(k.intact()).isTrue();
            }
        }
        // degraded: without part 0 and the first parity, /small decodes from three empty parts and one parity part
        SimHost p0 = holderOf(c, 1, 0), p4 = holderOf(c, 1, 4);
        p0.crash();
        p4.crash();
        assertThat(read(c, "/small")).isEqualTo(small);
        p4.start();
        // part 0 lost for good: the planner rebuilds it elsewhere from k others, at its length
        p0.destroy();
        long deadline = sim.now() + 120_000_000_000L;
        while (sim.now() < deadline && (partsOnDisk(c, 1).size() < 6 || partsOnDisk(c, 2).size() < 6)) sim.runUntil(sim.now() + 1_000_000_000L);
        for (int f = 0; f < 2; f++) {
            var parts = partsOnDisk(c, ids[f]);
            assertThat(parts.keySet()).as("chunk " + ids[f] + " rebuilt").containsExactly(0, 1, 2, 3, 4, 5);
            for (var e : parts.entrySet()) {
                for (GroundTruth.Copy k : e.getValue()) {
                    assertThat(k.length()).as("chunk " + ids[f] + " part " + e.getKey() + " on " + k.host())
                            .isEqualTo(dev.cairn.core.ec.Stripes.partLength(sizes[f], 4, e.getKey()));
                    assertThat(k.intact()).isTrue();
                }
            }
        }
        assertThat(read(c, "/small")).isEqualTo(small);
        assertThat(read(c, "/tail")).isEqualTo(tail);
        // and the rebuilt part serves a degraded read itself: two others down
        holderOf(c, 2, 1).crash();
        holderOf(c, 2, 5).crash();
        assertThat(read(c, "/tail")).isEqualTo(tail);
        assertThat(sim.violations()).isEmpty();
    }

    /**
     * A chunk coded over more bytes than are committed (the file was truncated since): a lost part is rebuilt as
     * the coding made it, not trimmed to the committed bytes, or the parity would no longer agree with it and
     * the next rebuild from it would decode garbage into committed bytes (sweep seed 3245 at 30 s).
     */
    @Test void aPartRebuiltAfterATruncateStillAgreesWithTheParity() {
        SimCluster c = cluster(6);
        byte[] data = Oracle.content(7, 124_826); // ec(3,1): parts of 65,536, 59,290, 0 and 65,536 bytes
        FileAttr f = write(c, "/t", StorageClass.ec(3, 1), data);
        CairnClient client = c.client();
        int cut = 93_660; // part 1 then commits only 28,124 of its bytes
        run(c, () -> client.setAttr(f.inode(), dev.cairn.core.proto.Types.AttrChange.NONE.withSize(cut)));
        long chunk = partsOnDisk(c, 1).isEmpty() ? 0 : 1;
        assertThat(chunk).as("the file's chunk is chunk 1").isEqualTo(1);
        for (int lost : new int[] {1, 0}) {
            holderOf(c, 1, lost).destroy();
            long deadline = sim.now() + 120_000_000_000L;
            while (sim.now() < deadline && partsOnDisk(c, 1).size() < 4) sim.runUntil(sim.now() + 1_000_000_000L);
            assertThat(partsOnDisk(c, 1).keySet()).as("part %d rebuilt", lost).containsExactly(0, 1, 2, 3);
        }
        assertThat(read(c, "/t")).isEqualTo(Arrays.copyOf(data, cut));
        assertThat(sim.violations()).isEmpty();
    }

    /** A class the cluster can never place is refused at create, at once, saying what it needs and what there is. */
    @Test void tooFewServersForTheClassIsAClearRefusal() {
        SimCluster c = cluster(3);
        CairnClient client = c.client();
        try {
            run(c, () -> client.create("/wide", CHUNK, StorageClass.ec(2, 2)));
            throw new AssertionError("the create should have been refused");
        } catch (CairnException e) {
            assertThat(e.status()).isEqualTo(Status.BAD_REQUEST);
            assertThat(e.getMessage()).contains("ec(2,2) needs 4 parts on distinct hosts, and this cluster has 3");
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
