package dev.cairn.sim;

import static org.assertj.core.api.Assertions.assertThat;

import dev.cairn.client.CairnClient;
import dev.cairn.nfs.client.Nfs4Client;
import dev.cairn.nfs.client.Nfs4Client.OpenFile;
import dev.cairn.nfs.fs.ClusterFs;
import dev.cairn.nfs.NfsGateway;
import dev.cairn.core.proto.StorageClass;
import dev.cairn.core.proto.Types.FileAttr;
import dev.cairn.sim.workload.Oracle;
import java.util.Arrays;
import org.junit.jupiter.api.Test;

/**
 * The gateway's read-ahead for sequential READs (`ReadAhead`): a client reading one piece at a time is answered from
 * bytes read before it asked, and never from bytes older than the file: not after a WRITE through the gateway, not
 * after another writer's commit once the client opens the file again (close-to-open), and not a second past its read.
 */
class NfsReadAheadSimTest extends NfsScenario {
    static final int CHUNK = 256 * 1024;
    static final int PIECE = 64 * 1024;

    Nfs4Client nfsClient;
    byte[] root;

    void start() {
        startWithGateway(4);
        nfsClient = client("reader");
        root = nfs(() -> nfsClient.lookup("/"));
    }

    ClusterFs fs() { return ((NfsGateway) gateway.node()).fs(); }

    /** A file of {@code size} bytes of small chunks, written and committed by the cluster's own client. */
    byte[] file(String name, int size, long seed) {
        CairnClient cc = c.client();
        byte[] data = Oracle.content(seed, size);
        FileAttr a = run(() -> cc.create("/" + name, CHUNK, StorageClass.replicated(2)));
        var w = cc.writer(a);
        run(() -> w.write(data).flatMap(v -> w.close()));
        return data;
    }

    /** READs of {@link #PIECE} one at a time from {@code from} to {@code to}, checked against {@code expect}. */
    void readInTurn(OpenFile f, int from, int to, byte[] expect) {
        for (int at = from; at < to; at += PIECE) {
            int off = at;
            byte[] got = nfs(() -> nfsClient.read(f, off, PIECE));
            assertThat(Arrays.equals(got, Arrays.copyOfRange(expect, off, Math.min(expect.length, off + PIECE))))
                    .as("READ at " + off).isTrue();
            assertThat(fs().readAheadBytes()).as("read ahead at most the gateway's budget").isLessThanOrEqualTo(32L << 20);
        }
    }

    @Test void sequentialReadsOneAtATimeAreAnsweredFromWhatWasReadAhead() {
        start();
        int size = 24 * CHUNK + 1234;
        byte[] data = file("seq", size, 1);
        OpenFile f = nfs(() -> nfsClient.open(root, "seq", false));
        readInTurn(f, 0, size, data);
        long reads = (size + PIECE - 1) / PIECE;
        // the first two READs start the read-ahead; nearly every later one finds its bytes read already
        assertThat(fs().readAheadHits()).as("READs answered from read-ahead, of " + reads).isGreaterThan(reads - 4);
        // random READs are not read ahead
        long hits = fs().readAheadHits();
        for (int i = 0; i < 20; i++) {
            int off = (int) ((i * 7919L * PIECE) % (size - PIECE));
            assertThat(Arrays.equals(nfs(() -> nfsClient.read(f, off, 4096)), Arrays.copyOfRange(data, off, off + 4096))).isTrue();
        }
        assertThat(fs().readAheadHits()).as("no hits for random READs").isEqualTo(hits);
        assertThat(sim.violations()).isEmpty();
    }

    /** A file this gateway wrote and committed is read ahead as well (its chunks' sessions stay, holding nothing). */
    @Test void aFileWrittenAndCommittedThroughTheGatewayIsReadAhead() {
        start();
        CairnClient cc = c.client();
        run(() -> cc.create("/mine", CHUNK, StorageClass.replicated(2)));
        OpenFile f = nfs(() -> nfsClient.open(root, "mine", false));
        int size = 12 * CHUNK;
        byte[] data = Oracle.content(4, size);
        for (int at = 0; at < size; at += PIECE) {
            int off = at;
            nfs(() -> nfsClient.write(f, off, Arrays.copyOfRange(data, off, off + PIECE), Nfs4Client.UNSTABLE));
        }
        nfs(() -> nfsClient.commit(f.fh()));
        readInTurn(f, 0, size, data);
        assertThat(fs().readAheadHits()).as("READs answered from read-ahead, of " + size / PIECE).isGreaterThan(size / PIECE - 4);
        assertThat(sim.violations()).isEmpty();
    }

    @Test void aWriteThroughTheGatewayIsReadBackAtOnceOverWhatWasReadAhead() {
        start();
        int size = 16 * CHUNK;
        byte[] data = file("w", size, 2);
        OpenFile f = nfs(() -> nfsClient.open(root, "w", false));
        readInTurn(f, 0, 4 * PIECE, data); // reading ahead now, past 4 * PIECE
        assertThat(fs().readAheadBytes()).isPositive();
        byte[] b = Oracle.content(22, 5000);
        int at = 6 * PIECE + 100;
        nfs(() -> nfsClient.write(f, at, b, Nfs4Client.UNSTABLE));
        System.arraycopy(b, 0, data, at, b.length);
        readInTurn(f, 4 * PIECE, size, data);
        nfs(() -> nfsClient.commit(f.fh()));
        readInTurn(f, 0, size, data);
        assertThat(sim.violations()).isEmpty();
    }

    @Test void anotherWritersCommitIsSeenAfterAnOpenAndWithinASecondWithout() {
        start();
        int size = 16 * CHUNK;
        byte[] data = file("o", size, 3);
        OpenFile f = nfs(() -> nfsClient.open(root, "o", false));
        readInTurn(f, 0, 4 * PIECE, data);
        assertThat(fs().readAheadBytes()).isPositive();
        // another writer (a second file system on the cluster, as a second gateway would be) changes bytes ahead
        ClusterFs other = new ClusterFs(c.client(), c.client().env().clock());
        FileAttr a = run(() -> c.client().lookup("/o"));
        byte[] b = Oracle.content(33, 3000);
        int at = 5 * PIECE + 10;
        run(() -> other.write(a.inode(), at, b, false).flatMap(x -> other.commit(a.inode())));
        System.arraycopy(b, 0, data, at, b.length);
        // close-to-open: a new OPEN sees the commit, whatever was read ahead
        OpenFile again = nfs(() -> nfsClient.open(root, "o", false));
        readInTurn(again, 4 * PIECE, 8 * PIECE, data);
        // and without an OPEN, what was read ahead is not used a second past its read
        byte[] c2 = Oracle.content(34, 3000);
        int at2 = 12 * PIECE + 10;
        readInTurn(again, 8 * PIECE, 10 * PIECE, data); // reading ahead past 12 * PIECE again
        run(() -> other.write(a.inode(), at2, c2, false).flatMap(x -> other.commit(a.inode())));
        System.arraycopy(c2, 0, data, at2, c2.length);
        sim.runUntil(sim.now() + 2 * SECOND);
        readInTurn(again, 10 * PIECE, size, data);
        assertThat(sim.violations()).isEmpty();
    }
}
