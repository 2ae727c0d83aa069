package dev.cairn.sim;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.cairn.client.CairnClient;
import dev.cairn.core.async.Promise;
import dev.cairn.core.chunk.ChunkFormat;
import dev.cairn.core.env.Address;
import dev.cairn.core.proto.StorageClass;
import dev.cairn.nfs.NfsGateway;
import dev.cairn.nfs.client.Nfs4Client;
import dev.cairn.nfs.client.Nfs4Client.OpenFile;
import dev.cairn.nfs.fs.ClusterFs;
import dev.cairn.nfs.v4.CompoundState;
import dev.cairn.nfs.v4.Nfs4Status;
import dev.cairn.sim.runtime.SimHost;
import dev.cairn.sim.workload.Oracle;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.TreeSet;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The gateway's data path in the simulator: writes at any offset over files of many chunks, many in flight,
 * overwrites, truncates and reads against a model of the file; the write-behind bound; and what a power cut
 * in the middle of an overwrite leaves. Files are created by the cluster's client with small chunks (so a few
 * MiB span many chunks) and then opened over NFS.
 */
class NfsDataPathSimTest extends NfsScenario {
    static final int SMALL_CHUNK = 256 * 1024;
    static final int IN_FLIGHT = 16;

    Nfs4Client nfsClient;
    byte[] root;

    void start(int chunkservers) {
        startWithGateway(chunkservers);
        nfsClient = client("tester");
        root = nfs(() -> nfsClient.lookup("/"));
    }

    ClusterFs fs() { return ((NfsGateway) gateway.node()).fs(); }

    /** The class a test parameterized over "replicated" and "ec" means. */
    static StorageClass classNamed(String kind) { return kind.equals("ec") ? StorageClass.ec(2, 1) : StorageClass.replicated(2); }

    /** A file of small chunks made by the cluster's client, opened over NFS. */
    OpenFile smallChunkFile(String name, StorageClass cls) {
        CairnClient cc = c.client();
        run(() -> cc.create("/" + name, SMALL_CHUNK, cls));
        return nfs(() -> nfsClient.open(root, name, false));
    }

    /** Writes {@code writes} ({offset, length, seed}) with {@link #IN_FLIGHT} in flight, UNSTABLE, applying each to {@code model}. */
    byte[] writeAll(OpenFile f, List<long[]> writes, byte[] model) {
        for (int i = 0; i < writes.size(); i += IN_FLIGHT) {
            List<long[]> batch = writes.subList(i, Math.min(writes.size(), i + IN_FLIGHT));
            nfs(() -> {
                List<Promise<Nfs4Client.WriteResult>> all = new ArrayList<>();
                for (long[] w : batch) all.add(nfsClient.write(f, w[0], Oracle.content(w[2], (int) w[1]), Nfs4Client.UNSTABLE));
                return Promise.all(all);
            });
            for (long[] w : batch) model = apply(model, w[0], Oracle.content(w[2], (int) w[1]));
        }
        return model;
    }

    static byte[] apply(byte[] model, long offset, byte[] data) {
        int end = (int) offset + data.length;
        byte[] out = end > model.length ? Arrays.copyOf(model, end) : model;
        System.arraycopy(data, 0, out, (int) offset, data.length);
        return out;
    }

    byte[] readAll(OpenFile f, int length) {
        byte[] out = new byte[length + 1];
        int at = 0;
        while (at <= length) {
            int off = at;
            byte[] got = nfs(() -> nfsClient.read(f, off, 1 << 20));
            if (got.length == 0) break;
            System.arraycopy(got, 0, out, at, Math.min(got.length, out.length - at));
            at += got.length;
        }
        return Arrays.copyOf(out, Math.min(at, out.length));
    }

    /**
     * The hang of issue 25: 4 KiB writes at random offsets over a file of many chunks, 16 in flight, then COMMIT
     * and a read-back. Every WRITE is answered, the COMMIT makes them durable, and the bytes read back are the
     * model's, over NFS and through the cluster's own client.
     */
    @Test void smallRandomWritesOverManyChunksWithSixteenInFlightCommitAndReadBack() {
        start(5);
        OpenFile f = smallChunkFile("random", StorageClass.replicated(2));
        int size = 8 * SMALL_CHUNK;
        SplittableRandom rnd = new SplittableRandom(5);
        List<long[]> layout = new ArrayList<>();
        for (int off = 0; off < size; off += 64 * 1024) layout.add(new long[] {off, 64 * 1024, 1000 + off});
        byte[] model = writeAll(f, layout, new byte[0]);
        nfs(() -> nfsClient.commit(f.fh()));
        List<long[]> writes = new ArrayList<>();
        for (int i = 0; i < 400; i++) writes.add(new long[] {rnd.nextInt(size / 4096) * 4096L, 4096, 5000 + i});
        model = writeAll(f, writes, model);
        assertThat(readAll(f, size)).as("read back before the commit, from the chains").isEqualTo(model);
        nfs(() -> nfsClient.commit(f.fh()));
        assertThat(fs().heldBytes()).as("a commit lets go of what it covers: %s", fs().describeHeld()).isZero();
        assertThat(readAll(f, size)).isEqualTo(model);
        assertThat(read("/random")).as("through the cluster's own client").isEqualTo(model);
    }

