package dev.cairn.sim;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.cairn.chunkserver.ChunkServer;
import dev.cairn.core.proto.CairnException;
import dev.cairn.core.proto.MasterProtocol.ChunkInfo;
import dev.cairn.core.proto.MasterProtocol.CopyInfo;
import dev.cairn.core.proto.StorageClass;
import dev.cairn.core.proto.Status;
import dev.cairn.sim.runtime.SimHost;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * Class rules end to end: the archive rule (an idle file is rewritten from replicas into erasure-coded
 * parts, a file written meanwhile is left alone) and the full-class rule (refuse, or overflow onto
 * unlabelled servers and move back once labelled space frees up).
 */
class StorageClassSimTest extends ClusterScenario {

    int storedCopies() {
        int n = 0;
        for (SimHost h : c.chunkservers()) n += ((ChunkServer) h.node()).chunkCount();
        return n;
    }

    static boolean allParts(List<ChunkInfo> chunks, int parts) {
        for (ChunkInfo ch : chunks) {
            Set<Integer> seen = new HashSet<>();
            Set<String> servers = new HashSet<>();
            for (CopyInfo copy : ch.copies()) {
                if (!copy.current() || !seen.add(copy.part()) || !servers.add(copy.serverId())) return false;
            }
            if (seen.size() != parts) return false;
        }
        return true;
    }

    @Test void anIdleFileMovesToItsArchiveClassAndReadsTheSame() {
        cluster(5);
        StorageClass hot = StorageClass.parse("replicated(2,archive=ec(3,2),after=60s)");
        run(() -> c.client().mkdir("/cold"));
        run(() -> c.client().setClass("/cold", hot));
        byte[] data = write("/cold/f", StorageClass.DEFAULT, 4 * CHUNK + 12345, 31); // inherits the rule
        assertThat(info("/cold/f").attr().storageClass()).isEqualTo(hot);
        List<Long> before = info("/cold/f").chunks().stream().map(ChunkInfo::chunkId).toList();
        sim.runUntil(sim.now() + 45 * SECOND);
        assertThat(info("/cold/f").attr().storageClass()).as("not idle for 60 s yet").isEqualTo(hot);
        await(120, () -> info("/cold/f").attr().storageClass().equals(StorageClass.ec(3, 2)), "/cold/f archived as ec(3,2)");
        List<ChunkInfo> chunks = info("/cold/f").chunks();
        assertThat(chunks).hasSize(before.size());
        for (ChunkInfo ch : chunks) assertThat(before).doesNotContain(ch.chunkId());
        awaitChunks("/cold/f", 60, cs -> allParts(cs, 5), "five parts per chunk on five servers");
        assertThat(Arrays.equals(read("/cold/f"), data)).isTrue();
        await(60, () -> storedCopies() == 5 * chunks.size(), "the old replicas deleted");
        // with two servers down the archived file still reads
        host(current(chunks.get(0)).get(0)).crash();
        host(current(chunks.get(0)).get(1)).crash();
        assertThat(Arrays.equals(read("/cold/f"), data)).isTrue();
    }

    /**
     * A class this cluster can never place (more copies or parts than it has chunkservers in distinct failure
     * domains, counting those down) is refused at once, as a bad request no client retries, naming what it
     * needs and what there is: at create, at a class change and at a write; a class that fits with servers down
     * is not refused, only waits. "replicated(0)" is not a class one can ask for.
     */
    @Test void aClassTheClusterCanNeverPlaceIsRefusedUpFront() {
        cluster(4);
        for (String cls : new String[] {"ec(4,1)", "replicated(5)", "replicated(2,disk=ssd)"}) {
            assertThatThrownBy(() -> run(() -> c.client().create("/never-" + cls.length(), CHUNK, StorageClass.parse(cls))))
                    .as(cls).isInstanceOfSatisfying(CairnException.class, e -> {
                        assertThat(e.status()).isEqualTo(Status.BAD_REQUEST);
                        assertThat(e.getMessage()).contains("this cluster has");
                    });
        }
        write("/fits", StorageClass.replicated(2), CHUNK, 54);
        assertThatThrownBy(() -> run(() -> c.client().setClass("/fits", StorageClass.replicated(6))))
                .isInstanceOfSatisfying(CairnException.class, e -> assertThat(e.status()).isEqualTo(Status.BAD_REQUEST));
        host("cs1").crash();
        host("cs2").crash();
        // four known hosts, two up: ec(2,2) can be placed once they are back, so it is not refused for good
        assertThat(run(() -> c.client().create("/waits", CHUNK, StorageClass.ec(2, 2))).storageClass()).isEqualTo(StorageClass.ec(2, 2));
        assertThatThrownBy(() -> StorageClass.parse("replicated(0)")).isInstanceOf(IllegalArgumentException.class);
    }

    @Test void aFullLabelledClassRefusesOrOverflowsAndMovesBack() {
        long capacity = 12L * CHUNK;
        cluster(new SimCluster(world, 4, List.of("disk0"), capacity, List.of("ssd", "ssd", "hdd", "hdd")));
        StorageClass strict = StorageClass.parse("replicated(2,disk=ssd)");
        StorageClass spill = StorageClass.parse("replicated(2,disk=ssd,full=overflow)");
        byte[] first = write("/a", strict, 12 * CHUNK, 51); // fills both ssd servers
        sim.runUntil(sim.now() + 3 * SECOND); // usage reaches the master
        assertThatThrownBy(() -> write("/refused", strict, CHUNK, 52))
                .isInstanceOfSatisfying(CairnException.class, e -> assertThat(e.status()).isEqualTo(Status.NO_SPACE));
        byte[] second = write("/b", spill, 3 * CHUNK, 53);
        for (ChunkInfo ch : info("/b").chunks()) assertThat(current(ch)).containsAnyOf("cs3", "cs4").doesNotContain("cs1", "cs2");
        // while the labelled servers are full the class is planned without its label (Master.asPlanned): the overflowed
        // copies count toward the goal; and the refused write's chunk, never committed and held nowhere, is not lost.
        // (This asserted "under goal > 0" and passed only because that chunk was counted lost and under goal.)
        assertThat(status().lost()).as("nothing acknowledged is missing").isZero();
        assertThat(status().underGoal()).as("overflowed copies count toward the goal while the label has no room").isZero();
        run(() -> c.client().remove("/a"));
        awaitChunks("/b", 200, chunks -> {
            for (ChunkInfo ch : chunks) if (!Set.copyOf(current(ch)).equals(Set.of("cs1", "cs2")) || ch.copies().size() != 2) return false;
            return true;
        }, "/b moved back onto the ssd servers");
        assertThat(Arrays.equals(read("/b"), second)).isTrue();
        assertThat(first).hasSize(12 * CHUNK);
    }
}
