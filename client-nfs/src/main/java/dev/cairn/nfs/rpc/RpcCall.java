package dev.cairn.nfs.rpc;

import dev.cairn.nfs.xdr.XdrDecoder;

/**
 * One decoded ONC RPC call (RFC 5531 §9): the header, the caller's credentials and the undecoded
 * arguments. {@link #decode} never throws for bad input; it says what to answer instead.
 */
public record RpcCall(int xid, int program, int version, int procedure, Credentials credentials, XdrDecoder args) {
    public static final int CALL = 0;
    public static final int RPC_VERSION = 2;

    /** The outcome of decoding a record: a call, a reply to send right away, or nothing at all. */
    public sealed interface Decoded {}

    public record Ok(RpcCall call) implements Decoded {}

    /** A call we answer at the RPC level without running it (wrong RPC version, bad credentials, garbage). */
    public record Reject(byte[] reply) implements Decoded {}

    /** Not a call or too short to have an xid: nothing can be answered; RFC 5531 says to drop it. */
    public record Drop(String why) implements Decoded {}

    public static Decoded decode(byte[] record) {
        XdrDecoder d = new XdrDecoder(record);
        if (d.remaining() < 8) return new Drop("record of " + record.length + " bytes has no call header");
        int xid = d.readInt();
        int type = d.readInt();
        if (type != CALL) return new Drop("message type " + type + " is not a call");
        try {
            int rpcvers = d.readInt();
            if (rpcvers != RPC_VERSION) return new Reject(RpcReply.rpcMismatch(xid));
            int program = d.readInt(), version = d.readInt(), procedure = d.readInt();
            int flavor = d.readInt();
            byte[] body = d.readOpaque(Credentials.MAX_AUTH_BYTES);
            int verfFlavor = d.readInt();
            d.readOpaque(Credentials.MAX_AUTH_BYTES); // the verifier of AUTH_NONE/AUTH_SYS carries nothing we check
            Credentials cred;
            switch (flavor) {
                case Credentials.AUTH_NONE -> cred = new Credentials.None();
                case Credentials.AUTH_SYS -> {
                    try {
                        cred = Credentials.Sys.decode(body);
                    } catch (dev.cairn.nfs.xdr.XdrException e) {
                        return new Reject(RpcReply.authError(xid, RpcReply.AUTH_BADCRED));
                    }
                }
                default -> {
                    return new Reject(RpcReply.authError(xid, RpcReply.AUTH_TOOWEAK));
                }
            }
            if (verfFlavor != Credentials.AUTH_NONE && verfFlavor != Credentials.AUTH_SYS) {
                return new Reject(RpcReply.authError(xid, RpcReply.AUTH_BADVERF));
            }
            return new Ok(new RpcCall(xid, program, version, procedure, cred, d));
        } catch (dev.cairn.nfs.xdr.XdrException e) {
            return new Reject(RpcReply.accepted(xid, RpcReply.GARBAGE_ARGS).toByteArray());
        }
    }
}
