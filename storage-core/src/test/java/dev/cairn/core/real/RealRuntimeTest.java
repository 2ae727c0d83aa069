package dev.cairn.core.real;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.cairn.core.async.Promise;
import dev.cairn.core.env.Address;
import dev.cairn.core.env.Env;
import dev.cairn.core.env.KvBatch;
import dev.cairn.core.env.MessageHandler;
import dev.cairn.core.env.Node;
import dev.cairn.core.env.Volume;
import dev.cairn.core.proto.Ack;
import dev.cairn.core.proto.MasterProtocol.Lookup;
import dev.cairn.core.proto.Message;
import dev.cairn.core.proto.Status;
import java.io.DataOutputStream;
import java.io.InputStream;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The real runtime: volumes on disk, RocksDB, netty transport, and refusal of bad input. */
class RealRuntimeTest {
    /** A node that answers every Lookup with an Ack and records what it receives. */
    static final class EchoNode implements Node, MessageHandler {
        final Env env;
        final Address listen;
        final LinkedBlockingQueue<Message> received = new LinkedBlockingQueue<>();

        EchoNode(Env env, Address listen) {
            this.env = env;
            this.listen = listen;
        }

        @Override public void start() { env.transport().start(listen, this); }

        @Override public void onMessage(Address from, Message m) {
            received.add(m);
            if (m instanceof Lookup l) env.transport().send(from, new Ack(l.rid(), Status.OK, l.path()));
        }
    }

    @TempDir Path dir;
    final RealRuntime rt = new RealRuntime().netThreads(netThreads());

    /** Socket threads per node (0: on the node's loop, the default on small machines). */
    int netThreads() { return 0; }

    @AfterEach void close() { rt.close(); }

    static int freePort() throws Exception {
        return LoopbackPorts.take();
    }

    static <N extends Node, T> T await(RealRuntime.Handle<N> h, Function<N, Promise<T>> op) throws Exception {
        CompletableFuture<T> f = new CompletableFuture<>();
        h.run(n -> op.apply(n).onComplete((v, e) -> { if (e != null) f.completeExceptionally(e); else f.complete(v); }));
        return f.get(20, TimeUnit.SECONDS);
    }

    @Test void volumeWritesReadsSyncsRenamesAndLists() throws Exception {
        RealRuntime.Handle<EchoNode> h = rt.start("n", dir, null, List.of("disk0"), env -> new EchoNode(env, null));
        Volume v = h.env().volume("disk0");
        await(h, n -> v.write("a", 10, "hello".getBytes(StandardCharsets.UTF_8)));
        await(h, n -> v.sync("a"));
        await(h, n -> v.syncDirectory());
        byte[] got = await(h, n -> v.read("a", 8, 100));
        assertThat(got).hasSize(7);
        assertThat(new String(got, 2, 5, StandardCharsets.UTF_8)).isEqualTo("hello");
        assertThatThrownBy(() -> await(h, x -> v.checksums("missing", 0, 1, 1))).hasCauseInstanceOf(Volume.NoSuchFile.class);
        // from the device (O_DIRECT where the filesystem has it, aligned around an unaligned range): the same bytes
        byte[] device = await(h, n -> v.readFromDevice("a", 8, 100));
        assertThat(device).isEqualTo(got);
        byte[] big = new byte[3 * FileVolume.DIRECT_ALIGN + 17];
        new java.util.Random(4).nextBytes(big);
        await(h, n -> v.write("d", 5, big));
        await(h, n -> v.sync("d"));
        byte[] middle = await(h, n -> v.readFromDevice("d", 4000, 8000));
        assertThat(middle).isEqualTo(java.util.Arrays.copyOfRange(big, 3995, 3995 + 8000));
        byte[] tail = await(h, n -> v.readFromDevice("d", 12000, 4096));
        assertThat(tail).as("short at the end of the file").isEqualTo(java.util.Arrays.copyOfRange(big, 11995, big.length));
        await(h, n -> v.delete("d"));
        assertThatThrownBy(() -> await(h, x -> v.readFromDevice("missing", 0, 1))).hasCauseInstanceOf(Volume.NoSuchFile.class);
        await(h, n -> v.rename("a", "b"));
        List<String> names = await(h, n -> v.list());
        assertThat(names).containsExactly("b");
        assertThatThrownBy(() -> await(h, n -> v.read("a", 0, 1))).hasCauseInstanceOf(Volume.NoSuchFile.class);
        await(h, n -> v.delete("b"));
        await(h, n -> v.delete("b")); // deleting a missing file is fine
        List<String> none = await(h, n -> v.list());
        assertThat(none).isEmpty();
        assertThatThrownBy(() -> await(h, n -> v.write("../escape", 0, new byte[1]))).hasCauseInstanceOf(IllegalArgumentException.class);
        // the filesystem's space, as a chunkserver measures its capacity: a second volume on it shares its id
        Volume.Space space = v.space();
        assertThat(space).isNotNull();
        assertThat(space.freeBytes()).isBetween(0L, space.totalBytes());
        assertThat(space.totalBytes()).isEqualTo(java.nio.file.Files.getFileStore(dir).getTotalSpace());
        RealRuntime.Handle<EchoNode> h2 = rt.start("n2", dir, null, List.of("disk1"), env -> new EchoNode(env, null));
        assertThat(h2.env().volume("disk1").space().filesystem()).isEqualTo(space.filesystem());
    }

