package dev.cairn.nfs.v4.op;

import dev.cairn.core.async.Promise;
import dev.cairn.nfs.v4.CompoundState;
import dev.cairn.nfs.v4.Nfs4Status;
import dev.cairn.nfs.v4.Operation;
import dev.cairn.nfs.xdr.XdrDecoder;
import dev.cairn.nfs.xdr.XdrEncoder;

/** GETFH (RFC 8881 §18.8). */
public final class GetFh implements Operation {
    @Override public Promise<Integer> execute(CompoundState st, XdrDecoder d, XdrEncoder res) {
        if (st.current == null) return Operation.status(Nfs4Status.NOFILEHANDLE);
        res.writeOpaque(st.current.encode());
        return OK;
    }
}