    /**
     * Random writes, overwrites, extending writes past holes, truncates (shrink and grow), reads and commits
     * through the gateway, against a model of the file; each read is checked as it comes back, and after the last
     * commit the file is read through the cluster's client too.
     */
    @ParameterizedTest(name = "seed {0}")
    @ValueSource(longs = {1, 2, 3, 4, 5, 6})
    void writesOverwritesTruncatesAndReadsMatchAModelOfTheFile(long seed) {
        start(4);
        OpenFile f = smallChunkFile("model", StorageClass.replicated(2));
        SplittableRandom rnd = new SplittableRandom(seed);
        byte[] model = new byte[0];
        int maxSize = 6 * SMALL_CHUNK + 12345;
        for (int step = 0; step < 120; step++) {
            int op = rnd.nextInt(100);
            if (op < 55) {
                int len = rnd.nextInt(5) == 0 ? 1 + rnd.nextInt(300_000) : 1 + rnd.nextInt(8192);
                long off = rnd.nextInt(4) == 0 ? model.length + rnd.nextInt(SMALL_CHUNK) : rnd.nextInt(Math.max(1, model.length + 1));
                if (off + len > maxSize) continue;
                byte[] data = Oracle.content(seed * 1000 + step, len);
                int stable = rnd.nextInt(8) == 0 ? Nfs4Client.FILE_SYNC : Nfs4Client.UNSTABLE;
                nfs(() -> nfsClient.write(f, off, data, stable));
                model = apply(model, off, data);
            } else if (op < 65) {
                long newSize = rnd.nextInt(maxSize);
                nfs(() -> nfsClient.truncate(f, newSize));
                model = Arrays.copyOf(model, (int) newSize);
            } else if (op < 85) {
                int len = 1 + rnd.nextInt(400_000);
                long off = rnd.nextInt(model.length + 10);
                byte[] got = nfs(() -> nfsClient.read(f, off, len));
                int expect = (int) Math.max(0, Math.min(model.length - off, Math.min(len, Math.min(1 << 20, SMALL_CHUNK - off % SMALL_CHUNK))));
                assertThat(got.length).as("step %d: read of %d at %d (size %d)", step, len, off, model.length).isLessThanOrEqualTo(len);
                if (got.length > 0) {
                    assertThat(got).as("step %d: read at %d", step, off).isEqualTo(Arrays.copyOfRange(model, (int) off, (int) off + got.length));
                } else {
                    assertThat(expect).as("step %d: an empty read before the end", step).isZero();
                }
            } else {
                nfs(() -> nfsClient.commit(f.fh()));
            }
            assertThat(nfs(() -> nfsClient.size(f.fh()))).as("step %d: size", step).isEqualTo((long) model.length);
        }
        nfs(() -> nfsClient.commit(f.fh()));
        assertThat(readAll(f, model.length)).isEqualTo(model);
        assertThat(read("/model")).as("through the cluster's own client").isEqualTo(model);
    }

    /**
     * A gateway whose bounds are sized to a small heap ({@code ClusterFs.Memory}, as {@code cairn nfs} sizes them) holds
     * no more than those bounds, commits on the way, and loses nothing.
     */
    @Test void aGatewaySizedToASmallHeapHoldsNoMoreThanItsBounds() {
        start(3);
        ClusterFs.Memory small = ClusterFs.Memory.forHeap(16L << 20); // a quarter of the defaults
        ClusterFs fs = new ClusterFs(c.client(), c.client().env().clock(), small);
        long inode = run(() -> c.client().create("/small", 1 << 20, StorageClass.replicated(2))).inode();
        int piece = 256 << 10;
        long total = small.fileHeldBytes() * 3 + 3 * piece;
        long maxHeld = 0;
        for (long off = 0; off < total; off += piece) {
            long at = off;
            run(() -> fs.write(inode, at, Oracle.content(at / piece, piece), false));
            maxHeld = Math.max(maxHeld, fs.heldBytes());
        }
        assertThat(maxHeld).as("held for writes not yet committed").isLessThanOrEqualTo(small.fileHeldBytes() + piece);
        assertThat(info("/small").attr().size()).as("committed on the way").isGreaterThan(0);
        run(() -> fs.commit(inode));
        byte[] back = read("/small");
        assertThat(back.length).isEqualTo((int) total);
        for (long o = 0; o < total; o += piece) {
            assertThat(Arrays.copyOfRange(back, (int) o, (int) o + piece)).as("at " + o).isEqualTo(Oracle.content(o / piece, piece));
        }
    }

    /**
     * A sequential writer past the write-behind bound: the gateway commits on the way and never holds more than
     * its bound, and the writes all land.
     */
    @Test void aLongSequentialWriteIsCommittedOnTheWayInBoundedMemory() {
        start(3);
        OpenFile f = nfs(() -> nfsClient.open(root, "long", true));
        int piece = 1 << 20;
        long total = ClusterFs.MAX_FILE_HELD_BYTES * 2 + 5 * piece;
        long maxHeld = 0;
        for (long off = 0; off < total; off += (long) piece * IN_FLIGHT) {
            long at = off;
            nfs(() -> {
                List<Promise<Nfs4Client.WriteResult>> all = new ArrayList<>();
                for (int i = 0; i < IN_FLIGHT && at + (long) i * piece < total; i++) {
                    long o = at + (long) i * piece;
                    all.add(nfsClient.write(f, o, Oracle.content(o / piece, piece), Nfs4Client.UNSTABLE));
                }
                return Promise.all(all);
            });
            maxHeld = Math.max(maxHeld, fs().heldBytes());
        }
        assertThat(maxHeld).as("held for writes not yet committed").isLessThanOrEqualTo(ClusterFs.MAX_FILE_HELD_BYTES + (long) IN_FLIGHT * piece);
        assertThat(info("/long").attr().size()).as("committed on the way, before any COMMIT").isGreaterThan(0);
        nfs(() -> nfsClient.commit(f.fh()));
        assertThat(info("/long").attr().size()).isEqualTo(total);
        for (long o : new long[] {0, total / 2 / piece * piece, total - piece}) {
            byte[] got = nfs(() -> nfsClient.read(f, o, piece));
            assertThat(got).isEqualTo(Oracle.content(o / piece, piece));
        }
    }

    /**
     * An overwrite not yet committed when every chunkserver loses power (its writes torn): the bytes
     * acknowledged before it all read back, and each overwritten byte is the old one or the new one. An overwrite
     * committed before the cut is all there.
     */
    @Test void anOverwriteTornByAClusterPowerCutLeavesTheCommittedBytes() {
        start(3);
        OpenFile f = smallChunkFile("torn", StorageClass.replicated(3));
        int size = 3 * SMALL_CHUNK;
        byte[] old = Oracle.content(1, size);
        nfs(() -> nfsClient.write(f, 0, old, Nfs4Client.FILE_SYNC));
        byte[] committedOverwrite = Oracle.content(2, 100_000);
        nfs(() -> nfsClient.write(f, 10_000, committedOverwrite, Nfs4Client.UNSTABLE));
        nfs(() -> nfsClient.commit(f.fh()));
        byte[] acked = apply(old.clone(), 10_000, committedOverwrite);
        // an overwrite across two chunk boundaries, taken by every copy, never committed
        int at = SMALL_CHUNK - 70_000;
        byte[] fresh = Oracle.content(3, SMALL_CHUNK + 140_000);
        for (int off = 0; off < fresh.length; off += 32 * 1024) {
            int o = off;
            nfs(() -> nfsClient.write(f, at + o, Arrays.copyOfRange(fresh, o, Math.min(fresh.length, o + 32 * 1024)), Nfs4Client.UNSTABLE));
        }
        powerCutEverywhereThenRestart();
        byte[] got = read("/torn");
        assertThat(got.length).isEqualTo(size);
        for (int i = 0; i < size; i++) {
            boolean overwritten = i >= at && i < at + fresh.length;
            if (got[i] == acked[i] || (overwritten && got[i] == fresh[i - at])) continue;
            throw new AssertionError("byte " + i + " is " + got[i] + ": neither the acknowledged " + acked[i] + (overwritten ? " nor the new " + fresh[i - at] : ""));
        }
    }

