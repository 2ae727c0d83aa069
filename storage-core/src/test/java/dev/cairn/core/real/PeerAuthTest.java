package dev.cairn.core.real;

import static org.assertj.core.api.Assertions.assertThat;

import dev.cairn.core.env.Address;
import dev.cairn.core.proto.Ack;
import dev.cairn.core.proto.Codec;
import dev.cairn.core.proto.MasterProtocol.Lookup;
import dev.cairn.core.proto.Status;
import dev.cairn.core.real.RealRuntimeTest.EchoNode;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.embedded.EmbeddedChannel;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.net.Socket;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermission;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Node authentication: the cluster key's handshake and signed frames, on real sockets and frame by frame. */
class PeerAuthTest {
    @TempDir Path dir;
    final ClusterKey key = ClusterKey.random();
    final List<RealRuntime> runtimes = new ArrayList<>();

    @AfterEach void close() { runtimes.forEach(RealRuntime::close); }

    /** Socket threads per node (0: on the node's loop, the default on small machines). */
    int netThreads() { return 0; }

    RealRuntime runtime(ClusterKey k) {
        RealRuntime rt = (k == null ? new RealRuntime() : new RealRuntime(k)).netThreads(netThreads());
        runtimes.add(rt);
        return rt;
    }

    RealRuntime.Handle<EchoNode> server(ClusterKey k, Address a) {
        return runtime(k).start("server", dir.resolve("s"), a, List.of(), env -> new EchoNode(env, a));
    }

    RealRuntime.Handle<EchoNode> client(ClusterKey k, String name) {
        return runtime(k).start(name, dir.resolve(name), null, List.of(), env -> new EchoNode(env, null));
    }

    static long refused(RealRuntime.Handle<EchoNode> h) {
        return h.call(n -> ((NettyTransport) n.env.transport()).refusedPeers());
    }

    @Test void nodesHoldingTheKeyTalkBothWays() throws Exception {
        Address a = new Address("127.0.0.1", RealRuntimeTest.freePort());
        RealRuntime.Handle<EchoNode> server = server(key, a);
        RealRuntime.Handle<EchoNode> client = client(key, "client");
        for (int i = 1; i <= 50; i++) {
            int rid = i;
            client.run(n -> n.env.transport().send(a, new Lookup(rid, "/f" + rid + "x".repeat(rid * 100))));
        }
        for (int i = 1; i <= 50; i++) {
            assertThat(client.node().received.poll(10, TimeUnit.SECONDS)).isEqualTo(new Ack(i, Status.OK, "/f" + i + "x".repeat(i * 100)));
        }
        assertThat(refused(server)).isZero();
        assertThat(refused(client)).isZero();
    }

    @Test void aPeerWithAnotherKeyOrNoneIsRefusedBeforeAnyMessageIsHandled() throws Exception {
        Address a = new Address("127.0.0.1", RealRuntimeTest.freePort());
        RealRuntime.Handle<EchoNode> server = server(key, a);
        RealRuntime.Handle<EchoNode> stranger = client(ClusterKey.random(), "stranger");
        stranger.run(n -> n.env.transport().send(a, new Lookup(1, "/one")));
        RealRuntime.Handle<EchoNode> open = client(null, "open");
        open.run(n -> n.env.transport().send(a, new Lookup(2, "/two")));
        for (int i = 0; i < 100 && refused(server) < 2; i++) Thread.sleep(50);
        assertThat(refused(server)).as("one refusal per peer").isEqualTo(2);
        assertThat(refused(stranger)).as("the stranger sees the server's proof fail too").isEqualTo(1);
        assertThat(server.node().received.poll(500, TimeUnit.MILLISECONDS)).isNull();
        assertThat(stranger.node().received).isEmpty();
        assertThat(open.node().received).isEmpty();

        // a process speaking the node protocol without any handshake: its frame never reaches the codec
        try (Socket s = new Socket("127.0.0.1", a.port())) {
            byte[] frame = Codec.encode(new Lookup(3, "/three"));
            DataOutputStream out = new DataOutputStream(s.getOutputStream());
            out.writeInt(frame.length);
            out.write(frame);
            out.flush();
            s.setSoTimeout(10_000);
            awaitClosedByServer(s);
        }
        // one announcing a frame longer than a handshake's: refused from its length alone, nothing held
        try (Socket s = new Socket("127.0.0.1", a.port())) {
            DataOutputStream out = new DataOutputStream(s.getOutputStream());
            out.writeInt(1 << 20);
            out.write(new byte[1000]);
            out.flush();
            s.setSoTimeout(10_000);
            awaitClosedByServer(s);
        }
        assertThat((long) server.call(n -> ((NettyTransport) n.env.transport()).partialFrameBytes())).isZero();
        assertThat(server.node().received).isEmpty();

        // and a member still gets through
        RealRuntime.Handle<EchoNode> member = client(key, "member");
        member.run(n -> n.env.transport().send(a, new Lookup(4, "/four")));
        assertThat(member.node().received.poll(10, TimeUnit.SECONDS)).isEqualTo(new Ack(4, Status.OK, "/four"));
        assertThat(server.node().received).hasSize(1);
    }

