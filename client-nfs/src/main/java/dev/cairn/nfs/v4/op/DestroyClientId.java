package dev.cairn.nfs.v4.op;

import dev.cairn.core.async.Promise;
import dev.cairn.nfs.v4.CompoundState;
import dev.cairn.nfs.v4.Nfs4Status;
import dev.cairn.nfs.v4.Operation;
import dev.cairn.nfs.v4.state.Client;
import dev.cairn.nfs.xdr.XdrDecoder;
import dev.cairn.nfs.xdr.XdrEncoder;

/** DESTROY_CLIENTID (RFC 8881 §18.50): only a client without sessions may go. */
public final class DestroyClientId implements Operation {
    @Override public Promise<Integer> execute(CompoundState st, XdrDecoder d, XdrEncoder res) {
        Client c = st.server.clients().client(d.readLong());
        if (c == null) return Operation.status(Nfs4Status.STALE_CLIENTID);
        if (!c.sessions().isEmpty() || st.client() == c) return Operation.status(Nfs4Status.CLIENTID_BUSY);
        st.server.clients().remove(c);
        return OK;
    }
}