    /** Pieces longer than the volume's read buffer, a range starting mid-file and running past its end (zeros there). */
    @Test void volumeChecksumsArePiecewiseCrc32cOfTheBytesWithZerosPastTheEnd() throws Exception {
        RealRuntime.Handle<EchoNode> h = rt.start("c", dir, null, List.of("disk0"), env -> new EchoNode(env, null));
        Volume v = h.env().volume("disk0");
        byte[] data = new byte[200_000];
        new java.util.SplittableRandom(7).nextBytes(data);
        await(h, n -> v.write("f", 0, data));
        int offset = 1_000, length = 250_000, block = FileVolume.CHECKSUM_READ + 4_464;
        byte[] padded = java.util.Arrays.copyOfRange(data, offset, offset + length); // zeros past the end
        int[] want = new int[(length + block - 1) / block];
        for (int i = 0; i < want.length; i++) {
            java.util.zip.CRC32C c = new java.util.zip.CRC32C();
            c.update(padded, i * block, Math.min(block, length - i * block));
            want[i] = (int) c.getValue();
        }
        int[] got = await(h, n -> v.checksums("f", offset, length, block));
        assertThat(got).containsExactly(want);
        int[] none = await(h, n -> v.checksums("f", 0, 0, block));
        assertThat(none).isEmpty();
        assertThatThrownBy(() -> await(h, n -> v.checksums("f", 0, 10, 0))).hasCauseInstanceOf(IllegalArgumentException.class);
    }

    @Test void rocksKvKeepsBatchesAcrossReopen() throws Exception {
        RealRuntime.Handle<EchoNode> h = rt.start("kv", dir, null, List.of(), env -> new EchoNode(env, null));
        await(h, n -> n.env.kv().write(new KvBatch().put(b("a1"), b("x")).put(b("a2"), b("y")).put(b("b1"), b("z")), true));
        await(h, n -> n.env.kv().write(new KvBatch().delete(b("a2")), false));
        rt.stop(h);
        RealRuntime.Handle<EchoNode> h2 = rt.start("kv", dir, null, List.of(), env -> new EchoNode(env, null));
        List<String> keys = h2.call(n -> {
            List<String> out = new ArrayList<>();
            n.env.kv().scan(b("a"), (k, v) -> out.add(new String(k, StandardCharsets.UTF_8) + "=" + new String(v, StandardCharsets.UTF_8)));
            return out;
        });
        assertThat(keys).containsExactly("a1=x");
    }

    /** Group commit: 200 synced batches written at once share a few WAL fsyncs, each hears back, and all survive a reopen. */
    @Test void rocksKvSyncsManyBatchesWithFewFsyncsAndAnswersEach() throws Exception {
        RealRuntime.Handle<EchoNode> h = rt.start("kv", dir, null, List.of(), env -> new EchoNode(env, null));
        int n = 200;
        List<Integer> done = await(h, node -> {
            List<Promise<Integer>> all = new ArrayList<>();
            for (int i = 0; i < n; i++) {
                int k = i;
                all.add(node.env.kv().write(new KvBatch().put(b("g" + (1000 + k)), b("v" + k)), true).map(v -> k));
            }
            // a write made as a group hears back joins the next group
            Promise<Integer> late = all.get(0).flatMap(v -> node.env.kv().write(new KvBatch().put(b("glate"), b("x")), true)).map(v -> -1);
            all.add(late);
            return Promise.all(all);
        });
        assertThat(done).hasSize(n + 1);
        long syncs = h.call(node -> ((RocksKv) node.env.kv()).walSyncs());
        assertThat(syncs).as("fsyncs for %d synced batches", n + 1).isBetween(1L, 20L);
        rt.stop(h);
        RealRuntime.Handle<EchoNode> h2 = rt.start("kv", dir, null, List.of(), env -> new EchoNode(env, null));
        int keys = h2.call(node -> {
            int[] count = {0};
            node.env.kv().scan(b("g"), (k, v) -> { count[0]++; return true; });
            return count[0];
        });
        assertThat(keys).isEqualTo(n + 1);
    }

