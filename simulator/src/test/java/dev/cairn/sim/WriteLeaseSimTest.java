package dev.cairn.sim;

import static org.assertj.core.api.Assertions.assertThat;

import dev.cairn.client.CairnClient;
import dev.cairn.client.ChunkSession;
import dev.cairn.client.FileWriter;
import dev.cairn.client.Uncommitted;
import dev.cairn.core.proto.CairnException;
import dev.cairn.core.proto.Leases;
import dev.cairn.core.proto.MasterProtocol.ChunkInfo;
import dev.cairn.core.proto.MasterProtocol.CopyInfo;
import dev.cairn.core.proto.Status;
import dev.cairn.core.proto.StorageClass;
import dev.cairn.core.proto.Types.FileAttr;
import dev.cairn.sim.runtime.SimHost;
import dev.cairn.sim.workload.Oracle;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Write leases end to end: what the master knows of a chunk's copies once a writer has committed. */
class WriteLeaseSimTest extends ClusterScenario {
    /**
     * A writer loses one of its two copies mid-file; the next lease bumps the survivor and tops the chain up
     * with a fresh server. Once the writer has committed, that fresh copy holds every acknowledged byte, and
     * the master must count it at once: if the old survivor then dies, the file is read from the fresh copy
     * (sweep seed 1928 lost a file this way, the fresh copy unknown until its server's next inventory).
     */
    @Test void aCopyATopUpAddedIsKnownAsSoonAsTheWriterCommits() {
        cluster(3);
        byte[] data = Oracle.content(7, 300_000);
        CairnClient client = c.client();
        FileWriter w = client.writer(run(() -> client.create("/f", CHUNK, StorageClass.replicated(2))));
        run(() -> w.write(data, 0, 100_000).flatMap(v -> w.sync()));
        List<String> first = current(info("/f").chunks().get(0));
        assertThat(first).hasSize(2);

        host(first.get(0)).crash();
        long before = sim.now();
        run(() -> w.write(data, 100_000, data.length - 100_000).flatMap(v -> w.close()));
        ChunkInfo chunk = info("/f").chunks().get(0);
        List<String> now = current(chunk);
        List<String> fresh = new ArrayList<>(now);
        fresh.removeAll(first);
        assertThat(fresh).as("the top-up's copy, counted at the commit (%s s after the crash); copies %s",
                (sim.now() - before) / SECOND, chunk.copies()).hasSize(1);
        assertThat(now).containsExactlyInAnyOrder(first.get(1), fresh.get(0));

        host(first.get(1)).crash(); // the copy the lease bumped: only the fresh one is left
        assertThat(Arrays.equals(read("/f"), data)).as("read from the fresh copy alone").isTrue();
    }

    /**
     * A file written and closed stays under its lease's hold for 30 s (until then the chunkservers could still take
     * writes at its version, which a copy made meanwhile would miss). One of its two copies is lost at once: the master
     * revokes the lease (the live copies close their windows) and the planner makes a new copy within seconds, not
     * after the hold (60 s sweep seed 5064 lost chunks whose last copy went while they waited under it). The new copy
     * then holds the file alone.
     */
    @Test void aChunkBelowItsGoalIsRepairedWithoutWaitingOutItsLease() {
        cluster(4);
        byte[] data = write("/f", StorageClass.replicated(2), 200_000, 3);
        long written = sim.now();
        String kept = loseOneOfTwoCopiesAndAwaitTheRepair("/f");
        assertThat(sim.now() - written).as("repaired well inside the lease's hold").isLessThan(Leases.WINDOW_NANOS / 2);
        host(kept).crash();
        assertThat(Arrays.equals(read("/f"), data)).as("read from the repair copy alone").isTrue();
    }

    /**
     * A master restarted just after a file was written remembers no lease, but its chunkservers report their write
     * windows still open, and those hold the chunk as a lease would. One of its two copies is lost then: the master
     * closes the reported windows and repairs at once, instead of waiting out the 30 s the reports hold it for (60 s
     * sweep seed 5034 lost an erasure-coded chunk whose missing part waited 26 s under a window its server reported
     * when it came back, the lease's revocation having passed it by while it was down).
     */
    @Test void aChunkBelowItsGoalIsRepairedWithoutWaitingOutAWindowReportedToARestartedMaster() {
        cluster(4);
        byte[] data = write("/f", StorageClass.replicated(2), 200_000, 6);
        c.master().crash();
        c.master().start();
        sim.runUntil(sim.now() + 5 * SECOND);
        assertThat(status().grace()).as("every chunkserver registered again: the start-up grace is over").isFalse();
        long restarted = sim.now();
        String kept = loseOneOfTwoCopiesAndAwaitTheRepair("/f");
        assertThat(sim.now() - restarted).as("repaired well inside the reported windows' hold").isLessThan(Leases.WINDOW_NANOS / 2);
        host(kept).crash();
        assertThat(Arrays.equals(read("/f"), data)).as("read from the repair copy alone").isTrue();
    }

