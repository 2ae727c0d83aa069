package dev.cairn.nfs.v4.op;

import dev.cairn.core.async.Promise;
import dev.cairn.nfs.v4.CompoundState;
import dev.cairn.nfs.v4.Nfs4Status;
import dev.cairn.nfs.v4.Operation;
import dev.cairn.nfs.v4.state.Client;
import dev.cairn.nfs.v4.state.ClientTable;
import dev.cairn.nfs.xdr.XdrDecoder;
import dev.cairn.nfs.xdr.XdrEncoder;

/** SETCLIENTID (RFC 7530 §16.33): a 4.0 client introduces itself; SETCLIENTID_CONFIRM finishes it. */
public final class SetClientId implements Operation {
    static final int MAX_NETADDR = 128;

    @Override public Promise<Integer> execute(CompoundState st, XdrDecoder d, XdrEncoder res) {
        byte[] verifier = d.readFixedOpaque(8);
        byte[] owner = d.readOpaque(ClientTable.MAX_OWNER);
        d.readInt(); // callback program: no callbacks (no delegations are handed out)
        d.readString(MAX_NETADDR);
        d.readString(MAX_NETADDR);
        d.readInt(); // callback ident
        ClientTable table = st.server.clients();
        int principal = st.credentials.uid();
        Client confirmed = table.confirmedByOwner(owner);
        if (confirmed != null && confirmed.principal() != principal && st.server.states().holds(confirmed.id())) {
            res.writeString("tcp").writeString(""); // clientaddr4 of the holder: not disclosed
            return Operation.status(Nfs4Status.CLID_INUSE);
        }
        if (confirmed != null && confirmed.minorVersion() == 0 && confirmed.sameVerifier(verifier) && confirmed.principal() == principal) {
            Client pending = table.unconfirmedByOwner(owner);
            if (pending != null) table.remove(pending);
            res.writeLong(confirmed.id());
            res.writeFixedOpaque(table.offerUpdate(confirmed)); // a callback update: same id, its state stays
            return OK;
        }
        // a new client, a rebooted one (its old record and state go when this one is confirmed), or a
        // replacement for an unconfirmed record
        Client out = table.create(owner, verifier, 0, principal, st.server.clock().nanoTime());
        if (out == null) return Operation.status(Nfs4Status.RESOURCE);
        res.writeLong(out.id());
        res.writeFixedOpaque(out.confirmVerifier());
        return OK;
    }
}