    /**
     * WRITEs taken while a COMMIT's sync is on its way down the chain are not covered by it: the next COMMIT makes them
     * durable, and a power cut of every chunkserver after it leaves them. A sync that counted as durable whatever the
     * session held when its answer came (not what it had sent before it) let the next COMMIT answer with nothing synced.
     */
    @Test void writesTakenDuringACommitsSyncAreMadeDurableByTheNextCommit() {
        start(3);
        OpenFile f = smallChunkFile("during", StorageClass.replicated(2));
        byte[] model = Oracle.content(71, 2 * SMALL_CHUNK);
        byte[] first = model;
        nfs(() -> nfsClient.write(f, 0, first, Nfs4Client.FILE_SYNC));
        for (int round = 0; round < 8; round++) {
            long at = 5_000L + round * 20_000L;
            byte[] a = Oracle.content(100 + round, 4096);
            byte[] b = Oracle.content(200 + round, 4096);
            nfs(() -> nfsClient.write(f, at, a, Nfs4Client.UNSTABLE));
            List<Promise<Long>> calls = new ArrayList<>();
            nfs(() -> {
                calls.add(nfsClient.commit(f.fh()));
                for (int i = 0; i < 4; i++) calls.add(nfsClient.write(f, at + 4096 + i * 1024L, Arrays.copyOfRange(b, i * 1024, (i + 1) * 1024), Nfs4Client.UNSTABLE).map(r -> 0L));
                return Promise.all(calls);
            });
            nfs(() -> nfsClient.commit(f.fh()));
            model = apply(apply(model, at, a), at + 4096, b);
        }
        powerCutEverywhereThenRestart();
        assertThat(read("/during")).isEqualTo(model);
    }

    /** Every chunkserver loses power (its unsynced writes torn) as the gateway crashes; all come back 5 s later. */
    void powerCutEverywhereThenRestart() {
        for (SimHost h : c.chunkservers()) h.powerLoss(true);
        gateway.crash();
        sim.runUntil(sim.now() + 5 * SECOND);
        for (SimHost h : c.chunkservers()) h.start();
        gateway.start();
        sim.runUntil(sim.now() + 30 * SECOND);
    }

    /** A second gateway, and an NFS client of it that has {@code name} open. */
    record Second(SimHost host, Nfs4Client client, OpenFile file) {}

    Second secondGatewayWith(String name) {
        SimHost second = world.addHost("nfs2", new Address("nfs2", 2049), 0, env -> new NfsGateway(env, new Address("master", SimCluster.MASTER_PORT)));
        second.start();
        sim.runUntil(sim.now() + SECOND);
        CompoundState.Connection conn = new CompoundState.Connection(77, "127.0.0.1");
        Nfs4Client other = new Nfs4Client(record -> ((NfsGateway) second.node()).service().handle(record, conn), 0, 0, "other");
        sim.await(second, other::connect, 60 * SECOND);
        byte[] otherRoot = sim.await(second, () -> other.lookup("/"), 60 * SECOND);
        return new Second(second, other, sim.await(second, () -> other.open(otherRoot, name, false), 60 * SECOND));
    }

    /** Two gateways write the same chunk in turn: each commit holds what its writer wrote, over what the other committed. */
    @Test void twoWritersOfOneChunkInTurn() {
        start(3);
        OpenFile f = smallChunkFile("shared", StorageClass.replicated(2));
        Second two = secondGatewayWith("shared");
        SimHost second = two.host();
        Nfs4Client other = two.client();
        OpenFile g = two.file();

        byte[] model = new byte[0];
        for (int round = 0; round < 6; round++) {
            byte[] data = Oracle.content(100 + round, 50_000);
            long off = round * 30_000L;
            if (round % 2 == 0) {
                nfs(() -> nfsClient.write(f, off, data, Nfs4Client.UNSTABLE));
                nfs(() -> nfsClient.commit(f.fh()));
            } else {
                sim.await(second, () -> other.write(g, off, data, Nfs4Client.UNSTABLE), 60 * SECOND);
                sim.await(second, () -> other.commit(g.fh()), 60 * SECOND);
            }
            model = apply(model, off, data);
            assertThat(read("/shared")).as("after round %d", round).isEqualTo(model);
        }
    }

    /** On a cluster of three chunkservers, a replicated(2) file of small chunks holding {@code bytes}, written FILE_SYNC over NFS. */
    OpenFile syncedFileOfThreeServers(String name, byte[] bytes) {
        start(3);
        OpenFile f = smallChunkFile(name, StorageClass.replicated(2));
        nfs(() -> nfsClient.write(f, 0, bytes, Nfs4Client.FILE_SYNC));
        return f;
    }

    /**
     * Sim seeds 5386 and 5474: a gateway holding uncommitted writes (so its idea of the file's end is not refreshed)
     * writes past the end it knows, after another gateway grew the file and committed: the gap between the two ends
     * holds the other writer's committed bytes, which a write of zeros over it (sent, then sent again under the
     * lease the other writer's bump forced) used to replace.
     */
    @Test void aWriteBeyondAnOutdatedEndKeepsTheBytesAnotherWriterCommittedThere() {
        byte[] base = Oracle.content(1, 10_000);
        OpenFile f = syncedFileOfThreeServers("grown", base);
        Second two = secondGatewayWith("grown");
        byte[] inPlace = Oracle.content(2, 1000);
        sim.await(two.host(), () -> two.client().write(two.file(), 5000, inPlace, Nfs4Client.UNSTABLE), 60 * SECOND); // held, uncommitted
        byte[] grown = Oracle.content(3, 30_000);
        nfs(() -> nfsClient.write(f, 10_000, grown, Nfs4Client.UNSTABLE));
        nfs(() -> nfsClient.commit(f.fh()));
        byte[] past = Oracle.content(4, 1000);
        sim.await(two.host(), () -> two.client().write(two.file(), 60_000, past, Nfs4Client.UNSTABLE), 60 * SECOND);
        sim.await(two.host(), () -> two.client().commit(two.file().fh()), 60 * SECOND);
        byte[] model = apply(apply(apply(base, 5000, inPlace), 10_000, grown), 60_000, past);
        assertThat(read("/grown")).isEqualTo(model);
    }

