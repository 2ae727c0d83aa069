package dev.cairn.client;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.cairn.core.async.Promise;
import dev.cairn.core.proto.CairnException;
import dev.cairn.core.proto.MasterProtocol.ChunkInfo;
import dev.cairn.core.proto.MasterProtocol.CopyInfo;
import dev.cairn.core.proto.MasterProtocol.LeaseReply;
import dev.cairn.core.proto.Status;
import dev.cairn.core.proto.StorageClass;
import dev.cairn.core.proto.Types.FileAttr;
import dev.cairn.core.proto.Types.ServerRef;
import dev.cairn.sim.SimCluster;
import dev.cairn.sim.runtime.SimHost;
import dev.cairn.sim.runtime.SimWorld;
import dev.cairn.sim.runtime.Simulation;
import dev.cairn.sim.workload.Oracle;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.function.Supplier;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * A write lease bumps only the copies its writer can reach; a copy left out stays at its version. It still
 * holds every acknowledged byte until a write under the new version is committed (the chunk's data
 * version), and only then is it outdated. Seeds 462 and 742 of the 60 s sweep lost data both ways: a
 * left-out copy taken for current at the new version let the planner drop a good one, and a left-out copy
 * taken for stale made acknowledged data unreadable once the bumped copies were lost.
 */
class LeftOutCopySimTest {
    static final long SECOND = 1_000_000_000L;

    final Simulation sim = new Simulation(5);
    final SimWorld world = new SimWorld(sim, false);
    final SimCluster cluster = new SimCluster(world, 4);
    CairnClient c;
    FileAttr file;
    final byte[] data = Oracle.content(77, 10_000);

    <T> T run(Supplier<Promise<T>> op) {
        return sim.await(cluster.clientHost(), op, 120 * SECOND);
    }

    /** /f, replicated(2), 10 000 bytes acknowledged. */
    @BeforeEach void writeAFile() {
        cluster.startAll();
        sim.runUntil(2 * SECOND);
        c = cluster.client();
        file = run(() -> c.create("/f", 128 << 10, StorageClass.replicated(2)));
        FileWriter w = c.writer(file);
        run(() -> w.write(data).flatMap(v -> w.sync()));
    }

    ChunkInfo chunk() { return run(() -> c.fileInfo("/f")).chunks().get(0); }

    List<String> current() {
        List<String> out = new ArrayList<>();
        for (CopyInfo k : chunk().copies()) if (k.current()) out.add(k.serverId());
        return out;
    }

    SimHost host(String id) {
        for (SimHost h : cluster.chunkservers()) if (h.name().equals(id)) return h;
        throw new AssertionError("no chunkserver " + id);
    }

    /** A lease that leaves out one current copy, as a writer that saw that server fail asks for. */
    LeaseReply leaseLeavingOut(String leftOut) {
        LeaseReply lease = run(() -> c.lease(file.inode(), 0, List.of(leftOut)));
        assertThat(lease.chain()).extracting(ServerRef::id).doesNotContain(leftOut).hasSize(2);
        return lease;
    }

    @Test void aCopyLeftOutOfALeaseThatWroteNothingIsReadWhenTheBumpedCopiesAreLost() {
        String leftOut = current().get(0);
        LeaseReply lease = leaseLeavingOut(leftOut);
        // the writer dies before sending a byte, and every copy that took the new version is lost for good
        for (ServerRef r : lease.chain()) host(r.id()).destroy();
        sim.runUntil(sim.now() + 60 * SECOND);

        byte[] back = run(() -> c.reader(run(() -> c.lookup("/f"))).readAll());
        assertThat(Arrays.equals(back, data)).as("the left-out copy still holds the acknowledged bytes").isTrue();
        // and the planner restored the goal from it, a version behind the record
        assertThat(current()).hasSize(2).contains(leftOut);
        assertThat(sim.violations()).isEmpty();
    }

