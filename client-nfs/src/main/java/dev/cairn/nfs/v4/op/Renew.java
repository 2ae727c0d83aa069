package dev.cairn.nfs.v4.op;

import dev.cairn.core.async.Promise;
import dev.cairn.nfs.v4.CompoundState;
import dev.cairn.nfs.v4.Nfs4Status;
import dev.cairn.nfs.v4.Operation;
import dev.cairn.nfs.v4.state.Client;
import dev.cairn.nfs.xdr.XdrDecoder;
import dev.cairn.nfs.xdr.XdrEncoder;

/** RENEW (RFC 7530 §16.29): a 4.0 client keeps its lease; one whose lease ran out (its state gone) hears EXPIRED. */
public final class Renew implements Operation {
    @Override public Promise<Integer> execute(CompoundState st, XdrDecoder d, XdrEncoder res) {
        long id = d.readLong();
        Client c = st.server.clients().client(id);
        if (c == null && st.server.clients().expired(id)) return Operation.status(Nfs4Status.EXPIRED);
        if (c == null || c.minorVersion() != 0 || !c.confirmed()) return Operation.status(Nfs4Status.STALE_CLIENTID);
        st.server.clients().renew(c, st.server.clock().nanoTime());
        return OK;
    }
}