    /**
     * Bytes a writer sent past the file's end and never committed (its lease was taken over) are not the file's:
     * when another writer grows the file over them, the gap reads zeros (the takeover's bump cut the copies to the
     * committed length), not the lost writer's bytes.
     */
    @Test void bytesNeverCommittedPastTheEndReadAsZerosWhenAnotherWriterGrowsTheFile() {
        byte[] base = Oracle.content(5, 10_000);
        OpenFile f = syncedFileOfThreeServers("lost", base);
        Second two = secondGatewayWith("lost");
        sim.await(two.host(), () -> two.client().write(two.file(), 10_000, Oracle.content(6, 20_000), Nfs4Client.UNSTABLE), 60 * SECOND);
        two.host().crash(); // its writes reached the copies and are never committed
        byte[] past = Oracle.content(7, 1000);
        nfs(() -> nfsClient.write(f, 50_000, past, Nfs4Client.FILE_SYNC));
        assertThat(read("/lost")).isEqualTo(apply(base, 50_000, past));
    }

    /**
     * 60 s seed 6216: a gateway's writes were lost (no copy of their chunk reachable for eight leases); it took more
     * writes after that, and the COMMIT reporting the loss answered IO. The later writes go with it: kept, they held
     * this gateway's idea of the file's length at their own end, so after another gateway committed the file longer,
     * GETATTR and READ through this one stopped short of the other writer's bytes.
     */
    @Test void afterACommitReportsLostWritesTheGatewaySeesTheLengthAnotherWriterCommitted() {
        byte[] base = Oracle.content(11, 10_000);
        OpenFile f = syncedFileOfThreeServers("relost", base);
        Second two = secondGatewayWith("relost");
        for (SimHost h : c.chunkservers()) h.crash();
        assertThatThrownBy(() -> nfs(() -> nfsClient.write(f, 5000, Oracle.content(12, 1000), Nfs4Client.UNSTABLE)))
                .as("no copy to take it").isInstanceOf(RuntimeException.class);
        for (SimHost h : c.chunkservers()) h.start();
        sim.runUntil(sim.now() + 10 * SECOND);
        nfs(() -> nfsClient.write(f, 12_000, Oracle.content(13, 2000), Nfs4Client.UNSTABLE)); // taken after the loss
        assertThatThrownBy(() -> nfs(() -> nfsClient.commit(f.fh()))).as("the loss is reported").isInstanceOf(RuntimeException.class);
        byte[] grown = Oracle.content(14, 10_000);
        sim.await(two.host(), () -> two.client().write(two.file(), 20_000, grown, Nfs4Client.UNSTABLE), 60 * SECOND);
        sim.await(two.host(), () -> two.client().commit(two.file().fh()), 60 * SECOND);
        byte[] model = apply(base, 20_000, grown);
        assertThat(nfs(() -> nfsClient.size(f.fh()))).as("GETATTR through the first gateway").isEqualTo((long) model.length);
        assertThat(nfs(() -> nfsClient.read(f, 20_000, 10_000))).as("READ through it").isEqualTo(grown);
        assertThat(read("/relost")).isEqualTo(model);
    }

    /**
     * Close-to-open over writes held here that no client committed (group sim seed 2583: an NFS client gave a change
     * up after an error and closed the file; another writer then committed the file longer; an OPEN through the first
     * gateway still answered from the given-up writes, and its READ stopped 37 KB short). An OPEN must see the other
     * writer's change: the held writes are committed first if they can be (a replicated chunk's, sent again under a new
     * lease), else lost — an erasure-coded image read from a chunk the other writer's rewrite replaced — and then the
     * next COMMIT through this gateway says so.
     */
    @ParameterizedTest
    @ValueSource(strings = {"replicated", "ec"})
    void anOpenSeesWhatAnotherWriterCommittedOverWritesHeldHere(String kind) {
        start(4);
        String name = "cto-" + kind;
        OpenFile f = smallChunkFile(name, classNamed(kind));
        byte[] base = Oracle.content(61, 10_000);
        nfs(() -> nfsClient.write(f, 0, base, Nfs4Client.FILE_SYNC));
        Second two = secondGatewayWith(name);
        byte[] given = Oracle.content(62, 1000);
        nfs(() -> nfsClient.write(f, 2000, given, Nfs4Client.UNSTABLE)); // held here; its client gives the change up
        nfs(() -> nfsClient.close(f));
        byte[] grown = Oracle.content(63, 20_000);
        sim.await(two.host(), () -> two.client().write(two.file(), 5000, grown, Nfs4Client.FILE_SYNC), 60 * SECOND);
        byte[] model = apply(base, 5000, grown);

        OpenFile again = nfs(() -> nfsClient.open(root, name, false));
        assertThat(nfs(() -> nfsClient.size(again.fh()))).as("GETATTR after the OPEN").isEqualTo((long) model.length);
        byte[] seen = readAll(again, model.length);
        assertThat(seen).as("READ after the OPEN").hasSize(model.length);
        assertThat(Arrays.copyOfRange(seen, 5000, model.length)).isEqualTo(grown);
        byte[] at2000 = Arrays.copyOfRange(seen, 2000, 3000);
        assertThat(Arrays.copyOf(seen, 2000)).isEqualTo(Arrays.copyOf(base, 2000));
        if (kind.equals("ec")) {
            // the other writer's rewrite replaced the chunk the held image was read from: the image can never go up
            assertThat(at2000).isEqualTo(Arrays.copyOfRange(base, 2000, 3000));
            assertThatThrownBy(() -> nfs(() -> nfsClient.commit(again.fh()))).as("the given-up writes were never made durable")
                    .satisfies(e -> assertThat(NfsGatewaySimTest.status(e)).isEqualTo(Nfs4Status.IO));
        } else {
            // a replicated chunk's session keeps the bytes it sent and sends them again under a new lease: the OPEN
            // made them durable after the other writer's (a server may commit UNSTABLE writes whenever it likes)
            assertThat(at2000).isEqualTo(given);
            nfs(() -> nfsClient.commit(again.fh()));
        }
        assertThat(read("/" + name)).isEqualTo(seen);
    }

