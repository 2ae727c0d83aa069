package dev.cairn.nfs.rpc;

import dev.cairn.core.async.Promise;
import dev.cairn.nfs.v4.CompoundState;
import dev.cairn.nfs.v4.Nfs4Server;
import dev.cairn.nfs.xdr.XdrDecoder;
import dev.cairn.nfs.xdr.XdrEncoder;
import dev.cairn.nfs.xdr.XdrException;

/**
 * The RPC program behind the gateway's port: NFS (100003) version 4, procedures NULL and COMPOUND.
 * Turns a received record into the reply record (unframed), or null when RFC 5531 says to stay silent.
 */
public final class NfsService {
    public static final int NFS_PROGRAM = 100003;
    public static final int NFS_V4 = 4;
    public static final int PROC_NULL = 0;
    public static final int PROC_COMPOUND = 1;

    private final Nfs4Server nfs4;

    public NfsService(Nfs4Server nfs4) { this.nfs4 = nfs4; }

    public Nfs4Server nfs4() { return nfs4; }

    public Promise<byte[]> handle(byte[] record, CompoundState.Connection conn) {
        RpcCall.Decoded decoded = RpcCall.decode(record);
        if (decoded instanceof RpcCall.Drop) return Promise.completed(null);
        if (decoded instanceof RpcCall.Reject r) return Promise.completed(r.reply());
        RpcCall call = ((RpcCall.Ok) decoded).call();
        int xid = call.xid();
        if (call.program() != NFS_PROGRAM) return Promise.completed(RpcReply.accepted(xid, RpcReply.PROG_UNAVAIL).toByteArray());
        if (call.version() != NFS_V4) return Promise.completed(RpcReply.progMismatch(xid, NFS_V4, NFS_V4));
        switch (call.procedure()) {
            case PROC_NULL -> {
                return Promise.completed(RpcReply.accepted(xid, RpcReply.SUCCESS).toByteArray());
            }
            case PROC_COMPOUND -> {
                if (minorVersionOf(call) != 0) return compound(call, conn);
                DuplicateRequestCache.Verdict v = replies40.check(conn.peerAddress(), xid, record);
                if (v instanceof DuplicateRequestCache.Answer a) return Promise.completed(a.reply());
                if (v instanceof DuplicateRequestCache.Drop) return Promise.completed(null);
                DuplicateRequestCache.Key key = ((DuplicateRequestCache.Run) v).key();
                return compound(call, conn).then((reply, e) -> {
                    replies40.done(key, e == null ? reply : null);
                    return e == null ? Promise.completed(reply) : Promise.<byte[]>failed(e);
                });
            }
            default -> {
                return Promise.completed(RpcReply.accepted(xid, RpcReply.PROC_UNAVAIL).toByteArray());
            }
        }
    }

    /** 4.0 calls answered once (see {@link DuplicateRequestCache}). */
    private final DuplicateRequestCache replies40 = new DuplicateRequestCache();

    public DuplicateRequestCache replies40() { return replies40; }

    /** The COMPOUND's minor version, read ahead of running it; -1 if its header does not decode (it is answered as garbage). */
    private static int minorVersionOf(RpcCall call) {
        try {
            XdrDecoder peek = call.args().copy();
            peek.readOpaque(Nfs4Server.MAX_TAG);
            return peek.readInt();
        } catch (XdrException e) {
            return -1;
        }
    }

    private Promise<byte[]> compound(RpcCall call, CompoundState.Connection conn) {
        int xid = call.xid();
        Promise<byte[]> body;
        try {
            body = nfs4.compound(call.args(), call.credentials(), conn, RpcReply.ACCEPTED_HEADER_BYTES);
        } catch (XdrException e) {
            return Promise.completed(RpcReply.accepted(xid, RpcReply.GARBAGE_ARGS).toByteArray());
        }
        return body.then((b, e) -> {
            if (e != null) {
                nfs4.log().warn("COMPOUND from {} failed: {}", conn.peerAddress(), e.toString());
                return Promise.completed(RpcReply.accepted(xid, RpcReply.SYSTEM_ERR).toByteArray());
            }
            // the COMPOUND4res came with room for the header in front: the record is b itself, never copied
            XdrEncoder header = RpcReply.accepted(xid, RpcReply.SUCCESS);
            assert header.size() == RpcReply.ACCEPTED_HEADER_BYTES;
            header.copyTo(b, 0);
            return Promise.completed(b);
        });
    }
}