    @Test void aPeerThatSaysHelloButNeverProvesItselfIsCutOff() throws Exception {
        Address a = new Address("127.0.0.1", RealRuntimeTest.freePort());
        RealRuntime.Handle<EchoNode> server = server(key, a);
        try (Socket s = new Socket("127.0.0.1", a.port())) {
            DataInputStream in = new DataInputStream(s.getInputStream());
            int n = in.readInt();
            byte[] hello = new byte[n];
            in.readFully(hello);
            assertThat(n).isEqualTo(4 + PeerAuth.NONCE_BYTES);
            DataOutputStream out = new DataOutputStream(s.getOutputStream());
            out.writeInt(n);
            byte[] mine = hello.clone();
            mine[4] ^= 1; // a nonce of its own
            out.write(mine);
            out.flush();
            s.setSoTimeout((PeerAuth.HANDSHAKE_SECONDS + 10) * 1000);
            long t0 = System.nanoTime();
            awaitClosedByServer(s);
            assertThat(TimeUnit.NANOSECONDS.toSeconds(System.nanoTime() - t0)).isLessThan(PeerAuth.HANDSHAKE_SECONDS + 5);
        }
        assertThat(refused(server)).isEqualTo(1);
    }

    /** Reads until the server closes the connection; its read timeout passing first fails the test. */
    static void awaitClosedByServer(Socket s) throws Exception {
        try {
            while (s.getInputStream().read() >= 0) { /* the server's hello, then the end */ }
        } catch (java.net.SocketTimeoutException open) {
            throw new AssertionError("the server kept the connection open", open);
        } catch (java.net.SocketException reset) {
            // a reset is a close too
        }
    }

    // ---- frame by frame, on embedded channels ----

    /** Two ends of one connection with the handshake done; {@code refusals} collects both ends' reasons. */
    static final class Pair {
        final List<String> refusals = new ArrayList<>();
        final Set<ByteBuffer> nodeA = new HashSet<>(), nodeB = new HashSet<>();
        final PeerAuth initiatorAuth, acceptorAuth;
        final EmbeddedChannel initiator, acceptor;

        Pair(ClusterKey a, ClusterKey b) {
            initiatorAuth = new PeerAuth(a, PeerAuth.Role.INITIATOR, nodeA, (why, settled) -> refusals.add("initiator: " + why));
            acceptorAuth = new PeerAuth(b, PeerAuth.Role.ACCEPTOR, nodeB, (why, settled) -> refusals.add("acceptor: " + why));
            initiator = new EmbeddedChannel(initiatorAuth);
            acceptor = new EmbeddedChannel(acceptorAuth);
            pump();
        }

        /** Carries frames both ways until none is left. */
        void pump() {
            boolean moved = true;
            while (moved) {
                moved = false;
                ByteBuf f;
                while ((f = initiator.readOutbound()) != null) { if (acceptor.isOpen()) acceptor.writeInbound(f); else f.release(); moved = true; }
                while ((f = acceptor.readOutbound()) != null) { if (initiator.isOpen()) initiator.writeInbound(f); else f.release(); moved = true; }
            }
        }
    }

    static ByteBuf bytes(String s) { return Unpooled.copiedBuffer(s, java.nio.charset.StandardCharsets.UTF_8); }

    static String text(ByteBuf b) {
        try { return b.toString(java.nio.charset.StandardCharsets.UTF_8); } finally { b.release(); }
    }