    /**
     * Writes no client commits are committed in the background once no WRITE has reached their file for
     * {@link ClusterFs#WRITE_BACK_AFTER_NANOS} (as a Linux server writes back dirty pages): other clients then see them,
     * and a gateway crash no longer loses them.
     */
    @ParameterizedTest
    @ValueSource(strings = {"replicated", "ec"})
    void writesNoClientCommitsAreWrittenBackWhenIdle(String kind) {
        start(4);
        String name = "wb-" + kind;
        OpenFile f = smallChunkFile(name, classNamed(kind));
        byte[] data = Oracle.content(71, 100_000);
        nfs(() -> nfsClient.write(f, 0, data, Nfs4Client.UNSTABLE));
        sim.runUntil(sim.now() + ClusterFs.WRITE_BACK_AFTER_NANOS / 2);
        assertThat(read("/" + name)).as("held, not yet written back").isEmpty();
        assertThat(fs().heldBytes()).isPositive();
        sim.runUntil(sim.now() + ClusterFs.WRITE_BACK_AFTER_NANOS / 2 + 10 * SECOND);
        assertThat(fs().heldBytes()).as("written back").isZero();
        gateway.crash();
        assertThat(read("/" + name)).as("after the gateway's crash").isEqualTo(data);
    }

    /** ... where the other change touches no data (a mode change): the OPEN commits the held writes, and nothing is lost. */
    @Test void anOpenAfterAnotherClientsModeChangeCommitsTheWritesHeldHere() {
        start(4);
        OpenFile f = smallChunkFile("cto-mode", StorageClass.ec(2, 1));
        byte[] base = Oracle.content(64, 10_000);
        nfs(() -> nfsClient.write(f, 0, base, Nfs4Client.FILE_SYNC));
        byte[] held = Oracle.content(65, 3000);
        nfs(() -> nfsClient.write(f, 9000, held, Nfs4Client.UNSTABLE));
        CairnClient cc = c.client();
        run(() -> cc.lookup("/cto-mode").flatMap(a -> cc.setAttr(a.inode(), new dev.cairn.core.proto.Types.AttrChange(0600, -1, -1, -1, -1, -1))));
        OpenFile again = nfs(() -> nfsClient.open(root, "cto-mode", false));
        byte[] model = apply(base, 9000, held);
        assertThat(read("/cto-mode")).as("committed by the OPEN").isEqualTo(model);
        assertThat(readAll(again, model.length)).isEqualTo(model);
        nfs(() -> nfsClient.commit(again.fh()));
    }

    /**
     * SEEK (RFC 7862 §15.11) over a sparse file of small chunks: data in chunks 0 and 2, chunk 1 a hole the file grew
     * over, chunk 3 a hole a SETATTR grew the file into. A chunk holding writes not yet committed is data; the end of
     * the file is a hole; past the end, or data asked for where only a hole follows, is NXIO.
     */
    @Test void seekFindsDataAndHolesAtChunkGranularity() {
        start(3);
        long cs = SMALL_CHUNK;
        OpenFile f = smallChunkFile("sparse", StorageClass.replicated(2));
        nfs(() -> nfsClient.write(f, 0, Oracle.content(1, 1000), Nfs4Client.FILE_SYNC));
        nfs(() -> nfsClient.write(f, 2 * cs + 10, Oracle.content(2, 1000), Nfs4Client.FILE_SYNC));
        long size = 4 * cs - 5;
        nfs(() -> nfsClient.truncate(f, size));
        assertThat(seek(f, 0, true)).isEqualTo(new Nfs4Client.SeekResult(0, false));
        assertThat(seek(f, 0, false)).isEqualTo(new Nfs4Client.SeekResult(cs, false));
        assertThat(seek(f, cs + 5, true)).isEqualTo(new Nfs4Client.SeekResult(2 * cs, false));
        assertThat(seek(f, cs + 5, false)).isEqualTo(new Nfs4Client.SeekResult(cs + 5, false));
        assertThat(seek(f, 2 * cs + 100, false)).isEqualTo(new Nfs4Client.SeekResult(3 * cs, false));
        assertThat(seek(f, 3 * cs + 7, false)).isEqualTo(new Nfs4Client.SeekResult(3 * cs + 7, false));
        assertThat(seekStatus(f, 3 * cs, true)).as("only a hole follows").isEqualTo(Nfs4Status.NXIO);
        assertThat(seekStatus(f, size, false)).as("at the end").isEqualTo(Nfs4Status.NXIO);
        assertThat(seekStatus(f, size + 100, true)).isEqualTo(Nfs4Status.NXIO);
        // a write into the hole of chunk 1, not yet committed: data already, to this gateway
        nfs(() -> nfsClient.write(f, cs + 3, Oracle.content(3, 100), Nfs4Client.UNSTABLE));
        assertThat(seek(f, 0, false)).isEqualTo(new Nfs4Client.SeekResult(3 * cs, false));
        nfs(() -> nfsClient.commit(f.fh()));
        assertThat(seek(f, cs, true)).isEqualTo(new Nfs4Client.SeekResult(cs, false));
        // a file with no hole before its end: the hole is the end itself
        OpenFile whole = smallChunkFile("whole", StorageClass.replicated(2));
        nfs(() -> nfsClient.write(whole, 0, Oracle.content(4, 5000), Nfs4Client.FILE_SYNC));
        assertThat(seek(whole, 10, false)).isEqualTo(new Nfs4Client.SeekResult(5000, true));
    }

