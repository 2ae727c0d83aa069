package dev.cairn.client;

import static org.assertj.core.api.Assertions.assertThat;

import dev.cairn.core.async.Promise;
import dev.cairn.core.proto.StorageClass;
import dev.cairn.core.proto.Types.FileAttr;
import dev.cairn.nfs.fs.ClusterFs;
import dev.cairn.sim.SimCluster;
import dev.cairn.sim.runtime.SimWorld;
import dev.cairn.sim.runtime.Simulation;
import dev.cairn.sim.workload.Oracle;
import java.util.Arrays;
import java.util.function.Supplier;
import org.junit.jupiter.api.Test;

/**
 * A commit names the chunk versions its own writer made durable, never another writer's on the same client
 * (sim seed 3145 of the 30 s sweep): a writer synced a chunk past the file's committed end and never committed
 * it; the gateway then wrote further on, over what was a hole in its view, and its commit took the other
 * writer's chunk along at a length past that chunk's copies, so the master counted every copy short and the
 * chunk had none left to read.
 */
class WritersCommitTheirOwnSimTest {
    static final long SECOND = 1_000_000_000L;
    static final int CHUNK = 128 << 10;

    final Simulation sim = new Simulation(11);
    final SimWorld world = new SimWorld(sim, false);
    final SimCluster cluster = new SimCluster(world, 4);

    <T> T run(Supplier<Promise<T>> op) { return sim.await(cluster.clientHost(), op, 120 * SECOND); }

    @Test void aCommitLeavesAnotherWritersUncommittedChunkAlone() {
        cluster.startAll();
        sim.runUntil(2 * SECOND);
        CairnClient c = cluster.client();
        FileAttr file = run(() -> c.create("/f", CHUNK, StorageClass.replicated(2)));
        byte[] first = Oracle.content(1, CHUNK);
        FileWriter w = c.writer(file);
        run(() -> w.write(first).flatMap(v -> w.sync()));

        // another writer syncs 5000 bytes into chunk 1 and never commits them
        Uncommitted abandoned = new Uncommitted();
        ChunkSession s = c.session(file, 1, abandoned);
        run(() -> s.write(0, Oracle.content(2, 5000)).flatMap(v -> s.sync()));
        assertThat(abandoned.isEmpty()).as("its sync recorded the chunk's version for its own commit").isFalse();

        // the gateway, on the same client, writes past the committed end (chunk 1 is a hole to it) and commits
        ClusterFs fs = new ClusterFs(c, c.env().clock());
        byte[] later = Oracle.content(3, 3000);
        long at = 2L * CHUNK + 100;
        run(() -> fs.write(file.inode(), at, later, false));
        run(() -> fs.commit(file.inode()));
        assertThat(abandoned.isEmpty()).as("the gateway's commit did not take the other writer's version").isFalse();

        byte[] expected = Arrays.copyOf(first, (int) at + later.length);
        System.arraycopy(later, 0, expected, (int) at, later.length);
        byte[] back = run(() -> c.reader(run(() -> c.lookup("/f"))).readAll());
        assertThat(back.length).isEqualTo(expected.length);
        assertThat(Arrays.equals(back, expected)).as("chunk 1, never committed, reads as the hole the gateway wrote over").isTrue();
    }

    /**
     * A commit vouches only for the chunks its length reaches: a writer that synced a chunk past the length it
     * commits keeps that chunk's version for a later commit. If that later commit never lands (its master lost
     * power first), the chunk holds nothing committed, and a file another writer grows over it reads zeros there
     * (sim seed 1677 at 10 s: the chunk was named early, counted as holding committed data, and its copies, shorter
     * than the grown file's end, were judged short: the file was unreadable).
     */
    @Test void aCommitNamesOnlyTheChunksItsLengthReaches() {
        cluster.startAll();
        sim.runUntil(2 * SECOND);
        CairnClient c = cluster.client();
        FileAttr file = run(() -> c.create("/g", CHUNK, StorageClass.replicated(2)));
        Uncommitted mine = new Uncommitted();
        byte[] first = Oracle.content(4, CHUNK);
        ChunkSession s0 = c.session(file, 0, mine);
        run(() -> s0.write(0, first).flatMap(v -> s0.sync()));
        ChunkSession s1 = c.session(file, 1, mine);
        run(() -> s1.write(0, Oracle.content(5, 5000)).flatMap(v -> s1.sync()));
        run(() -> c.commitLength(file.inode(), CHUNK, mine));
        assertThat(mine.isEmpty()).as("chunk 1 waits for a commit that reaches it").isFalse();
        // that commit never comes; the gateway grows the file over chunk 1
        ClusterFs fs = new ClusterFs(c, c.env().clock());
        byte[] later = Oracle.content(6, 3000);
        long at = 2L * CHUNK + 100;
        run(() -> fs.write(file.inode(), at, later, false));
        run(() -> fs.commit(file.inode()));
        byte[] expected = Arrays.copyOf(first, (int) at + later.length);
        System.arraycopy(later, 0, expected, (int) at, later.length);
        byte[] back = run(() -> c.reader(run(() -> c.lookup("/g"))).readAll());
        assertThat(Arrays.equals(back, expected)).as("chunk 1, never committed, reads as zeros").isTrue();
    }
}
