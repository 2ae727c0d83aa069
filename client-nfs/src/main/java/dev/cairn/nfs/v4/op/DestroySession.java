package dev.cairn.nfs.v4.op;

import dev.cairn.core.async.Promise;
import dev.cairn.nfs.v4.CompoundState;
import dev.cairn.nfs.v4.Nfs4Status;
import dev.cairn.nfs.v4.Operation;
import dev.cairn.nfs.v4.state.Session;
import dev.cairn.nfs.xdr.XdrDecoder;
import dev.cairn.nfs.xdr.XdrEncoder;

/** DESTROY_SESSION (RFC 8881 §18.37). */
public final class DestroySession implements Operation {
    @Override public Promise<Integer> execute(CompoundState st, XdrDecoder d, XdrEncoder res) {
        Session s = st.server.clients().session(d.readFixedOpaque(Session.ID_BYTES));
        if (s == null) return Operation.status(Nfs4Status.BADSESSION);
        // RFC 8881 §18.37.3: destroying the session the COMPOUND runs in must be its last operation; any
        // other session only from a connection bound to it
        if (s == st.session && st.opIndex != st.operationCount - 1) return Operation.status(Nfs4Status.NOT_ONLY_OP);
        if (s != st.session && !s.isBound(st.connection.id())) return Operation.status(Nfs4Status.CONN_NOT_BOUND_TO_SESSION);
        if (s == st.session) {
            st.slot = null; // the reply of the COMPOUND that destroys its own session has no slot to live in
            st.session = null;
        }
        st.server.clients().destroySession(s);
        return OK;
    }
}
