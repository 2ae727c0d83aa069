package dev.cairn.sim;

import static org.assertj.core.api.Assertions.assertThat;

import dev.cairn.chunkserver.ChunkServer;
import dev.cairn.core.proto.MasterProtocol.ChunkInfo;
import dev.cairn.core.proto.MasterProtocol.ServerStatus;
import dev.cairn.core.proto.StorageClass;
import dev.cairn.core.proto.Types.DiskReport;
import dev.cairn.core.proto.Types.DiskState;
import dev.cairn.sim.runtime.SimHost;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Disk faults end to end: a stalled disk (reads hedge past it; the master judges it slow and places
 * nothing new on it), a dead disk (its chunks are reported lost and repaired while the server's other
 * disk keeps serving), a failed fsync (the write goes elsewhere), a full disk (no new chunks, nothing
 * lost) and a new, empty host (filled until usage is even).
 */
class DiskHealthSimTest extends ClusterScenario {

    DiskState diskState(String server, String disk) {
        for (ServerStatus s : status().servers()) {
            if (!s.id().equals(server)) continue;
            for (DiskReport d : s.disks()) if (d.name().equals(disk)) return d.state();
        }
        return null;
    }

    @Test void aStalledDiskDelaysNoReadAndIsJudgedSlowAndAvoided() {
        cluster(4);
        byte[] data = write("/f", StorageClass.replicated(3), 4 * CHUNK, 11);
        // the first copy listed for every chunk is the one a reader tries first: stall the disk under it
        String victim = current(info("/f").chunks().get(0)).get(0);
        host(victim).stallDisk("disk0", 3600 * SECOND);
        long start = sim.now();
        assertThat(Arrays.equals(read("/f"), data)).isTrue();
        assertThat(sim.now() - start).as("read time with a stalled disk (hedged)").isLessThan(10 * SECOND);

        await(30, () -> diskState(victim, "disk0") == DiskState.SLOW, victim + "'s disk judged slow");
        // new chunks go elsewhere at once, so writes do not wait on the stalled disk
        start = sim.now();
        byte[] more = write("/g", StorageClass.replicated(3), 2 * CHUNK, 12);
        assertThat(sim.now() - start).as("write time after the verdict").isLessThan(10 * SECOND);
        for (ChunkInfo ch : info("/g").chunks()) assertThat(current(ch)).doesNotContain(victim).hasSize(3);
        assertThat(Arrays.equals(read("/g"), more)).isTrue();
    }

    @Test void aDeadDiskLosesOnlyItsChunksWhichAreRepaired() {
        cluster(new SimCluster(world, 4, List.of("disk0", "disk1"), SimCluster.CAPACITY_BYTES));
        byte[] data = write("/f", StorageClass.replicated(3), 8 * CHUNK, 13);
        String victim = current(info("/f").chunks().get(0)).get(0);
        ChunkServer server = (ChunkServer) host(victim).node();
        int before = server.chunkCount();
        host(victim).killDisk("disk0");
        // nobody has to touch the disk for this to be noticed: the scrubber reads it
        await(120, () -> diskState(victim, "disk0") == DiskState.FAILED, victim + "'s disk0 reported failed");
        int after = server.chunkCount();
        assertThat(after).as("copies left on " + victim + "'s other disk").isPositive().isLessThan(before);
        awaitChunks("/f", 200, chunks -> exactly(chunks, 3), "every chunk back at three copies");
        assertThat(diskState(victim, "disk1")).isEqualTo(DiskState.OK);
        assertThat(Arrays.equals(read("/f"), data)).isTrue();
        assertThat(host(victim).isUp()).as("the server stays up").isTrue();
    }

    @Test void aFailedFsyncFailsTheDiskAndTheWriteStillCompletes() {
        cluster(4);
        host("cs1").failSyncs("disk0", 1);
        host("cs2").failSyncs("disk0", 1);
        byte[] data = write("/f", StorageClass.replicated(2), 3 * CHUNK, 14);
        assertThat(Arrays.equals(read("/f"), data)).isTrue();
        await(5, () -> diskState("cs1", "disk0") == DiskState.FAILED || diskState("cs2", "disk0") == DiskState.FAILED, "a disk failed by its fsync");
        for (ChunkInfo ch : info("/f").chunks()) {
            for (String s : current(ch)) {
                assertThat(diskState(s, "disk0")).as("a copy is only on a disk that did not fail").isNotEqualTo(DiskState.FAILED);
            }
        }
        awaitChunks("/f", 200, chunks -> exactly(chunks, 2), "two copies per chunk");
    }

