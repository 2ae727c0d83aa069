package dev.cairn.nfs.xdr;

/**
 * Input that does not decode: truncated, an absurd length, a bad discriminant. Answered with
 * GARBAGE_ARGS (RPC level) or NFS4ERR_BADXDR (inside a COMPOUND); never fatal to the connection's peer
 * or the gateway.
 */
public final class XdrException extends RuntimeException implements dev.cairn.core.async.Unexpected.Expected {
    public XdrException(String message) { super(message, null, false, false); }
}
