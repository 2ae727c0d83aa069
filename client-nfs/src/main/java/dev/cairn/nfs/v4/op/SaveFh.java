package dev.cairn.nfs.v4.op;

import dev.cairn.core.async.Promise;
import dev.cairn.nfs.v4.CompoundState;
import dev.cairn.nfs.v4.Nfs4Status;
import dev.cairn.nfs.v4.Operation;
import dev.cairn.nfs.xdr.XdrDecoder;
import dev.cairn.nfs.xdr.XdrEncoder;

/** SAVEFH (RFC 8881 §18.32). */
public final class SaveFh implements Operation {
    @Override public Promise<Integer> execute(CompoundState st, XdrDecoder d, XdrEncoder res) {
        if (st.current == null) return Operation.status(Nfs4Status.NOFILEHANDLE);
        st.saved = st.current;
        st.savedStateId = st.currentStateId; // the current stateid goes with its handle (RFC 8881 §16.2.3.1.2)
        return OK;
    }
}
