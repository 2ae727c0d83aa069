package dev.cairn.nfs.v4.op;

import dev.cairn.core.async.Promise;
import dev.cairn.nfs.v4.CompoundState;
import dev.cairn.nfs.v4.Nfs4Status;
import dev.cairn.nfs.v4.Operation;
import dev.cairn.nfs.v4.state.Client;
import dev.cairn.nfs.v4.state.ClientTable;
import dev.cairn.nfs.xdr.XdrDecoder;
import dev.cairn.nfs.xdr.XdrEncoder;

/** EXCHANGE_ID (RFC 8881 §18.35): a 4.1 client introduces itself and gets a client id. */
public final class ExchangeId implements Operation {
    static final int FLAG_SUPP_MOVED_REFER = 0x1;
    static final int FLAG_SUPP_MOVED_MIGR = 0x2;
    static final int FLAG_BIND_PRINC_STATEID = 0x100;
    static final int FLAG_USE_NON_PNFS = 0x10000;
    static final int FLAG_USE_PNFS_MDS = 0x20000;
    static final int FLAG_USE_PNFS_DS = 0x40000;
    static final int FLAG_UPD_CONFIRMED_REC_A = 0x40000000;
    static final int FLAG_CONFIRMED_R = 0x80000000;
    /** EXCHGID4_FLAG_MASK_A: the flags a client may send. */
    static final int FLAGS_A = 0x40070103;
    static final int SP4_NONE = 0;
    static final int SP4_MACH_CRED = 1;
    static final int MAX_IMPL_IDS = 1;
    static final int MAX_IMPL_STRING = 1024;

    @Override public Promise<Integer> execute(CompoundState st, XdrDecoder d, XdrEncoder res) {
        byte[] verifier = d.readFixedOpaque(8);
        byte[] owner = d.readOpaque(ClientTable.MAX_OWNER);
        int flags = d.readInt();
        int how = d.readInt();
        if (how == SP4_MACH_CRED) {
            Attrs.readBitmap(d);
            Attrs.readBitmap(d);
            return Operation.status(Nfs4Status.NOTSUPP); // state protection needs RPCSEC_GSS; AUTH_SYS clients use SP4_NONE
        } else if (how != SP4_NONE) {
            return Operation.status(Nfs4Status.NOTSUPP);
        }
        int impls = d.readLength(MAX_IMPL_IDS, "client impl ids");
        for (int i = 0; i < impls; i++) {
            d.readString(MAX_IMPL_STRING);
            d.readString(MAX_IMPL_STRING);
            d.readLong();
            d.readInt();
        }
        if ((flags & ~FLAGS_A) != 0) return Operation.status(Nfs4Status.INVAL);

        ClientTable table = st.server.clients();
        long now = st.server.clock().nanoTime();
        int principal = st.credentials.uid();
        Client confirmed = table.confirmedByOwner(owner);
        Client out;
        if ((flags & FLAG_UPD_CONFIRMED_REC_A) != 0) { // cases 6-9 of RFC 8881 §18.35.4: update a confirmed record
            if (confirmed == null) return Operation.status(Nfs4Status.NOENT);
            if (!confirmed.sameVerifier(verifier)) return Operation.status(Nfs4Status.NOT_SAME);
            if (confirmed.principal() != principal) return Operation.status(Nfs4Status.PERM);
            out = confirmed;
        } else if (confirmed != null && confirmed.minorVersion() >= 1 && confirmed.sameVerifier(verifier) && confirmed.principal() == principal) {
            out = confirmed; // case 2: the same client asking again (it lost our reply, or probes trunking)
        } else {
            if (confirmed != null && confirmed.principal() != principal) { // case 3: another principal wants the owner
                if (!confirmed.sessions().isEmpty() || st.server.states().holds(confirmed.id())) return Operation.status(Nfs4Status.CLID_INUSE);
                table.remove(confirmed); // it holds nothing: it goes now
            }
            // case 1 (new), 4 (replaces an unconfirmed record) or 5 (the client rebooted: its confirmed
            // record and state stay until CREATE_SESSION confirms this one)
            out = table.create(owner, verifier, 1, principal, now);
            if (out == null) return Operation.status(Nfs4Status.RESOURCE);
            table.setCreateSessionSeq(out, 1);
        }
        table.renew(out, now);
        int replyFlags = FLAG_USE_NON_PNFS | (out.confirmed() ? FLAG_CONFIRMED_R : 0);
        res.writeLong(out.id());
        res.writeInt(out.confirmed() ? out.createSessionSeq() + 1 : out.createSessionSeq());
        res.writeInt(replyFlags);
        res.writeInt(SP4_NONE);
        res.writeLong(0); // so_minor_id
        res.writeString(st.server.identity().owner());
        res.writeString(st.server.identity().scope());
        res.writeInt(1); // one server implementation id
        res.writeString("cairn.dev");
        res.writeString("Cairn NFSv4 gateway");
        res.writeLong(0).writeInt(0);
        return OK;
    }
}
