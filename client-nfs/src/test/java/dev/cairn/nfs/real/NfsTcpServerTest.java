package dev.cairn.nfs.real;

import static org.assertj.core.api.Assertions.assertThat;

import dev.cairn.nfs.NfsTestCalls;
import dev.cairn.nfs.rpc.NfsService;
import dev.cairn.nfs.rpc.RecordAssembler;
import dev.cairn.nfs.rpc.RpcReply;
import dev.cairn.nfs.v4.Nfs4Status;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.nio.NioIoHandler;
import java.io.DataInputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** The NFS port on a real loopback socket: fragmented records in, framed replies out, a hostile stream cut off alone. */
class NfsTcpServerTest {
    final EventLoopGroup group = new MultiThreadIoEventLoopGroup(1, NioIoHandler.newFactory());
    final NfsTestCalls nfs = new NfsTestCalls(3);
    final NfsTcpServer server = NfsTcpServer.bind(group.next(), "127.0.0.1", 0, nfs.service);

    @AfterEach void close() {
        server.close();
        group.shutdownGracefully(0, 1, java.util.concurrent.TimeUnit.SECONDS).awaitUninterruptibly();
    }

    static byte[] readRecord(DataInputStream in) throws IOException {
        RecordAssembler a = new RecordAssembler(NfsTcpServer.MAX_RECORD);
        while (true) {
            int header = in.readInt();
            byte[] body = new byte[header & 0x7fff_ffff];
            in.readFully(body);
            byte[] framed = new byte[body.length + 4];
            framed[0] = (byte) (header >>> 24); framed[1] = (byte) (header >>> 16); framed[2] = (byte) (header >>> 8); framed[3] = (byte) header;
            System.arraycopy(body, 0, framed, 4, body.length);
            List<byte[]> got = a.feed(framed, 0, framed.length);
            if (!got.isEmpty()) return got.get(0);
        }
    }

    @Test void callsInFragmentsGetAnswersAndAHostileStreamIsClosedAlone() throws IOException {
        try (Socket good = new Socket("127.0.0.1", server.port()); Socket bad = new Socket("127.0.0.1", server.port())) {
            good.setSoTimeout(10_000);
            bad.setSoTimeout(10_000);
            OutputStream out = good.getOutputStream();
            DataInputStream in = new DataInputStream(good.getInputStream());
            // NULL in two fragments, written byte-split across two writes
            byte[] call = NfsTestCalls.callHeader(11, NfsService.NFS_PROGRAM, 4, NfsService.PROC_NULL, 0).toByteArray();
            byte[] f1 = RecordAssembler.fragment(call, 0, 10, false), f2 = RecordAssembler.fragment(call, 10, call.length - 10, true);
            out.write(f1, 0, 7);
            out.flush();
            out.write(f1, 7, f1.length - 7);
            out.write(f2);
            out.flush();
            NfsTestCalls.Reply r = NfsTestCalls.parse(readRecord(in));
            assertThat(r.xid()).isEqualTo(11);
            assertThat(r.acceptStat()).isEqualTo(RpcReply.SUCCESS);

            // a stream claiming a 1 GiB record is closed
            bad.getOutputStream().write(new byte[] {(byte) 0xc0, 0, 0, 0});
            bad.getOutputStream().flush();
            assertThat(bad.getInputStream().read()).isEqualTo(-1);

            // the good connection carries on: EXCHANGE_ID
            out.write(RecordAssembler.frame(NfsTestCalls.compoundRecord(12, 1,
                    List.of(NfsTestCalls.exchangeId("tcp-client".getBytes(StandardCharsets.UTF_8), 5)))));
            out.flush();
            NfsTestCalls.Reply x = NfsTestCalls.parse(readRecord(in));
            assertThat(x.xid()).isEqualTo(12);
            assertThat(x.status()).isEqualTo(Nfs4Status.NFS4_OK);
        }
    }

