package dev.cairn.nfs.v4.op;

import dev.cairn.core.async.Promise;
import dev.cairn.nfs.v4.CompoundState;
import dev.cairn.nfs.v4.Nfs4Status;
import dev.cairn.nfs.v4.Operation;
import dev.cairn.nfs.v4.state.StateTable;
import dev.cairn.nfs.v4.state.StateTable.StateId;
import dev.cairn.nfs.xdr.XdrDecoder;
import dev.cairn.nfs.xdr.XdrEncoder;

/**
 * FREE_STATEID (RFC 8881 §18.38): frees a lock stateid whose owner holds no locks on the file any more
 * (LOCKS_HELD otherwise); an open's stateid is never freed this way, it must be closed (LOCKS_HELD).
 */
public final class FreeStateId implements Operation {
    @Override public Promise<Integer> execute(CompoundState st, XdrDecoder d, XdrEncoder res) {
        StateId sid = Files.resolveCurrent(st, Files.readStateId(d));
        int[] status = new int[1];
        if (sid.isSpecial()) return Operation.status(Nfs4Status.BAD_STATEID);
        StateTable.LockState lock = st.server.states().findLock(sid, st.minorVersion, Files.requester(st), status);
        if (lock != null) return Operation.status(st.server.states().freeLock(lock));
        if (st.server.states().find(sid, st.minorVersion, Files.requester(st), status) == null) return Operation.status(status[0]);
        return Operation.status(Nfs4Status.LOCKS_HELD);
    }
}