    /**
     * READ_PLUS (RFC 7862 §15.10) on the same kind of file: data where data is (zeros inside a written chunk included),
     * holes reported as holes without their bytes, a hole written into by this gateway is data at once, eof as READ's.
     */
    @Test void readPlusAnswersHolesWithoutTheirBytes() {
        start(3);
        long cs = SMALL_CHUNK;
        OpenFile f = smallChunkFile("sparse", StorageClass.replicated(2));
        byte[] first = Oracle.content(1, 1000), third = Oracle.content(2, 1000);
        nfs(() -> nfsClient.write(f, 0, first, Nfs4Client.FILE_SYNC));
        nfs(() -> nfsClient.write(f, 2 * cs + 10, third, Nfs4Client.FILE_SYNC));
        long size = 4 * cs - 5;
        nfs(() -> nfsClient.truncate(f, size));
        Nfs4Client.ReadPlusResult data = readPlus(f, 0, 4096);
        assertThat(data.hole()).isFalse();
        assertThat(Arrays.copyOf(data.data(), 1000)).isEqualTo(first);
        assertThat(data.data()).hasSize(4096);
        assertThat(readPlus(f, 1000, 100).hole()).as("zeros inside a written chunk are data").isFalse();
        Nfs4Client.ReadPlusResult hole = readPlus(f, cs + 5, 8192);
        assertThat(hole).isEqualTo(new Nfs4Client.ReadPlusResult(false, cs + 5, null, 8192));
        assertThat(Arrays.copyOfRange(readPlus(f, 2 * cs, 2000).data(), 10, 1010)).isEqualTo(third);
        Nfs4Client.ReadPlusResult tail = readPlus(f, 3 * cs + 7, 1 << 20);
        assertThat(tail).as("the grown-over tail, to the end").isEqualTo(new Nfs4Client.ReadPlusResult(true, 3 * cs + 7, null, cs - 12));
        Nfs4Client.ReadPlusResult end = readPlus(f, size, 100);
        assertThat(end.eof()).isTrue();
        assertThat(end.data()).isEmpty();
        // a write into the hole of chunk 1, not yet committed: data at once; and after the commit
        byte[] into = Oracle.content(3, 100);
        nfs(() -> nfsClient.write(f, cs + 3, into, Nfs4Client.UNSTABLE));
        assertThat(Arrays.copyOfRange(readPlus(f, cs, 200).data(), 3, 103)).isEqualTo(into);
        nfs(() -> nfsClient.commit(f.fh()));
        assertThat(Arrays.copyOfRange(readPlus(f, cs, 200).data(), 3, 103)).isEqualTo(into);
    }

    /**
     * DEALLOCATE across a chunk boundary and past the end: the range reads as zeros, the bytes around it and the size
     * stay, and it is durable when answered (every chunkserver's power cut and the gateway's crash right after lose
     * nothing of it). Replicated and erasure-coded files alike.
     */
    @Test void deallocateZerosARangeDurablyAndKeepsTheSize() {
        start(5);
        java.util.Map<String, byte[]> models = new java.util.LinkedHashMap<>();
        for (StorageClass cls : List.of(StorageClass.replicated(2), StorageClass.ec(2, 1))) {
            String name = "punched-" + cls.k();
            OpenFile f = smallChunkFile(name, cls);
            int size = 2 * SMALL_CHUNK + 5000;
            byte[] model = Oracle.content(9, size);
            nfs(() -> nfsClient.write(f, 0, model, Nfs4Client.FILE_SYNC));
            int at = SMALL_CHUNK - 3000;
            nfs(() -> nfsClient.deallocate(f, at, 6000));
            Arrays.fill(model, at, at + 6000, (byte) 0);
            int tail = size - 100;
            nfs(() -> nfsClient.deallocate(f, tail, 1 << 20)); // past the end: only up to it
            Arrays.fill(model, tail, size, (byte) 0);
            assertThat(nfs(() -> nfsClient.size(f.fh()))).as("%s: the size stays", cls).isEqualTo((long) size);
            // READs end at a chunk's end: one each side of the boundary
            assertThat(nfs(() -> nfsClient.read(f, at - 10, 3010))).as("%s: read through the gateway", cls).isEqualTo(Arrays.copyOfRange(model, at - 10, at + 3000));
            assertThat(nfs(() -> nfsClient.read(f, at + 3000, 3010))).as("%s: read through the gateway", cls).isEqualTo(Arrays.copyOfRange(model, at + 3000, at + 6010));
            models.put("/" + name, model);
        }
        powerCutEverywhereThenRestart();
        models.forEach((path, model) -> assertThat(read(path)).as("%s: zeros where deallocated, durable", path).isEqualTo(model));
    }

    Nfs4Client.ReadPlusResult readPlus(OpenFile f, long offset, int count) { return nfs(() -> nfsClient.readPlus(f, offset, count)); }

    Nfs4Client.SeekResult seek(OpenFile f, long offset, boolean data) { return nfs(() -> nfsClient.seek(f, offset, data)); }

    int seekStatus(OpenFile f, long offset, boolean data) {
        try {
            seek(f, offset, data);
            return Nfs4Status.NFS4_OK;
        } catch (RuntimeException e) {
            return NfsGatewaySimTest.status(e);
        }
    }

    /**
     * A writer pausing longer than the chunkservers' write window in the middle of an overwrite: the next write
     * goes under a new lease (the session sends every write not yet committed again), and the COMMIT holds all.
     */
    @Test void aWriterWhoseLeaseExpiresMidOverwriteStillCommitsEverything() {
        start(3);
        OpenFile f = smallChunkFile("slow", StorageClass.replicated(2));
        byte[] first = Oracle.content(9, 2 * SMALL_CHUNK);
        nfs(() -> nfsClient.write(f, 0, first, Nfs4Client.FILE_SYNC));
        byte[] model = first;
        for (int i = 0; i < 6; i++) {
            byte[] data = Oracle.content(200 + i, 20_000);
            long off = 40_000L * i + 1234;
            nfs(() -> nfsClient.write(f, off, data, Nfs4Client.UNSTABLE));
            model = apply(model, off, data);
            sim.runUntil(sim.now() + 40 * SECOND); // past the 30 s write window
        }
        nfs(() -> nfsClient.commit(f.fh()));
        assertThat(read("/slow")).isEqualTo(model);
    }