    /** A stand-in service on its own loop: answers each record with {@code replySize} bytes, at once or when released. */
    static final class StandIn implements NfsTcpServer.Calls {
        final EventLoopGroup loop = new MultiThreadIoEventLoopGroup(1, NioIoHandler.newFactory());
        final java.util.concurrent.atomic.AtomicInteger handled = new java.util.concurrent.atomic.AtomicInteger();
        final java.util.List<dev.cairn.core.async.Promise<byte[]>> held = new java.util.ArrayList<>();
        final int replySize;
        volatile boolean hold;
        NfsTcpServer server;

        StandIn(int replySize, boolean hold, NfsTcpServer.Limits limits) {
            this.replySize = replySize;
            this.hold = hold;
            server = NfsTcpServer.bind(loop.next(), "127.0.0.1", 0, this, NfsTestCalls.QUIET, limits);
        }

        @Override public dev.cairn.core.async.Promise<byte[]> handle(byte[] record, dev.cairn.nfs.v4.CompoundState.Connection from) {
            handled.incrementAndGet();
            if (!hold) return dev.cairn.core.async.Promise.completed(new byte[replySize]);
            var p = new dev.cairn.core.async.Promise<byte[]>();
            held.add(p);
            return p;
        }

        /** Answers every held call and stops holding (on the server's loop, where calls are answered). */
        void release() throws Exception {
            loop.next().submit(() -> {
                hold = false;
                for (var p : held) p.complete(new byte[replySize]);
                held.clear();
            }).get();
        }

        long callBytes() throws Exception { return loop.next().submit(server::callBytes).get(); }

        void close() {
            server.close();
            loop.shutdownGracefully(0, 1, java.util.concurrent.TimeUnit.SECONDS).awaitUninterruptibly();
        }
    }

    /** Waits until {@code count} stops moving for half a second; returns its value. */
    static int settled(java.util.concurrent.atomic.AtomicInteger count) throws InterruptedException {
        int last = -1;
        while (count.get() != last) {
            last = count.get();
            Thread.sleep(500);
        }
        return last;
    }

    static byte[] manyNullCalls(int n) {
        java.io.ByteArrayOutputStream b = new java.io.ByteArrayOutputStream();
        for (int i = 0; i < n; i++) {
            b.writeBytes(RecordAssembler.frame(NfsTestCalls.callHeader(i, NfsService.NFS_PROGRAM, 4, NfsService.PROC_NULL, 0).toByteArray()));
        }
        return b.toByteArray();
    }

    @Test void aClientThatDoesNotReadItsRepliesStopsBeingReadAndLosesNothing() throws Exception {
        StandIn s = new StandIn(1 << 20, false, NfsTcpServer.DEFAULT_LIMITS);
        int calls = 300;
        try (Socket c = new Socket("127.0.0.1", s.server.port())) {
            c.setSoTimeout(30_000);
            // 300 calls in one write (a few KiB: one socket read could carry them all), each answered with 1 MiB
            c.getOutputStream().write(manyNullCalls(calls));
            c.getOutputStream().flush();
            int before = settled(s.handled);
            // what a non-reading client holds: the reply queue (4 MiB) plus what the kernel's socket buffers took
            assertThat(before).isGreaterThan(0).isLessThan(64);
            assertThat(s.callBytes()).isLessThanOrEqualTo(NfsTcpServer.REPLY_QUEUE_HIGH_BYTES + 2L * NfsTcpServer.CALL_RESERVE_BYTES);
            // reading the replies lets every call through: all answered, in order, none lost
            DataInputStream in = new DataInputStream(new java.io.BufferedInputStream(c.getInputStream(), 1 << 16));
            byte[] body = new byte[1 << 20];
            for (int i = 0; i < calls; i++) {
                assertThat(in.readInt()).isEqualTo(0x8000_0000 | (1 << 20));
                in.readFully(body);
            }
            assertThat(s.handled.get()).isEqualTo(calls);
        } finally {
            s.close();
        }
    }

