package dev.cairn.nfs.v4.op;

import dev.cairn.core.async.Promise;
import dev.cairn.nfs.v4.CompoundState;
import dev.cairn.nfs.v4.Nfs4Status;
import dev.cairn.nfs.v4.Operation;
import dev.cairn.nfs.xdr.XdrDecoder;
import dev.cairn.nfs.xdr.XdrEncoder;

/** RESTOREFH (RFC 8881 §18.27). */
public final class RestoreFh implements Operation {
    @Override public Promise<Integer> execute(CompoundState st, XdrDecoder d, XdrEncoder res) {
        if (st.saved == null) return Operation.status(Nfs4Status.RESTOREFH);
        st.current = st.saved;
        st.currentStateId = st.savedStateId;
        return OK;
    }
}
