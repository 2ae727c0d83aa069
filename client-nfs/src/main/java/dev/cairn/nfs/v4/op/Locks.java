package dev.cairn.nfs.v4.op;

import dev.cairn.nfs.v4.CompoundState;
import dev.cairn.nfs.v4.Nfs4Status;
import dev.cairn.nfs.v4.state.ByteRangeLocks;
import dev.cairn.nfs.v4.state.StateTable;
import dev.cairn.nfs.xdr.XdrDecoder;
import dev.cairn.nfs.xdr.XdrEncoder;

/** What LOCK, LOCKT and LOCKU share: lock types, the lock_owner4 and LOCK4denied shapes. */
final class Locks {
    static final int READ_LT = 1, WRITE_LT = 2, READW_LT = 3, WRITEW_LT = 4;

    private Locks() {}

    static boolean validType(int type) { return type >= READ_LT && type <= WRITEW_LT; }

    /** Write locks exclude everyone else; the W ("blocking") variants are polled by the client, never queued here. */
    static boolean isWrite(int type) { return type == WRITE_LT || type == WRITEW_LT; }

    /** A lock_owner4: the client id (4.1 takes the session's instead) and the owner's opaque name. */
    static ByteRangeLocks.Owner readOwner(CompoundState st, XdrDecoder d) {
        long clientId = d.readLong();
        byte[] name = d.readOpaque(StateTable.MAX_OWNER_BYTES);
        return ByteRangeLocks.Owner.of(st.minorVersion >= 1 ? st.client().id() : clientId, name);
    }

    /** LOCK4denied: the conflicting lock, whose owner the client may show to the user. */
    static int denied(XdrEncoder res, ByteRangeLocks.Range r) {
        res.writeLong(r.first()).writeLong(r.length()).writeInt(r.write() ? WRITE_LT : READ_LT);
        res.writeLong(r.owner().clientId()).writeOpaque(r.owner().nameBytes());
        return Nfs4Status.DENIED;
    }

    /** The open access a lock of this type needs (a write lock a writable open, a read lock a readable one). */
    static int accessFor(int type) { return isWrite(type) ? StateTable.ACCESS_WRITE : StateTable.ACCESS_READ; }
}