    @Test void callsHeldByTheClusterStopEveryConnectionBeingReadUntilTheyAreAnswered() throws Exception {
        StandIn s = new StandIn(64, true, NfsTcpServer.DEFAULT_LIMITS);
        int perConnection = 100, connections = 3;
        List<Socket> sockets = new java.util.ArrayList<>();
        try {
            for (int i = 0; i < connections; i++) {
                Socket c = new Socket("127.0.0.1", s.server.port());
                c.setSoTimeout(30_000);
                c.getOutputStream().write(manyNullCalls(perConnection));
                c.getOutputStream().flush();
                sockets.add(c);
            }
            // 64 per connection would be 192 calls; the gateway-wide bound on call memory stops it sooner (each
            // connection still gets one call when it holds nothing)
            int bound = (int) (NfsTcpServer.MAX_CALL_BYTES / NfsTcpServer.CALL_RESERVE_BYTES) + connections;
            int held = settled(s.handled);
            assertThat(held).isGreaterThanOrEqualTo(NfsTcpServer.MAX_CALLS_PER_CONNECTION).isLessThanOrEqualTo(bound);
            assertThat(s.callBytes()).isLessThanOrEqualTo(NfsTcpServer.MAX_CALL_BYTES + (long) connections * NfsTcpServer.CALL_RESERVE_BYTES);
            // over the bound, a connection that holds nothing still gets its call served: the others cannot stall it
            Socket late = new Socket("127.0.0.1", s.server.port());
            sockets.add(late);
            late.setSoTimeout(30_000);
            late.getOutputStream().write(manyNullCalls(2));
            late.getOutputStream().flush();
            for (int i = 0; i < 50 && s.handled.get() == held; i++) Thread.sleep(100);
            assertThat(settled(s.handled)).as("one call, not two, while over the bound").isEqualTo(held + 1);
            s.release();
            for (Socket c : sockets) {
                DataInputStream in = new DataInputStream(c.getInputStream());
                for (int i = 0; i < (c == late ? 2 : perConnection); i++) {
                    assertThat(in.readInt()).isEqualTo(0x8000_0000 | 64);
                    in.readFully(new byte[64]);
                }
            }
            assertThat(s.handled.get()).isEqualTo(perConnection * connections + 2);
            for (int i = 0; i < 50 && s.callBytes() > 0; i++) Thread.sleep(100); // the last replies' writes complete
            assertThat(s.callBytes()).isZero();
        } finally {
            for (Socket c : sockets) c.close();
            s.close();
        }
    }

    @Test void connectionsPastTheLimitAreClosedAndAStalledRecordIsCutOff() throws Exception {
        StandIn s = new StandIn(8, false, new NfsTcpServer.Limits(4, 1, 3600));
        List<Socket> sockets = new java.util.ArrayList<>();
        try {
            for (int i = 0; i < 4; i++) sockets.add(new Socket("127.0.0.1", s.server.port()));
            try (Socket fifth = new Socket("127.0.0.1", s.server.port())) {
                fifth.setSoTimeout(10_000);
                assertThat(fifth.getInputStream().read()).isEqualTo(-1);
            }
            // the four still work
            for (Socket c : sockets) {
                c.setSoTimeout(10_000);
                c.getOutputStream().write(manyNullCalls(1));
                DataInputStream in = new DataInputStream(c.getInputStream());
                assertThat(in.readInt()).isEqualTo(0x8000_0000 | 8);
                in.skipNBytes(8);
            }
            // half a record, then silence: closed after the stall limit (1 s here), freeing its place
            Socket staller = sockets.get(0);
            staller.getOutputStream().write(new byte[] {(byte) 0x80, 0, 1, 0, 1, 2, 3});
            staller.getOutputStream().flush();
            assertThat(staller.getInputStream().read()).isEqualTo(-1);
            // an idle connection with nothing partial is left alone
            Socket idle = sockets.get(1);
            idle.getOutputStream().write(manyNullCalls(1));
            assertThat(new DataInputStream(idle.getInputStream()).readInt()).isEqualTo(0x8000_0000 | 8);
            for (int i = 0; i < 10 && s.server.openConnections() > 3; i++) Thread.sleep(100);
            assertThat(s.server.openConnections()).isEqualTo(3);
            try (Socket again = new Socket("127.0.0.1", s.server.port())) {
                again.setSoTimeout(10_000);
                again.getOutputStream().write(manyNullCalls(1));
                assertThat(new DataInputStream(again.getInputStream()).readInt()).isEqualTo(0x8000_0000 | 8);
            }
        } finally {
            for (Socket c : sockets) c.close();
            s.close();
        }
    }
}