    /**
     * A COMMIT whose sync fails on a dead copy, while another WRITE arrives: the session takes a new lease and sends both
     * WRITEs again, its sync then covers both, and the gateway lets go of both after the commit, so the length committed
     * must cover both. Committed short of the later one (the file's size when the COMMIT began), the next lease cut the
     * copies back to that length and the later WRITE's bytes were gone with nothing left to send again (60 s sim seed 466).
     */
    @Test void aWriteTakenWhileACommitWaitsForANewLeaseIsCommittedByIt() {
        start(4);
        OpenFile f = smallChunkFile("race", StorageClass.replicated(2));
        byte[] model = Oracle.content(61, 100_000);
        byte[] first = model;
        nfs(() -> nfsClient.write(f, 0, first, Nfs4Client.FILE_SYNC));
        byte[] a = Oracle.content(62, 10_000);
        byte[] b = Oracle.content(63, 10_000);
        nfs(() -> nfsClient.write(f, first.length, a, Nfs4Client.UNSTABLE));
        host(current(info("/race").chunks().get(0)).get(0)).crash();
        nfs(() -> Promise.all(List.of(
                nfsClient.commit(f.fh()),
                nfsClient.write(f, first.length + a.length, b, Nfs4Client.UNSTABLE).map(r -> 0L))));
        model = apply(apply(model, first.length, a), first.length + a.length, b);
        byte[] last = Oracle.content(64, 1000);
        nfs(() -> nfsClient.write(f, 0, last, Nfs4Client.UNSTABLE));
        nfs(() -> nfsClient.commit(f.fh()));
        model = apply(model, 0, last);
        assertThat(read("/race")).as("through the cluster's own client").isEqualTo(model);
        assertThat(readAll(f, model.length)).isEqualTo(model);
    }

    /**
     * A COMMIT whose length commit the master never handles (it crashes as the commit arrives)
     * fails, and the writes its sync made durable stay held: no commit covers them yet. A WRITE to the same chunk then
     * takes a new lease, whose bump cuts the copies back to the committed length, so the held writes go out again
     * under it and the COMMIT retried covers them. Let go of once synced rather than once committed, they were cut
     * with nothing left to send again, and the retried COMMIT acknowledged zeros.
     */
    @Test void writesSyncedForACommitTheMasterLostAreSentAgainUnderTheNextLease() {
        start(4);
        assertThat(commitLostThenWriteAgain()).isEqualTo(lostCommitModel);
    }

    /** The same with the gateway letting go of the synced writes before the commit is answered: the test fails. */
    @Test void writesLetGoOfBeforeTheirCommitIsAnsweredAreLostWithIt() {
        start(4);
        sim.plant(Set.of(dev.cairn.core.env.Plant.RELEASE_BEFORE_COMMIT));
        byte[] got;
        try {
            got = commitLostThenWriteAgain();
        } catch (dev.cairn.core.proto.CairnException e) {
            // unreadable: the chunk's copies were cut short of what the last COMMIT acknowledged
            assertThat(e.getMessage()).contains("no readable copy");
            return;
        }
        assertThat(got).as("read back with the plant").isNotEqualTo(lostCommitModel);
    }

    byte[] lostCommitModel;

    /** The scenario of the two tests above; returns the file as read back through the cluster's client (and checks NFS agrees). */
    byte[] commitLostThenWriteAgain() {
        OpenFile f = smallChunkFile("lostcommit", StorageClass.replicated(2));
        byte[] first = Oracle.content(71, 50_000);
        nfs(() -> nfsClient.write(f, 0, first, Nfs4Client.FILE_SYNC));
        byte[] a = Oracle.content(72, 20_000);
        nfs(() -> nfsClient.write(f, first.length, a, Nfs4Client.UNSTABLE));
        byte[] model = apply(first, first.length, a);
        SimHost master = c.master();
        boolean[] crashed = {false};
        sim.onDeliver((to, m) -> {
            if (to == master && m instanceof dev.cairn.core.proto.MasterProtocol.CommitLength && !crashed[0]) {
                crashed[0] = true;
                master.crash(); // as it arrives: never handled
            }
        });
        assertThat(status(() -> nfsClient.commit(f.fh()))).as("a COMMIT whose length commit was lost").isNotEqualTo(Nfs4Status.NFS4_OK);
        assertThat(crashed[0]).isTrue();
        master.start();
        sim.runUntil(sim.now() + 3 * SECOND); // every chunkserver has registered with the restarted master
        assertThat(info("/lostcommit").attr().size()).as("the length commit was lost").isEqualTo(first.length);
        byte[] b = Oracle.content(73, 1000);
        nfs(() -> nfsClient.write(f, 1000, b, Nfs4Client.UNSTABLE));
        model = apply(model, 1000, b);
        for (int tries = 0; status(() -> nfsClient.commit(f.fh())) != Nfs4Status.NFS4_OK; tries++) {
            assertThat(tries).as("COMMIT retried").isLessThan(20);
            sim.runUntil(sim.now() + SECOND / 5);
        }
        lostCommitModel = model;
        byte[] got = read("/lostcommit");
        assertThat(readAll(f, model.length)).as("over NFS, as through the cluster's client").isEqualTo(got);
        return got;
    }

    /** A COMMIT after the writes' chunkserver died: the session sends them again to a new chain first. */
    @Test void writesTakenByACopyThatDiesBeforeTheCommitAreSentAgain() {
        start(4);
        OpenFile f = smallChunkFile("resend", StorageClass.replicated(2));
        byte[] data = Oracle.content(31, 3 * SMALL_CHUNK);
        for (int off = 0; off < data.length; off += 64 * 1024) {
            int o = off;
            nfs(() -> nfsClient.write(f, o, Arrays.copyOfRange(data, o, o + 64 * 1024), Nfs4Client.UNSTABLE));
        }
        c.chunkservers().get(0).crash();
        c.chunkservers().get(1).crash();
        nfs(() -> nfsClient.commit(f.fh()));
        assertThat(read("/resend")).isEqualTo(data);
    }