    @Test void aFullDiskTakesNoNewChunksAndKeepsItsOwn() {
        cluster(4);
        byte[] first = write("/a", StorageClass.replicated(3), 2 * CHUNK, 15);
        String full = current(info("/a").chunks().get(0)).get(0);
        int held = ((ChunkServer) host(full).node()).chunkCount();
        host(full).setDiskCapacity("disk0", (long) (held + 1) * (CHUNK + 8192));
        byte[] second = write("/b", StorageClass.replicated(3), 6 * CHUNK, 16);
        await(10, () -> diskState(full, "disk0") == DiskState.FULL, full + "'s disk reported full");
        byte[] third = write("/c", StorageClass.replicated(3), 2 * CHUNK, 17);
        for (ChunkInfo ch : info("/c").chunks()) assertThat(current(ch)).doesNotContain(full);
        awaitChunks("/b", 200, chunks -> exactly(chunks, 3), "every chunk of /b at three copies");
        assertThat(((ChunkServer) host(full).node()).chunkCount()).isGreaterThanOrEqualTo(held);
        assertThat(Arrays.equals(read("/a"), first)).isTrue();
        assertThat(Arrays.equals(read("/b"), second)).isTrue();
        assertThat(Arrays.equals(read("/c"), third)).isTrue();
    }

    /**
     * With no capacity configured a chunkserver advertises what its disks can hold (chunks plus free space), so
     * "used" means something and a full server is judged by it; a disk found full reopens only once its
     * filesystem has room again, not after any delete (the flag flipped between full and ok every few seconds).
     */
    @Test void aMeasuredCapacityIsTheDisksAndAFullDiskReopensOnlyWithRoom() {
        cluster(new SimCluster(world, 4, List.of("disk0"), 0));
        long cap = 60L * CHUNK;
        for (SimHost h : c.chunkservers()) h.setDiskCapacity("disk0", cap);
        write("/a", StorageClass.replicated(3), 4 * CHUNK, 19);
        sim.runUntil(sim.now() + 3 * SECOND); // heartbeats carry the measured capacity
        for (ServerStatus st : status().servers()) {
            assertThat((double) st.capacityBytes()).as(st.id() + " advertises its disk").isBetween(0.97 * cap, 1.03 * cap);
        }
        String full = current(info("/a").chunks().get(0)).get(0);
        int held = ((ChunkServer) host(full).node()).chunkCount();
        host(full).setDiskCapacity("disk0", (long) (held + 1) * (CHUNK + 8192));
        write("/b", StorageClass.replicated(3), 6 * CHUNK, 20);
        await(10, () -> diskState(full, "disk0") == DiskState.FULL, full + "'s disk reported full");
        run(() -> c.client().remove("/a")); // frees a few chunks there: not the room a disk reopens with
        sim.runUntil(sim.now() + 10 * SECOND);
        assertThat(diskState(full, "disk0")).isEqualTo(DiskState.FULL);
        host(full).setDiskCapacity("disk0", 1L << 40); // the operator made room
        await(5, () -> diskState(full, "disk0") == DiskState.OK, full + "'s disk open again");
    }

    @Test void aNewEmptyHostIsFilledUntilUsageIsEven() {
        long capacity = 40L * CHUNK;
        cluster(new SimCluster(world, 3, List.of("disk0"), capacity));
        byte[] data = write("/f", StorageClass.replicated(2), 24 * CHUNK, 18);
        sim.runUntil(sim.now() + 3 * SECOND); // heartbeats carry the new usage to the master
        SimHost fresh = c.addChunkserver();
        String id = fresh.name();
        await(300, () -> {
            double lo = 1, hi = 0;
            for (ServerStatus s : status().servers()) {
                double used = (double) s.usedBytes() / s.capacityBytes();
                lo = Math.min(lo, used);
                hi = Math.max(hi, used);
            }
            return status().servers().size() == 4 && hi - lo <= 0.05 + 1e-9 && status().overGoal() == 0 && status().moving() == 0;
        }, "usage within 5 points with " + id + " in");
        assertThat(((ChunkServer) fresh.node()).chunkCount()).as(status().toString()).isGreaterThanOrEqualTo(10);
        awaitChunks("/f", 60, chunks -> exactly(chunks, 2), "two copies per chunk");
        assertThat(Arrays.equals(read("/f"), data)).isTrue();
    }
}
