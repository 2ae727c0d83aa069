package dev.cairn.client;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.cairn.core.async.Promise;
import dev.cairn.core.proto.CairnException;
import dev.cairn.core.proto.StorageClass;
import dev.cairn.core.proto.Types.AttrChange;
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
 * Two file systems ({@link ClusterFs}: two NFS gateways, or a gateway and another client) change one file in turn.
 * Each keeps what it learnt of the file while idle; whatever the other did in between must win over that cache.
 * Both bugs here were found by the sweep's NFS lane (the gateway and the native workload's file system changing
 * the same files in turn).
 */
class TwoWritersInTurnSimTest {
    static final long SECOND = 1_000_000_000L;
    static final int CHUNK = 128 << 10;

    final Simulation sim = new Simulation(12);
    final SimWorld world = new SimWorld(sim, false);
    final SimCluster cluster = new SimCluster(world, 4);

    <T> T run(Supplier<Promise<T>> op) { return sim.await(cluster.clientHost(), op, 120 * SECOND); }

    byte[] read(CairnClient c, String path) { return run(() -> c.reader(run(() -> c.lookup(path))).readAll()); }

    CairnClient start() {
        cluster.startAll();
        sim.runUntil(2 * SECOND);
        return cluster.client();
    }

    /** An {@code ec(2,1)} file at {@code path} written whole with {@code data} through {@code a}, and committed. */
    FileAttr committedBy(ClusterFs a, CairnClient c, String path, byte[] data) {
        FileAttr file = run(() -> c.create(path, CHUNK, StorageClass.ec(2, 1)));
        run(() -> a.write(file.inode(), 0, data, false));
        run(() -> a.commit(file.inode()));
        return file;
    }

    static byte[] put(byte[] file, long at, byte[] data) {
        byte[] out = Arrays.copyOf(file, Math.max(file.length, (int) at + data.length));
        System.arraycopy(data, 0, out, (int) at, data.length);
        return out;
    }

    /**
     * Sim seed 13: a file system's idle cache said the file was longer than it had become (the other shrank it);
     * judged dirty against the fresh attributes it kept its old size, and its next commit set the file back to it,
     * past what the last chunk's copies hold: the master counted them short, and the chunk could not be read.
     */
    @Test void aCommitAfterAnotherWriterShrankTheFileKeepsTheFileAsItIsNow() {
        cluster.startAll();
        sim.runUntil(2 * SECOND);
        CairnClient c = cluster.client();
        FileAttr file = run(() -> c.create("/f", CHUNK, StorageClass.replicated(2)));
        ClusterFs a = new ClusterFs(c, c.env().clock()), b = new ClusterFs(c, c.env().clock());
        byte[] first = Oracle.content(1, 3 * CHUNK + 1000);
        run(() -> a.write(file.inode(), 0, first, false));
        run(() -> a.commit(file.inode()));

        run(() -> b.setAttr(file.inode(), AttrChange.NONE.withSize(CHUNK + 500)));
        byte[] model = Arrays.copyOf(first, CHUNK + 500);
        byte[] tail = Oracle.content(2, 200);
        run(() -> b.write(file.inode(), 2L * CHUNK + 100, tail, false));
        run(() -> b.commit(file.inode()));
        model = put(model, 2L * CHUNK + 100, tail);

        byte[] small = Oracle.content(3, 10);
        run(() -> a.write(file.inode(), 100, small, false));
        run(() -> a.commit(file.inode()));
        model = put(model, 100, small);

        assertThat(run(() -> c.lookup("/f")).size()).as("the size the other writer left, not the first one's old one").isEqualTo(model.length);
        assertThat(Arrays.equals(read(c, "/f"), model)).isTrue();
    }

