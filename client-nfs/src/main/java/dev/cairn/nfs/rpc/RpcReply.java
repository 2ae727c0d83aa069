package dev.cairn.nfs.rpc;

import dev.cairn.nfs.xdr.XdrEncoder;

/** ONC RPC reply headers (RFC 5531 §9). */
public final class RpcReply {
    public static final int REPLY = 1;
    public static final int MSG_ACCEPTED = 0;
    public static final int MSG_DENIED = 1;

    public static final int SUCCESS = 0;
    public static final int PROG_UNAVAIL = 1;
    public static final int PROG_MISMATCH = 2;
    public static final int PROC_UNAVAIL = 3;
    public static final int GARBAGE_ARGS = 4;
    public static final int SYSTEM_ERR = 5;

    public static final int RPC_MISMATCH = 0;
    public static final int AUTH_ERROR = 1;

    public static final int AUTH_BADCRED = 1;
    public static final int AUTH_BADVERF = 3;
    public static final int AUTH_TOOWEAK = 5;

    private RpcReply() {}

    /** An accepted reply's header with {@code acceptStat}; the caller appends the results (for SUCCESS). */
    /** Bytes of an accepted reply's header ({@link #accepted}): what a session's reply-size limit counts besides the COMPOUND. */
    public static final int ACCEPTED_HEADER_BYTES = 24;

    public static XdrEncoder accepted(int xid, int acceptStat) {
        XdrEncoder e = new XdrEncoder();
        e.writeInt(xid).writeInt(REPLY).writeInt(MSG_ACCEPTED);
        e.writeInt(Credentials.AUTH_NONE).writeInt(0); // verifier
        e.writeInt(acceptStat);
        return e;
    }

    public static byte[] progMismatch(int xid, int low, int high) {
        return accepted(xid, PROG_MISMATCH).writeInt(low).writeInt(high).toByteArray();
    }

    public static byte[] rpcMismatch(int xid) {
        return new XdrEncoder().writeInt(xid).writeInt(REPLY).writeInt(MSG_DENIED).writeInt(RPC_MISMATCH)
                .writeInt(RpcCall.RPC_VERSION).writeInt(RpcCall.RPC_VERSION).toByteArray();
    }

    public static byte[] authError(int xid, int authStat) {
        return new XdrEncoder().writeInt(xid).writeInt(REPLY).writeInt(MSG_DENIED).writeInt(AUTH_ERROR).writeInt(authStat).toByteArray();
    }
}
