package dev.cairn.nfs;

import dev.cairn.core.env.Clock;
import dev.cairn.core.env.Log;
import dev.cairn.nfs.rpc.NfsService;
import dev.cairn.nfs.v4.CompoundState;
import dev.cairn.nfs.v4.Nfs4Server;
import dev.cairn.nfs.v4.Op;
import dev.cairn.nfs.xdr.XdrDecoder;
import dev.cairn.nfs.xdr.XdrEncoder;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;

/** Builds RPC/COMPOUND records the way a client would, and runs them against a gateway's NFS service. */
public final class NfsTestCalls {
    /** A clock the test moves by hand. */
    public static final class ManualClock implements Clock {
        public long nanos = 1_000_000_000L;
        @Override public long nanoTime() { return nanos; }
        @Override public long wallMillis() { return 1_700_000_000_000L + nanos / 1_000_000; }
    }

    public static final Log QUIET = new Log() {
        @Override public void info(String fmt, Object... args) { }
        @Override public void warn(String fmt, Object... args) { }
        @Override public void debug(String fmt, Object... args) { }
    };

    public final ManualClock clock = new ManualClock();
    public final NfsService service;
    public final CompoundState.Connection conn = new CompoundState.Connection(1, "127.0.0.1");
    private int xid = 100;

    public NfsTestCalls(long seed) { this(seed, Exports.parse(Exports.DEFAULT)); }

    /** A server (no file system behind it) exported as {@code exports} says; calls come from 127.0.0.1. */
    public NfsTestCalls(long seed, Exports exports) {
        service = new NfsService(new Nfs4Server(clock, new SplittableRandom(seed), QUIET, new Nfs4Server.ServerIdentity("cairn-test", "cairn-test"), 7,
                null, exports));
    }

    /** The RPC call header with AUTH_SYS as uid {@code uid}. */
    public static XdrEncoder callHeader(int xid, int program, int version, int proc, int uid) {
        XdrEncoder e = new XdrEncoder();
        e.writeInt(xid).writeInt(0).writeInt(2).writeInt(program).writeInt(version).writeInt(proc);
        XdrEncoder cred = new XdrEncoder();
        cred.writeInt(0).writeString("client").writeInt(uid).writeInt(uid).writeInt(0);
        e.writeInt(1).writeOpaque(cred.toByteArray());
        e.writeInt(0).writeInt(0);
        return e;
    }

    /** One operation: its number and its encoded arguments. */
    public record OpCall(int op, XdrEncoder args) {
        public static OpCall of(int op) { return new OpCall(op, new XdrEncoder()); }
    }

    public static byte[] compoundRecord(int xid, int minor, List<OpCall> ops) { return compoundRecord(xid, 0, minor, ops); }

    public static byte[] compoundRecord(int xid, int uid, int minor, List<OpCall> ops) {
        XdrEncoder e = callHeader(xid, NfsService.NFS_PROGRAM, NfsService.NFS_V4, NfsService.PROC_COMPOUND, uid);
        e.writeString("").writeInt(minor).writeInt(ops.size());
        for (OpCall o : ops) e.writeInt(o.op()).writeRaw(o.args());
        return e.toByteArray();
    }

    /** Runs a record (synchronously: these operations never wait); null if the service stayed silent. */
    public byte[] run(byte[] record) {
        var p = service.handle(record, conn);
        if (!p.isDone()) throw new AssertionError("the service did not answer synchronously");
        return p.value();
    }

    /** A decoded COMPOUND reply: the overall status and each result's (op, status, body decoder). */
    public record Reply(int xid, int acceptStat, int status, List<int[]> results, XdrDecoder rest) {
        public int statusOf(int i) { return results.get(i)[1]; }
    }

    public Reply compound(int minor, OpCall... ops) { return compoundAs(xid++, minor, ops); }

    /** A COMPOUND from AUTH_SYS uid {@code uid} on connection {@code on}. */
    public Reply compoundOn(CompoundState.Connection on, int uid, int minor, OpCall... ops) {
        var p = service.handle(compoundRecord(xid++, uid, minor, List.of(ops)), on);
        if (!p.isDone()) throw new AssertionError("the service did not answer synchronously");
        return parse(p.value());
    }

    public Reply compoundAs(int useXid, int minor, OpCall... ops) {
        byte[] reply = run(compoundRecord(useXid, minor, List.of(ops)));
        return parse(reply);
    }

    /** Parses the reply; result bodies are skipped for ops whose body the test reads itself (the last one). */
    public static Reply parse(byte[] reply) {
        XdrDecoder d = new XdrDecoder(reply);
        int x = d.readInt();
        d.readInt(); // REPLY
        int replyStat = d.readInt();
        if (replyStat != 0) return new Reply(x, -1, -1, List.of(), d);
        d.readInt();
        d.readOpaque(400);
        int accept = d.readInt();
        if (accept != 0 || d.remaining() == 0) return new Reply(x, accept, -1, List.of(), d); // an error, or NULL's empty result
        int status = d.readInt();
        d.readOpaque(1024);
        int n = d.readInt();
        List<int[]> results = new ArrayList<>();
        // only the first result's header is read here; callers read bodies in order with readResult
        if (n > 0) results.add(new int[] {d.readInt(), d.readInt()});
        return new Reply(x, accept, status, results, d);
    }

    // --- argument builders

    public static OpCall exchangeId(byte[] owner, long verifier) {
        XdrEncoder a = new XdrEncoder();
        a.writeLong(verifier).writeOpaque(owner).writeInt(0).writeInt(0).writeInt(0);
        return new OpCall(Op.EXCHANGE_ID, a);
    }

    public static OpCall createSession(long clientId, int seq) {
        XdrEncoder a = new XdrEncoder();
        a.writeLong(clientId).writeInt(seq).writeInt(0x3);
        for (int ch = 0; ch < 2; ch++) a.writeInt(0).writeInt(1 << 20).writeInt(1 << 20).writeInt(8192).writeInt(16).writeInt(8).writeInt(0);
        a.writeInt(0x40000000).writeInt(1).writeInt(0); // cb program, one AUTH_NONE sec parm
        return new OpCall(Op.CREATE_SESSION, a);
    }

    /** CREATE_SESSION asking for these fore and back channels: {maxRequestSize, maxResponseSize, maxResponseSizeCached, maxOperations, maxRequests}. */
    public static OpCall createSession(long clientId, int seq, int flags, int[] fore, int[] back) {
        XdrEncoder a = new XdrEncoder();
        a.writeLong(clientId).writeInt(seq).writeInt(flags);
        for (int[] ch : List.of(fore, back)) {
            a.writeInt(0);
            for (int v : ch) a.writeInt(v);
            a.writeInt(0);
        }
        a.writeInt(0x40000000).writeInt(1).writeInt(0);
        return new OpCall(Op.CREATE_SESSION, a);
    }

    public static OpCall sequence(byte[] session, int seq, int slot) { return sequence(session, seq, slot, true); }

    public static OpCall sequence(byte[] session, int seq, int slot, boolean cacheThis) {
        XdrEncoder a = new XdrEncoder();
        a.writeFixedOpaque(session).writeInt(seq).writeInt(slot).writeInt(slot).writeBoolean(cacheThis);
        return new OpCall(Op.SEQUENCE, a);
    }

    public static OpCall reclaimComplete(boolean oneFs) {
        XdrEncoder a = new XdrEncoder();
        a.writeBoolean(oneFs);
        return new OpCall(Op.RECLAIM_COMPLETE, a);
    }
}