    /**
     * An erasure-coded file written sequentially over NFS is durable at COMMIT. Its committed chunks change in place
     * too (writes into them, a truncate into a chunk, a FILE_SYNC write): each changed chunk is written afresh under
     * a new id and swapped in at the COMMIT (it was refused: issue 25). Reads see the model before and after the
     * COMMIT, and the replaced chunks' parts are deleted, none left behind.
     */
    /**
     * A master restart between an erasure-coded rewrite's upload and its commit: the restarted master no longer knows
     * the rewrite (pending rewrites live in the leader's memory) and refuses the commit STALE. The gateway still holds
     * the images: it answers the COMMIT DELAY, uploads them again, and the client's retry commits every WRITE. The
     * master is crashed every half millisecond into a COMMIT in turn, so some crash lands between upload and commit.
     */
    @Test void anErasureCodedRewriteForgottenByARestartedMasterIsUploadedAgain() {
        start(4);
        OpenFile f = smallChunkFile("ecr", StorageClass.ec(2, 1));
        byte[] first = Oracle.content(51, SMALL_CHUNK);
        nfs(() -> nfsClient.write(f, 0, first, Nfs4Client.FILE_SYNC));
        byte[] model = first;
        for (int step = 0; step < 60 && fs().uploadsAgain() == 0; step++) {
            double ms = step / 2.0;
            long at = 10 + 1000L * step;
            byte[] change = Oracle.content(100 + step, 100);
            nfs(() -> nfsClient.write(f, at, change, Nfs4Client.UNSTABLE));
            model = apply(model, at, change);
            @SuppressWarnings("unchecked") Promise<Long>[] commit = new Promise[1];
            // started without running the clock on (as await does, 10 ms at a time): the crash lands ms into the COMMIT
            sim.at(0, gateway, dev.cairn.sim.runtime.Simulation.Kind.TASK, 0, () -> commit[0] = nfsClient.commit(f.fh()));
            sim.runUntil(sim.now() + step * 500_000L);
            c.master().crash();
            sim.runUntil(sim.now() + SECOND);
            c.master().start();
            int delays = 0;
            for (Promise<Long> p = commit[0]; ; p = null) {
                Promise<Long> attempt = p;
                try {
                    nfs(() -> attempt != null ? attempt : nfsClient.commit(f.fh()));
                    break;
                } catch (RuntimeException e) {
                    assertThat(NfsGatewaySimTest.status(e)).as("a COMMIT after a master restart, %.1f ms in", ms).isEqualTo(Nfs4Status.DELAY);
                    assertThat(++delays).isLessThan(50);
                    sim.runUntil(sim.now() + SECOND / 5);
                }
            }
            sim.runUntil(sim.now() + 3 * SECOND); // every chunkserver has registered with the restarted master
            assertThat(read("/ecr")).as("%.1f ms in", ms).isEqualTo(model);
        }
        assertThat(fs().uploadsAgain()).as("a crash landed between an upload and its commit").isPositive();
    }

    /**
     * A sequential writer of an erasure-coded file has its full chunks uploaded and committed on the way, before any
     * COMMIT: the gateway holds the image of the chunk being written only (bounded memory whatever the file's size),
     * and the committed size covers every full chunk behind it. The COMMIT then covers the rest.
     */
    @Test void aSequentialErasureCodedWriterCommitsFullChunksOnTheWay() {
        start(4);
        OpenFile f = smallChunkFile("ecseq", StorageClass.ec(2, 1));
        byte[] data = Oracle.content(81, 3 * SMALL_CHUNK + 10_000);
        CairnClient cc = c.client();
        for (int off = 0; off < data.length; off += 64 * 1024) {
            int o = off;
            nfs(() -> nfsClient.write(f, o, Arrays.copyOfRange(data, o, Math.min(data.length, o + 64 * 1024)), Nfs4Client.UNSTABLE));
            long writtenTo = Math.min(data.length, o + 64 * 1024L);
            long full = writtenTo / SMALL_CHUNK * SMALL_CHUNK; // chunks wholly written so far
            long committed = run(() -> cc.lookup("/ecseq")).size();
            // a chunk just filled goes up with the next WRITE, which shows the writer has left it
            assertThat(committed).as("committed after writing to %d", writtenTo).isEqualTo(full == writtenTo ? Math.max(0, full - SMALL_CHUNK) : full);
            assertThat(fs().heldBytes()).as("held after writing to %d", writtenTo).isLessThanOrEqualTo(SMALL_CHUNK);
        }
        nfs(() -> nfsClient.commit(f.fh()));
        assertThat(read("/ecseq")).isEqualTo(data);
        assertThat(fs().heldBytes()).isZero();
    }

    @Test void anErasureCodedFileIsWrittenWholeChunksAndChangedInPlace() {
        start(4);
        OpenFile f = smallChunkFile("ec", StorageClass.ec(2, 1));
        byte[] data = Oracle.content(41, 2 * SMALL_CHUNK + 5000);
        for (int off = 0; off < data.length; off += 64 * 1024) {
            int o = off;
            nfs(() -> nfsClient.write(f, o, Arrays.copyOfRange(data, o, Math.min(data.length, o + 64 * 1024)), Nfs4Client.UNSTABLE));
        }
        nfs(() -> nfsClient.commit(f.fh()));
        assertThat(read("/ec")).isEqualTo(data);

        // into chunk 0, across chunks 0 and 1, and past the end in chunk 2
        byte[] model = writeAll(f, List.of(new long[] {100, 3, 7}, new long[] {SMALL_CHUNK - 10, 20, 8},
                new long[] {2L * SMALL_CHUNK + 4000, 3000, 9}), data);
        assertThat(readAll(f, model.length)).as("before the COMMIT, over NFS").isEqualTo(model);
        nfs(() -> nfsClient.commit(f.fh()));
        assertThat(read("/ec")).isEqualTo(model);

        nfs(() -> nfsClient.truncate(f, SMALL_CHUNK + 777));
        model = Arrays.copyOf(model, SMALL_CHUNK + 777);
        byte[] synced = Oracle.content(10, 2000);
        nfs(() -> nfsClient.write(f, 50, synced, Nfs4Client.FILE_SYNC));
        model = apply(model, 50, synced);
        assertThat(read("/ec")).isEqualTo(model);

        sim.runUntil(sim.now() + 90 * SECOND); // leases over, inventories taken
        assertThat(read("/ec")).isEqualTo(model);
        Set<Long> ids = new TreeSet<>();
        for (SimHost h : c.chunkservers()) {
            for (String name : h.diskOrNull("disk0").files()) if (ChunkFormat.chunkIdOf(name) >= 0) ids.add(ChunkFormat.chunkIdOf(name));
        }
        assertThat(ids).as("the chunks of the file, and no replaced or abandoned part").hasSize(2);
    }
}
