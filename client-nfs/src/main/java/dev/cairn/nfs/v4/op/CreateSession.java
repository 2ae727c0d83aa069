package dev.cairn.nfs.v4.op;

import dev.cairn.core.async.Promise;
import dev.cairn.nfs.rpc.Credentials;
import dev.cairn.nfs.v4.CompoundState;
import dev.cairn.nfs.v4.Nfs4Status;
import dev.cairn.nfs.v4.Operation;
import dev.cairn.nfs.v4.state.ChannelAttrs;
import dev.cairn.nfs.v4.state.Client;
import dev.cairn.nfs.v4.state.ClientTable;
import dev.cairn.nfs.v4.state.Session;
import dev.cairn.nfs.xdr.XdrDecoder;
import dev.cairn.nfs.xdr.XdrEncoder;

/**
 * CREATE_SESSION (RFC 8881 §18.36): confirms the client id and opens a session with a slot table. No
 * back channel is offered (no delegations, so nothing to call back): the flag asking for one is cleared.
 */
public final class CreateSession implements Operation {
    static final int FLAG_PERSIST = 0x1;
    static final int FLAG_CONN_BACK_CHAN = 0x2;
    static final int FLAG_CONN_RDMA = 0x4;
    static final int FLAGS_ALL = FLAG_PERSIST | FLAG_CONN_BACK_CHAN | FLAG_CONN_RDMA;
    static final int MAX_SEC_PARMS = 16;
    static final int RPCSEC_GSS = 6;
    static final int MAX_GSS_HANDLE = 1024;

    @Override public Promise<Integer> execute(CompoundState st, XdrDecoder d, XdrEncoder res) {
        long clientId = d.readLong();
        int sequence = d.readInt();
        int flags = d.readInt();
        ChannelAttrs fore = ChannelAttrs.decode(d);
        ChannelAttrs back = ChannelAttrs.decode(d);
        d.readInt(); // callback program: no callbacks are made
        int parms = d.readLength(MAX_SEC_PARMS, "callback security parameters");
        for (int i = 0; i < parms; i++) {
            int flavor = d.readInt();
            if (flavor == Credentials.AUTH_SYS) {
                d.readInt();
                d.readString(Credentials.MAX_MACHINE_NAME);
                d.readInt();
                d.readInt();
                int n = d.readLength(Credentials.MAX_GIDS, "gids");
                for (int g = 0; g < n; g++) d.readInt();
            } else if (flavor == RPCSEC_GSS) {
                d.readInt();
                d.readOpaque(MAX_GSS_HANDLE);
                d.readOpaque(MAX_GSS_HANDLE);
            } else if (flavor != Credentials.AUTH_NONE) {
                return Operation.status(Nfs4Status.INVAL);
            }
        }
        ClientTable table = st.server.clients();
        Client c = table.client(clientId);
        if (c == null || c.minorVersion() < 1) return Operation.status(Nfs4Status.STALE_CLIENTID);
        if (!c.confirmed() && c.principal() != st.credentials.uid()) return Operation.status(Nfs4Status.CLID_INUSE);
        ClientTable.CreateSessionAdmission admitted = table.admitCreateSession(c, sequence);
        if (admitted.replay() != null) {
            res.writeFixedOpaque(admitted.replay());
            return OK;
        }
        if (admitted.status() != Nfs4Status.NFS4_OK) return Operation.status(admitted.status());
        if ((flags & ~FLAGS_ALL) != 0) return Operation.status(Nfs4Status.INVAL);
        ChannelAttrs granted = fore.negotiate(ClientTable.LIMITS);
        // the back channel is not used, but a client asking for an impossible one has a bug worth telling
        ChannelAttrs backGranted = back.negotiate(ClientTable.LIMITS);
        if (granted == null || backGranted == null) return Operation.status(Nfs4Status.TOOSMALL);
        granted = table.withinReplyCacheBudget(granted);
        if (granted == null) return Operation.status(Nfs4Status.NOSPC);
        Session s = table.createSession(c, granted, st.connection.id());
        if (s == null) return Operation.status(Nfs4Status.NOSPC);
        table.confirm(c);
        table.renew(c, st.server.clock().nanoTime());
        XdrEncoder body = new XdrEncoder();
        body.writeFixedOpaque(s.id());
        body.writeInt(sequence);
        body.writeInt(0); // no back channel, no RDMA; the reply cache is in memory (not persistent)
        granted.encode(body);
        backGranted.encode(body);
        byte[] bytes = body.toByteArray();
        table.recordCreateSession(c, sequence, bytes);
        res.writeFixedOpaque(bytes);
        return confirmed(st, c);
    }

    /** A client just confirmed goes on the stable record before the answer (see {@link dev.cairn.nfs.v4.state.Grace}). */
    static Promise<Integer> confirmed(CompoundState st, Client c) {
        return st.server.grace().confirmed(c).then((v, e) -> {
            if (e != null) st.server.log().warn("could not record NFS client {} for a grace period: {}", c.id(), e.toString());
            return OK;
        });
    }
}