    /**
     * A writer in the middle of a file loses a copy; the master revokes its lease to repair the chunk. The writer's next
     * writes are refused by the closed windows, and it goes on under a new lease: nothing it acknowledged is lost and
     * the file reads back whole.
     */
    @Test void aWriterWhoseLeaseWasRevokedGoesOnUnderANewOne() {
        cluster(4);
        byte[] data = Oracle.content(9, 300_000);
        CairnClient client = c.client();
        FileWriter w = client.writer(run(() -> client.create("/f", CHUNK, StorageClass.replicated(2))));
        run(() -> w.write(data, 0, 100_000).flatMap(v -> w.sync()));
        loseOneOfTwoCopiesAndAwaitTheRepair("/f");
        run(() -> w.write(data, 100_000, data.length - 100_000).flatMap(v -> w.close()));
        assertThat(Arrays.equals(read("/f"), data)).isTrue();
    }

    /** Crashes the server of one of the two copies of the file's first chunk, waits (≤ 20 s) for a new second copy; returns the one kept. */
    private String loseOneOfTwoCopiesAndAwaitTheRepair(String path) {
        List<String> first = current(info(path).chunks().get(0));
        assertThat(first).hasSize(2);
        host(first.get(0)).crash();
        awaitChunks(path, 20, chunks -> current(chunks.get(0)).size() == 2 && !current(chunks.get(0)).contains(first.get(0)),
                "a new second copy in place of the one on " + first.get(0));
        return first.get(1);
    }

    /**
     * A writer synced its writes on both copies of its lease and is held up before it commits. Meanwhile the planner,
     * which judges copies by the data version committed before, drains one of them: a copy the lease left out still
     * holds every committed byte, and no fourth server can take a copy of the newer version first
     * ({@code Planner.copyNewestBeforeDropping}), so the drained copy goes. Committed now, the writer's version would
     * be current on one copy of the two its class requires: the commit is refused (STALE: write it again) and the file
     * stays as it was (60 s sweep seed 363 acknowledged such a commit: a class with a disk label had no server to copy to).
     */
    @Test void aCommitIsRefusedOnceACopyItsWritesWereSyncedOnIsGone() {
        cluster(3);
        CairnClient client = c.client();
        FileAttr file = run(() -> client.create("/f", CHUNK, StorageClass.replicated(2)));
        Uncommitted mine = new Uncommitted();
        ChunkSession s = client.session(file, 0, mine);
        byte[] first = Oracle.content(1, 5000);
        run(() -> s.write(0, first).flatMap(v -> s.sync()));
        run(() -> client.commitLength(file.inode(), first.length, mine));
        List<String> committed = current(info("/f").chunks().get(0));
        assertThat(committed).hasSize(2);

        // the next lease leaves the crashed holder out: the other is bumped, a third server topped up
        SimHost leftOut = host(committed.get(0));
        leftOut.crash();
        byte[] second = Oracle.content(2, 3000);
        run(() -> s.write(first.length, second).flatMap(v -> s.sync()));
        leftOut.start();
        // the master knows the top-up copy from its server's next inventory (the commit would have recorded it)
        awaitChunks("/f", 120, chunks -> atVersion(chunks.get(0), 2).size() == 2 && current(chunks.get(0)).contains(committed.get(0)),
                "both copies of the lease reported, and the left-out copy back, current at the committed version");
        List<String> chain = atVersion(info("/f").chunks().get(0), 2);
        assertThat(chain).doesNotContain(committed.get(0));

        String drained = chain.get(0);
        run(() -> client.drain(drained, true));
        awaitChunks("/f", 120, chunks -> chunks.get(0).copies().stream().noneMatch(k -> k.serverId().equals(drained)), "the drained copy deleted");

        CairnException refused = org.junit.jupiter.api.Assertions.assertThrows(CairnException.class,
                () -> run(() -> client.commitLength(file.inode(), first.length + second.length, mine)));
        assertThat(refused.status()).isEqualTo(Status.STALE);
        assertThat(read("/f")).as("the file as last committed").isEqualTo(first);
    }

    private static List<String> atVersion(ChunkInfo chunk, long version) {
        List<String> out = new ArrayList<>();
        for (CopyInfo copy : chunk.copies()) if (copy.version() == version) out.add(copy.serverId());
        return out;
    }
}
