package dev.cairn.nfs.v4.op;

import dev.cairn.core.async.Promise;
import dev.cairn.nfs.v4.CompoundState;
import dev.cairn.nfs.v4.Nfs4Status;
import dev.cairn.nfs.v4.Operation;
import dev.cairn.nfs.xdr.XdrDecoder;
import dev.cairn.nfs.xdr.XdrEncoder;

/**
 * PUTROOTFH (RFC 8881 §18.21), and PUTPUBFH (§18.20): this server has no public file handle of its own, and
 * without one the public handle is the root's (RFC 7530 §16.22.4).
 */
public final class PutRootFh implements Operation {
    @Override public Promise<Integer> execute(CompoundState st, XdrDecoder d, XdrEncoder res) {
        if (st.export == null) return Operation.status(Nfs4Status.ACCESS); // not exported to this client
        st.current = st.server.rootHandle();
        return OK;
    }
}
