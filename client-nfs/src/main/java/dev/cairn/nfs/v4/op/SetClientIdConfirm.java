package dev.cairn.nfs.v4.op;

import dev.cairn.core.async.Promise;
import dev.cairn.nfs.v4.CompoundState;
import dev.cairn.nfs.v4.Nfs4Status;
import dev.cairn.nfs.v4.Operation;
import dev.cairn.nfs.v4.state.Client;
import dev.cairn.nfs.xdr.XdrDecoder;
import dev.cairn.nfs.xdr.XdrEncoder;

/** SETCLIENTID_CONFIRM (RFC 7530 §16.34). */
public final class SetClientIdConfirm implements Operation {
    @Override public Promise<Integer> execute(CompoundState st, XdrDecoder d, XdrEncoder res) {
        long id = d.readLong();
        byte[] verifier = d.readFixedOpaque(8);
        Client c = st.server.clients().client(id);
        if (c == null || c.minorVersion() != 0) return Operation.status(Nfs4Status.STALE_CLIENTID);
        boolean update = c.confirmed() && c.confirmsUpdate(verifier);
        if (!update && !java.util.Arrays.equals(c.confirmVerifier(), verifier)) return Operation.status(Nfs4Status.STALE_CLIENTID);
        if (c.principal() != st.credentials.uid()) return Operation.status(Nfs4Status.CLID_INUSE);
        if (update) st.server.clients().acceptUpdate(c);
        else st.server.clients().confirm(c); // (a retransmitted confirm changes nothing)
        st.server.clients().renew(c, st.server.clock().nanoTime());
        return CreateSession.confirmed(st, c);
    }
}
