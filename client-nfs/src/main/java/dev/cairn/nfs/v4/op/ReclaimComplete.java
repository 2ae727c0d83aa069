package dev.cairn.nfs.v4.op;

import dev.cairn.core.async.Promise;
import dev.cairn.nfs.v4.CompoundState;
import dev.cairn.nfs.v4.Nfs4Status;
import dev.cairn.nfs.v4.Operation;
import dev.cairn.nfs.v4.state.Client;
import dev.cairn.nfs.xdr.XdrDecoder;
import dev.cairn.nfs.xdr.XdrEncoder;

/** RECLAIM_COMPLETE (RFC 8881 §18.51): the client has reclaimed what it held before our restart. */
public final class ReclaimComplete implements Operation {
    @Override public Promise<Integer> execute(CompoundState st, XdrDecoder d, XdrEncoder res) {
        boolean oneFs = d.readBoolean();
        Client c = st.client();
        if (oneFs) return OK; // one file system here: the global form below is what counts
        if (c.reclaimComplete()) return Operation.status(Nfs4Status.COMPLETE_ALREADY);
        st.server.clients().markReclaimComplete(c);
        st.server.grace().reclaimComplete(c);
        return OK;
    }
}
