package dev.cairn.nfs.rpc;

import com.code_intelligence.jazzer.junit.FuzzTest;
import dev.cairn.core.async.Promise;
import dev.cairn.nfs.NfsTestCalls;
import dev.cairn.nfs.NfsTestCalls.OpCall;
import dev.cairn.nfs.v4.Nfs4Status;
import dev.cairn.nfs.v4.Op;
import dev.cairn.nfs.v4.state.ClientTable;
import dev.cairn.nfs.xdr.XdrDecoder;
import dev.cairn.nfs.xdr.XdrEncoder;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.List;

/**
 * Coverage-guided fuzzing of the gateway's NFS front (Jazzer), where any client's bytes arrive: {@link #rpcRecord} feeds
 * whole RPC records to the service (record decoding, RPC and AUTH_SYS headers, the COMPOUND engine); {@link
 * #compoundInSession} puts the fuzzer's bytes after a valid SEQUENCE of an established 4.1 session, so the operations
 * run with session, slot and client state behind them, then checks the session still answers. Nothing may throw, every
 * answer is a well-formed reply to its call's xid, and the client table stays bounded. Each input runs against a fresh
 * server (inputs replay alone). Corpora under {@code NfsFuzzTestInputs/}; {@code ./cairn fuzz rpc|compound --minutes N}.
 */
public class NfsFuzzTest {
    static final int MAX_REPLY = 64 * 1024;

    @FuzzTest(maxDuration = "5m") void rpcRecord(byte[] record) { fuzzRpcRecord(record); }

    @FuzzTest(maxDuration = "5m") void compoundInSession(byte[] ops) { fuzzCompoundInSession(ops); }

    /** Jazzer's command-line driver takes one target per class: these name them. */
    public static final class Rpc {
        public static void fuzzerTestOneInput(byte[] record) { fuzzRpcRecord(record); }
    }

    public static final class Compound {
        public static void fuzzerTestOneInput(byte[] ops) { fuzzCompoundInSession(ops); }
    }

    static void fuzzRpcRecord(byte[] record) {
        NfsTestCalls nfs = new NfsTestCalls(1);
        answer(nfs, record);
        bounded(nfs);
    }

    static void fuzzCompoundInSession(byte[] input) {
        if (input.length == 0) return;
        NfsTestCalls nfs = new NfsTestCalls(1);
        NfsTestCalls.Reply x = nfs.compound(1, NfsTestCalls.exchangeId("fuzz".getBytes(StandardCharsets.UTF_8), 1));
        long clientId = x.rest().readLong();
        int seq = x.rest().readInt();
        byte[] session = nfs.compound(1, NfsTestCalls.createSession(clientId, seq)).rest().readFixedOpaque(16);
        // the first byte is how many operations follow SEQUENCE (1..16); the rest is their numbers and arguments
        int count = 1 + (input[0] & 15);
        XdrEncoder e = NfsTestCalls.callHeader(1000, NfsService.NFS_PROGRAM, NfsService.NFS_V4, NfsService.PROC_COMPOUND, 0);
        e.writeString("").writeInt(1).writeInt(1 + count);
        OpCall seqOp = NfsTestCalls.sequence(session, 1, 0);
        e.writeInt(seqOp.op()).writeRaw(seqOp.args());
        byte[] head = e.toByteArray();
        byte[] record = Arrays.copyOf(head, head.length + input.length - 1);
        System.arraycopy(input, 1, record, head.length, input.length - 1);
        answer(nfs, record);
        // whatever those operations did, the server still answers the session's next call (or says why it cannot)
        byte[] next = NfsTestCalls.compoundRecord(1001, 1, List.of(NfsTestCalls.sequence(session, 2, 0), OpCall.of(Op.PUTROOTFH), OpCall.of(Op.GETFH)));
        NfsTestCalls.Reply r = NfsTestCalls.parse(answer(nfs, next));
        if (r.status() != Nfs4Status.NFS4_OK && r.status() != Nfs4Status.BADSESSION && r.status() != Nfs4Status.SEQ_MISORDERED
                && r.status() != Nfs4Status.DEADSESSION && r.status() != Nfs4Status.STALE_CLIENTID) {
            throw new AssertionError("the session's next call answered " + r.status());
        }
        bounded(nfs);
    }

    /** Runs a record: answered at once, never failed; a reply (if any) is a REPLY to the call's xid, 4-aligned and bounded. */
    private static byte[] answer(NfsTestCalls nfs, byte[] record) {
        Promise<byte[]> p = nfs.service.handle(record, nfs.conn);
        if (!p.isDone()) throw new AssertionError("no synchronous answer");
        if (p.isFailed()) throw new AssertionError("the service failed: " + p.error(), p.error());
        byte[] reply = p.value();
        if (reply == null) {
            // silence only for what has no call header to answer
            if (record.length >= 8 && new XdrDecoder(record, 4, 4).readInt() == 0) throw new AssertionError("a call left unanswered");
            return null;
        }
        XdrDecoder d = new XdrDecoder(reply);
        if (d.readInt() != new XdrDecoder(record, 0, 4).readInt()) throw new AssertionError("a reply to another xid");
        if (d.readInt() != 1) throw new AssertionError("not a REPLY");
        if (reply.length % 4 != 0 || reply.length > MAX_REPLY) throw new AssertionError("a reply of " + reply.length + " bytes");
        return reply;
    }

    private static void bounded(NfsTestCalls nfs) {
        if (nfs.service.nfs4().clients().clientCount() > ClientTable.MAX_CLIENTS) throw new AssertionError("client table past its bound");
    }
}
