package dev.cairn.nfs.v4.op;

import dev.cairn.core.async.Promise;
import dev.cairn.nfs.v4.CompoundState;
import dev.cairn.nfs.v4.Nfs4Status;
import dev.cairn.nfs.v4.Operation;
import dev.cairn.nfs.v4.state.ByteRangeLocks;
import dev.cairn.nfs.xdr.XdrDecoder;
import dev.cairn.nfs.xdr.XdrEncoder;

/** LOCKT (RFC 8881 §18.11): would this lock be granted? DENIED with the conflicting lock, or OK; nothing changes. */
public final class LockT implements Operation {
    @Override public Promise<Integer> execute(CompoundState st, XdrDecoder d, XdrEncoder res) {
        int type = d.readInt();
        long offset = d.readLong();
        long length = d.readLong();
        ByteRangeLocks.Owner owner = Locks.readOwner(st, d);
        if (st.current == null) return Operation.status(Nfs4Status.NOFILEHANDLE);
        if (!Locks.validType(type)) return Operation.status(Nfs4Status.INVAL);
        Long last = ByteRangeLocks.lastByte(offset, length);
        if (last == null) return Operation.status(Nfs4Status.INVAL);
        if (st.minorVersion == 0) {
            int cs = st.server.checkClient40(owner.clientId());
            if (cs != Nfs4Status.NFS4_OK) return Operation.status(cs);
        }
        if (st.server.grace().active()) return Operation.status(Nfs4Status.GRACE); // a reclaim may still claim the range
        long inode = st.current.inode();
        return Files.regularFile(st, () -> {
            ByteRangeLocks.Range conflict = st.server.states().ranges().conflict(inode, owner, Locks.isWrite(type), offset, last);
            return Operation.status(conflict == null ? Nfs4Status.NFS4_OK : Locks.denied(res, conflict));
        });
    }
}
