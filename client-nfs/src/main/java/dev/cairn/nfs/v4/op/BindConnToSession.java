package dev.cairn.nfs.v4.op;

import dev.cairn.core.async.Promise;
import dev.cairn.nfs.v4.CompoundState;
import dev.cairn.nfs.v4.Nfs4Status;
import dev.cairn.nfs.v4.Operation;
import dev.cairn.nfs.v4.state.Session;
import dev.cairn.nfs.xdr.XdrDecoder;
import dev.cairn.nfs.xdr.XdrEncoder;

/**
 * BIND_CONN_TO_SESSION (RFC 8881 §18.34): a client reconnecting adds the new connection to its session.
 * Only the fore channel exists here, so that is what the connection is bound to.
 */
public final class BindConnToSession implements Operation {
    static final int CDFC4_FORE = 0x1;
    static final int CDFC4_BACK = 0x2;
    static final int CDFC4_FORE_OR_BOTH = 0x3;
    static final int CDFC4_BACK_OR_BOTH = 0x7;
    static final int CDFS4_FORE = 0x1;

    @Override public Promise<Integer> execute(CompoundState st, XdrDecoder d, XdrEncoder res) {
        byte[] id = d.readFixedOpaque(Session.ID_BYTES);
        int dir = d.readInt();
        d.readBoolean(); // RDMA mode: not offered
        Session s = st.server.clients().session(id);
        if (s == null) return Operation.status(Nfs4Status.BADSESSION);
        if (dir == CDFC4_BACK) return Operation.status(Nfs4Status.INVAL); // no back channel to bind to
        if (dir != CDFC4_FORE && dir != CDFC4_FORE_OR_BOTH && dir != CDFC4_BACK_OR_BOTH) return Operation.status(Nfs4Status.INVAL);
        s.bind(st.connection.id());
        st.server.clients().renew(s.client(), st.server.clock().nanoTime());
        res.writeFixedOpaque(id);
        res.writeInt(CDFS4_FORE);
        res.writeBoolean(false);
        return OK;
    }
}