    @Test void framesCrossSignedAndAnAlteredReplayedOrDroppedFrameClosesTheConnection() {
        Pair p = new Pair(key, key);
        assertThat(p.initiatorAuth.open()).isTrue();
        assertThat(p.acceptorAuth.open()).isTrue();
        p.initiator.writeOutbound(bytes("first"));
        p.acceptor.writeOutbound(bytes("reply"));
        p.pump();
        assertThat(text(p.acceptor.readInbound())).isEqualTo("first");
        assertThat(text(p.initiator.readInbound())).isEqualTo("reply");

        // each kind of tampering, on a fresh connection: one flipped bit, a replay of a delivered frame, a dropped frame
        for (String attack : List.of("flip", "replay", "drop")) {
            Pair q = new Pair(key, key);
            q.initiator.writeOutbound(bytes("one"));
            q.initiator.writeOutbound(bytes("two"));
            ByteBuf one = q.initiator.readOutbound(), two = q.initiator.readOutbound();
            switch (attack) {
                case "flip" -> {
                    one.setByte(one.readerIndex() + 1, one.getByte(one.readerIndex() + 1) ^ 0x10);
                    q.acceptor.writeInbound(one);
                    two.release();
                }
                case "replay" -> {
                    ByteBuf copy = one.copy();
                    q.acceptor.writeInbound(one);
                    assertThat(text(q.acceptor.readInbound())).isEqualTo("one");
                    q.acceptor.writeInbound(copy);
                    two.release();
                }
                default -> {
                    one.release();
                    q.acceptor.writeInbound(two);
                }
            }
            assertThat((Object) q.acceptor.readInbound()).as(attack).isNull();
            assertThat(q.acceptor.isOpen()).as(attack).isFalse();
            assertThat(q.refusals).as(attack).containsExactly("acceptor: a frame whose tag does not verify (altered, replayed or injected)");
        }
    }

    @Test void endsWithDifferentKeysRefuseEachOtherAndNothingHeldIsSent() {
        Pair p = new Pair(key, ClusterKey.random());
        assertThat(p.initiator.isOpen()).isFalse();
        assertThat(p.acceptor.isOpen()).isFalse();
        assertThat(p.refusals).containsExactlyInAnyOrder("initiator: it does not hold this cluster's key", "acceptor: it does not hold this cluster's key");
        // a frame written while the handshake was under way is failed, never sent unsigned
        EmbeddedChannel lone = new EmbeddedChannel(new PeerAuth(key, PeerAuth.Role.INITIATOR, new HashSet<>(), (why, settled) -> {}));
        ByteBuf hello = lone.readOutbound();
        hello.release();
        io.netty.channel.ChannelFuture f = lone.writeAndFlush(bytes("secret"));
        assertThat(f.isDone()).isFalse();
        assertThat((Object) lone.readOutbound()).isNull();
        lone.close();
        assertThat(f.isDone() && !f.isSuccess()).isTrue();
    }

    @Test void aHandshakeRelayedBackToItsOwnNodeIsRefused() {
        // node A opens a connection (its initiator nonce N); someone replays N in a hello to A's own listener
        Set<ByteBuffer> nodeA = new HashSet<>();
        List<String> refusals = new ArrayList<>();
        EmbeddedChannel outbound = new EmbeddedChannel(new PeerAuth(key, PeerAuth.Role.INITIATOR, nodeA, (why, settled) -> refusals.add(why)));
        ByteBuf helloOfA = outbound.readOutbound();
        EmbeddedChannel inbound = new EmbeddedChannel(new PeerAuth(key, PeerAuth.Role.ACCEPTOR, nodeA, (why, settled) -> refusals.add(why)));
        ((ByteBuf) inbound.readOutbound()).release();
        inbound.writeInbound(helloOfA);
        assertThat(inbound.isOpen()).isFalse();
        assertThat(refusals).containsExactly("a handshake nonce this node issued itself (a relayed handshake)");
        assertThat(outbound.isOpen()).isTrue();
        outbound.close();
        assertThat(nodeA).as("a closed connection's nonce is forgotten").isEmpty();
    }

    @Test void keyFilesAreMadeOnceReadableByTheirOwnerAndMalformedOnesAreRefused() throws Exception {
        Path f = dir.resolve("d").resolve(ClusterKey.FILE_NAME);
        ClusterKey made = ClusterKey.loadOrCreate(f);
        assertThat(Files.getPosixFilePermissions(f)).containsExactlyInAnyOrder(PosixFilePermission.OWNER_READ, PosixFilePermission.OWNER_WRITE);
        assertThat(Files.readString(f).trim()).hasSize(64);
        ClusterKey again = ClusterKey.loadOrCreate(f);
        // the same key: the two ends complete a handshake
        Pair p = new Pair(made, again);
        assertThat(p.initiatorAuth.open() && p.acceptorAuth.open()).isTrue();
        assertThat(Files.list(f.getParent())).containsExactly(f);
        Files.writeString(f, "not hex\n");
        org.assertj.core.api.Assertions.assertThatThrownBy(() -> ClusterKey.load(f))
                .hasMessageContaining(f.toString()).hasMessageContaining("64 hex digits");
        org.assertj.core.api.Assertions.assertThatThrownBy(() -> ClusterKey.load(dir.resolve("missing")))
                .hasMessageContaining("cannot read the cluster key");
    }
}
