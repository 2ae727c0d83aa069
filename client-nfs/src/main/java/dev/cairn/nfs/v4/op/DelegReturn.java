package dev.cairn.nfs.v4.op;

import dev.cairn.core.async.Promise;
import dev.cairn.nfs.v4.CompoundState;
import dev.cairn.nfs.v4.Nfs4Status;
import dev.cairn.nfs.v4.Operation;
import dev.cairn.nfs.xdr.XdrDecoder;
import dev.cairn.nfs.xdr.XdrEncoder;

/** DELEGRETURN (RFC 8881 §18.6): this gateway hands out no delegations, so no stateid names one. */
public final class DelegReturn implements Operation {
    @Override public Promise<Integer> execute(CompoundState st, XdrDecoder d, XdrEncoder res) {
        Files.readStateId(d);
        if (st.current == null) return Operation.status(Nfs4Status.NOFILEHANDLE);
        return Operation.status(Nfs4Status.BAD_STATEID);
    }
}