    /**
     * A size change works from the file's old size (growing zeros the rest of the old last chunk): from a stale one
     * it wrote zeros over bytes the other writer had committed there, before the master refused the change.
     */
    @Test void aSizeChangeStartsFromTheSizeTheOtherWriterLeft() {
        cluster.startAll();
        sim.runUntil(2 * SECOND);
        CairnClient c = cluster.client();
        FileAttr file = run(() -> c.create("/g", CHUNK, StorageClass.replicated(2)));
        ClusterFs a = new ClusterFs(c, c.env().clock()), b = new ClusterFs(c, c.env().clock());
        byte[] model = Oracle.content(4, CHUNK + 100);
        run(() -> a.write(file.inode(), 0, model, false));
        run(() -> a.commit(file.inode()));

        byte[] theirs = Oracle.content(5, 5000);
        run(() -> b.write(file.inode(), CHUNK + 1000, theirs, false));
        run(() -> b.commit(file.inode()));
        byte[] expected = put(model, CHUNK + 1000, theirs);

        run(() -> a.setAttr(file.inode(), AttrChange.NONE.withSize(2L * CHUNK + 10)));
        expected = Arrays.copyOf(expected, 2 * CHUNK + 10);

        assertThat(Arrays.equals(read(c, "/g"), expected)).as("the other writer's bytes survive the size change").isTrue();
    }

    /**
     * Two file systems change one committed chunk of an erasure-coded file at once. The first uploaded its change (a
     * rewrite under a new chunk id) on its way past the chunk, then the second committed its own rewrite of the chunk:
     * the first one's commit must be refused (its chunk was built on bytes that are no longer the file's), and its
     * writes reported lost, not left half held: kept, its next commit covered a size its chunks did not hold (sim seed
     * 130 at 10 s). Its later writes then commit as usual.
     */
    @Test void anErasureCodedRewriteOutrunByAnotherIsReportedLostAndTheFileStaysWhole() {
        CairnClient c = start();
        ClusterFs a = new ClusterFs(c, c.env().clock()), b = new ClusterFs(c, c.env().clock());
        byte[] first = Oracle.content(6, 2 * CHUNK);
        FileAttr file = committedBy(a, c, "/e", first);

        run(() -> a.write(file.inode(), 10, Oracle.content(7, 10), false));
        run(() -> a.write(file.inode(), CHUNK + 10, Oracle.content(8, 10), false)); // moves past chunk 0: uploaded, not committed
        byte[] theirs = Oracle.content(9, 10);
        run(() -> b.write(file.inode(), 20, theirs, false));
        run(() -> b.commit(file.inode()));
        byte[] model = put(first, 20, theirs);

        assertThatThrownBy(() -> run(() -> a.commit(file.inode()))).as("the outrun rewrite").isInstanceOf(CairnException.class);
        assertThat(Arrays.equals(read(c, "/e"), model)).as("the second writer's change, whole").isTrue();
        byte[] later = Oracle.content(10, 3000);
        run(() -> a.write(file.inode(), 2L * CHUNK + 5, later, false));
        assertThatThrownBy(() -> run(() -> a.commit(file.inode()))).as("the loss, owed to the next COMMIT").isInstanceOf(CairnException.class);
        run(() -> a.commit(file.inode()));
        model = put(model, 2L * CHUNK + 5, later);
        assertThat(run(() -> c.lookup("/e")).size()).isEqualTo(model.length);
        assertThat(Arrays.equals(read(c, "/e"), model)).isTrue();
    }

    /**
     * Two file systems change one committed chunk of an erasure-coded file at once, each holding an image of it read
     * before the other's commit. The second to upload must be refused, not swap in a chunk built on the old bytes:
     * that would silently undo the first one's acknowledged change (a lost update of bytes neither wrote twice).
     */
    @Test void anErasureCodedImageReadBeforeAnotherWritersCommitIsNotUploadedOverIt() {
        CairnClient c = start();
        ClusterFs a = new ClusterFs(c, c.env().clock()), b = new ClusterFs(c, c.env().clock());
        byte[] first = Oracle.content(11, CHUNK + 500);
        FileAttr file = committedBy(a, c, "/e2", first);

        run(() -> a.write(file.inode(), 10, Oracle.content(12, 10), false)); // a's image of chunk 0, read now
        byte[] theirs = Oracle.content(13, 10);
        run(() -> b.write(file.inode(), 5000, theirs, false));
        run(() -> b.commit(file.inode()));
        byte[] model = put(first, 5000, theirs);

        assertThatThrownBy(() -> run(() -> a.commit(file.inode()))).isInstanceOf(CairnException.class);
        assertThat(Arrays.equals(read(c, "/e2"), model)).as("the other writer's acknowledged change survives").isTrue();
    }
}