    @Test void messagesFlowAndMalformedOrOversizedFramesCloseOnlyTheirConnection() throws Exception {
        Address a = new Address("127.0.0.1", freePort());
        RealRuntime.Handle<EchoNode> server = rt.start("server", dir.resolve("s"), a, List.of(), env -> new EchoNode(env, a));
        RealRuntime.Handle<EchoNode> client = rt.start("client", dir.resolve("c"), null, List.of(), env -> new EchoNode(env, null));
        client.run(n -> n.env.transport().send(a, new Lookup(1, "/one")));
        assertThat(client.node().received.poll(10, TimeUnit.SECONDS)).isEqualTo(new Ack(1, Status.OK, "/one"));

        // an unknown tag: the server closes that connection
        try (Socket s = new Socket("127.0.0.1", a.port())) {
            DataOutputStream out = new DataOutputStream(s.getOutputStream());
            out.writeInt(3);
            out.write(new byte[] {(byte) 250, 1, 2});
            out.flush();
            s.setSoTimeout(10_000);
            assertThat(s.getInputStream().read()).isEqualTo(-1);
        }
        // a frame announcing 1 GiB: refused from its length alone
        try (Socket s = new Socket("127.0.0.1", a.port())) {
            DataOutputStream out = new DataOutputStream(s.getOutputStream());
            out.writeInt(1 << 30);
            out.write(new byte[64]);
            out.flush();
            s.setSoTimeout(10_000);
            InputStream in = s.getInputStream();
            assertThat(in.read()).isEqualTo(-1);
        }
        // and the node is still serving
        client.run(n -> n.env.transport().send(a, new Lookup(2, "/two")));
        assertThat(client.node().received.poll(10, TimeUnit.SECONDS)).isEqualTo(new Ack(2, Status.OK, "/two"));
    }

    @Test void partialFramesHeldByManyConnectionsAreBoundedOverTheNode() throws Exception {
        Address a = new Address("127.0.0.1", freePort());
        RealRuntime.Handle<EchoNode> server = rt.start("server", dir.resolve("s"), a, List.of(), env -> new EchoNode(env, a));
        int connections = 40, partBytes = 2 << 20; // 80 MiB of half-sent frames, over the 64 MiB budget
        List<Socket> sockets = new java.util.ArrayList<>();
        try {
            for (int i = 0; i < connections; i++) {
                Socket s = new Socket("127.0.0.1", a.port());
                sockets.add(s);
                try {
                    DataOutputStream out = new DataOutputStream(s.getOutputStream());
                    out.writeInt(dev.cairn.core.proto.Codec.MAX_FRAME_BYTES - 16);
                    out.write(new byte[partBytes]);
                    out.flush();
                } catch (java.io.IOException cut) {
                    s.close(); // the node cut it off while it was still sending
                }
            }
            long budget = NettyTransport.MAX_PARTIAL_FRAME_BYTES;
            java.util.function.LongSupplier held = () -> server.call(n -> ((NettyTransport) n.env.transport()).partialFrameBytes());
            for (int i = 0; i < 100 && countClosed(sockets) < connections - budget / partBytes; i++) Thread.sleep(100);
            assertThat(countClosed(sockets)).isGreaterThanOrEqualTo((int) (connections - budget / partBytes));
            assertThat(held.getAsLong()).isLessThanOrEqualTo(budget).isGreaterThan(budget / 2);
            // closing them gives the budget back, and the node still serves
            for (Socket s : sockets) s.close();
            for (int i = 0; i < 100 && held.getAsLong() > 0; i++) Thread.sleep(50);
            assertThat(held.getAsLong()).isZero();
            RealRuntime.Handle<EchoNode> client = rt.start("client", dir.resolve("c"), null, List.of(), env -> new EchoNode(env, null));
            client.run(n -> n.env.transport().send(a, new Lookup(3, "/three")));
            assertThat(client.node().received.poll(10, TimeUnit.SECONDS)).isEqualTo(new Ack(3, Status.OK, "/three"));
        } finally {
            for (Socket s : sockets) s.close();
        }
    }

