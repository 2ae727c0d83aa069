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
}
