package dev.cairn.nfs.v4.op;

import dev.cairn.core.async.Promise;
import dev.cairn.nfs.v4.CompoundState;
import dev.cairn.nfs.v4.Nfs4Status;
import dev.cairn.nfs.v4.Operation;
import dev.cairn.nfs.v4.state.ByteRangeLocks;
import dev.cairn.nfs.v4.state.StateTable;
import dev.cairn.nfs.v4.state.StateTable.StateId;
import dev.cairn.nfs.xdr.XdrDecoder;
import dev.cairn.nfs.xdr.XdrEncoder;

/** LOCKU (RFC 8881 §18.12): releases a byte range of a lock owner's locks (any part of it may be unlocked already). */
public final class LockU implements Operation {
    @Override public Promise<Integer> execute(CompoundState st, XdrDecoder d, XdrEncoder res) {
        int type = d.readInt();
        int seqid = d.readInt();
        StateId sid = Files.readStateId(d);
        long offset = d.readLong();
        long length = d.readLong();
        if (st.current == null) return Operation.status(Nfs4Status.NOFILEHANDLE);
        Promise<Integer> answered = Sequencing.check(st, sid, dev.cairn.nfs.v4.Op.LOCKU, seqid, res);
        if (answered != null) return answered;
        if (!Locks.validType(type)) return Operation.status(Nfs4Status.INVAL);
        Long last = ByteRangeLocks.lastByte(offset, length);
        if (last == null) return Operation.status(Nfs4Status.INVAL);
        sid = Files.resolveCurrent(st, sid);
        int[] status = new int[1];
        StateTable.LockState ls = st.server.states().findLock(sid, st.minorVersion, Files.requester(st), status);
        if (ls == null) return Operation.status(status[0]);
        if (ls.open.inode != st.current.inode()) return Lock.wrongFile(st);
        st.server.states().ranges().unlock(ls.open.inode, ls.owner, offset, last);
        ls.seqid++;
        StateId out = st.server.states().stateId(ls);
        Files.writeStateId(res, out);
        st.currentStateId = out;
        return OK;
    }
}