    @Test void aCopyLeftOutOfACommittedWriteIsOutdatedAndNeverRead() {
        String leftOut = current().get(0);
        LeaseReply lease = leaseLeavingOut(leftOut);
        // the same length, other bytes: only the version tells the left-out copy from a current one
        byte[] next = Oracle.content(78, data.length);
        assertThat(run(() -> c.writeData(lease.chain(), lease.chunkId(), lease.version(), 0, next)).status()).isEqualTo(Status.OK);
        assertThat(run(() -> c.syncChunk(lease.chain(), lease.chunkId(), lease.version(), next.length)).status()).isEqualTo(Status.OK);
        Uncommitted versions = new Uncommitted();
        versions.written(lease.chunkId(), 0, lease.version()); // what a finished upload records
        run(() -> c.commitLength(file.inode(), next.length, versions));

        assertThat(current()).doesNotContain(leftOut);
        byte[] back = run(() -> c.reader(run(() -> c.lookup("/f"))).readAll());
        assertThat(Arrays.equals(back, next)).as("reads see the committed write").isTrue();
        // with the new copies gone (within the lease hold, so the planner has not touched the chunk and the
        // left-out copy is still on its disk), the old bytes are not served in their place: the chunk is unreadable
        for (ServerRef r : lease.chain()) host(r.id()).destroy();
        sim.runUntil(sim.now() + 10 * SECOND);
        assertThat(current()).isEmpty();
        assertThatThrownBy(() -> run(() -> c.reader(run(() -> c.lookup("/f"))).readAll()))
                .isInstanceOfSatisfying(CairnException.class, e -> assertThat(e.status()).isEqualTo(Status.UNAVAILABLE));
    }

    @Test void aWriteUnderALeaseTheChunkHasMovedOnFromIsNotAcknowledged() {
        LeaseReply first = run(() -> c.lease(file.inode(), 0, List.of()));
        byte[] next = Oracle.content(79, data.length);
        assertThat(run(() -> c.writeData(first.chain(), first.chunkId(), first.version(), 0, next)).status()).isEqualTo(Status.OK);
        assertThat(run(() -> c.syncChunk(first.chain(), first.chunkId(), first.version(), next.length)).status()).isEqualTo(Status.OK);
        Uncommitted versions = new Uncommitted();
        versions.written(first.chunkId(), 0, first.version());
        sim.runUntil(sim.now() + 30 * SECOND); // the lease hold runs out
        LeaseReply second = run(() -> c.lease(file.inode(), 0, List.of()));
        assertThat(second.version()).isGreaterThan(first.version());

        assertThatThrownBy(() -> run(() -> c.commitLength(file.inode(), next.length, versions)))
                .isInstanceOfSatisfying(CairnException.class, e -> assertThat(e.status()).isEqualTo(Status.STALE));
    }

    /**
     * A chain a client could never send (a server named twice, so a request would go round and round, or longer
     * than any class) is refused BAD_REQUEST by the first chunkserver before it writes anything.
     */
    @Test void aChainNamingAServerTwiceOrTooLongIsRefusedUnwritten() {
        LeaseReply lease = run(() -> c.lease(file.inode(), 0, List.of()));
        ServerRef head = lease.chain().get(0);
        List<ServerRef> loop = new java.util.ArrayList<>(List.of(head, lease.chain().get(1), head));
        var r = run(() -> c.writeData(loop, lease.chunkId(), lease.version(), 0, Oracle.content(80, 100)));
        assertThat(r.status()).isEqualTo(Status.BAD_REQUEST);
        assertThat(r.detail()).contains("twice");
        List<ServerRef> longChain = new java.util.ArrayList<>();
        longChain.add(head);
        for (int i = 0; i < StorageClass.MAX_REPLICAS; i++) longChain.add(new ServerRef("x" + i, head.address()));
        assertThat(run(() -> c.writeData(longChain, lease.chunkId(), lease.version(), 0, Oracle.content(81, 100))).status()).isEqualTo(Status.BAD_REQUEST);
        byte[] back = run(() -> c.reader(run(() -> c.lookup("/f"))).readAll());
        assertThat(Arrays.equals(back, data)).as("nothing written").isTrue();
    }
}