    /** A peer that sends requests and never reads the replies: they pile up to a bound, then its connection goes. */
    @Test void repliesAPeerNeverReadsAreBoundedThenItsConnectionIsClosed() throws Exception {
        Address a = new Address("127.0.0.1", freePort());
        RealRuntime.Handle<EchoNode> server = rt.start("server", dir.resolve("s"), a, List.of(), env -> new EchoNode(env, a));
        long budget = 8 << 20;
        server.run(n -> ((NettyTransport) n.env.transport()).limitUnsent(budget));
        java.util.function.LongSupplier unsent = () -> server.call(n -> ((NettyTransport) n.env.transport()).unsentBytes());
        String longPath = "/" + "x".repeat(8000);
        long most = 0;
        boolean cut = false;
        try (Socket s = new Socket("127.0.0.1", a.port())) {
            s.setReceiveBufferSize(64 << 10); // and never read from it
            DataOutputStream out = new DataOutputStream(new java.io.BufferedOutputStream(s.getOutputStream(), 1 << 20));
            for (int i = 0; i < 4_000 && !cut; i++) { // 32 MB of replies
                byte[] frame = dev.cairn.core.proto.Codec.encode(new Lookup(i, longPath));
                try {
                    out.writeInt(frame.length);
                    out.write(frame);
                    if (i % 100 == 99) {
                        out.flush();
                        most = Math.max(most, unsent.getAsLong());
                    }
                } catch (java.io.IOException closed) {
                    cut = true;
                }
            }
            for (int i = 0; i < 100 && !cut; i++) {
                most = Math.max(most, unsent.getAsLong());
                if (countClosed(List.of(s)) == 1) cut = true; else Thread.sleep(50);
            }
        }
        assertThat(cut).as("the connection of a peer that reads nothing is closed").isTrue();
        assertThat(most).as("replies held for it").isLessThanOrEqualTo(budget / 2).isGreaterThan(budget / 4);
        for (int i = 0; i < 100 && unsent.getAsLong() > 0; i++) Thread.sleep(50);
        assertThat(unsent.getAsLong()).isZero();
        RealRuntime.Handle<EchoNode> client = rt.start("client", dir.resolve("c"), null, List.of(), env -> new EchoNode(env, null));
        client.run(n -> n.env.transport().send(a, new Lookup(1, "/after")));
        assertThat(client.node().received.poll(10, TimeUnit.SECONDS)).isEqualTo(new Ack(1, Status.OK, "/after"));
    }

    /** How many of {@code sockets} the far end has closed (a read sees the end or a reset at once). */
    static int countClosed(List<Socket> sockets) throws Exception {
        int n = 0;
        for (Socket s : sockets) {
            if (s.isClosed()) { n++; continue; }
            s.setSoTimeout(20);
            try {
                if (s.getInputStream().read() < 0) n++;
            } catch (java.net.SocketTimeoutException open) {
                // still open
            } catch (java.io.IOException reset) {
                n++;
            }
        }
        return n;
    }

    @Test void unusableDataDirectoryFailsWithAClearMessage() throws Exception {
        Path file = dir.resolve("not-a-dir");
        Files.writeString(file, "x");
        assertThatThrownBy(() -> rt.start("cs", file, null, List.of("disk0"), env -> new EchoNode(env, null)))
                .isInstanceOf(IllegalStateException.class).hasMessageContaining("not usable");
    }

    @Test void aPortInUseFailsWithAClearMessage() throws Exception {
        try (ServerSocket taken = new ServerSocket(0, 1, java.net.InetAddress.getByName("127.0.0.1"))) {
            Address a = new Address("127.0.0.1", taken.getLocalPort());
            assertThatThrownBy(() -> rt.start("n", dir, a, List.of(), env -> new EchoNode(env, a)))
                    .isInstanceOf(IllegalStateException.class).hasMessageContaining("cannot listen on");
        }
    }

    private static byte[] b(String s) { return s.getBytes(StandardCharsets.UTF_8); }
}
