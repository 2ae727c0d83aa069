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
 * CLOSE (RFC 8881 §18.2): ends the open and the lock states made from it (LOCKS_HELD while one of their
 * owners still holds locks on the file); 4.1 clients get the invalid special stateid back, 4.0 the next seqid.
 */
public final class Close implements Operation {
    @Override public Promise<Integer> execute(CompoundState st, XdrDecoder d, XdrEncoder res) {
        int seqid = d.readInt();
        StateId sid = Files.readStateId(d);
        if (st.current == null) return Operation.status(Nfs4Status.NOFILEHANDLE);
        Promise<Integer> answered = Sequencing.check(st, sid, dev.cairn.nfs.v4.Op.CLOSE, seqid, res);
        if (answered != null) return answered;
        sid = Files.resolveCurrent(st, sid);
        int[] status = new int[1];
        StateTable.Open o = st.server.states().find(sid, st.minorVersion, Files.requester(st), status);
        if (o == null) return Operation.status(status[0]);
        if (o.inode != st.current.inode()) return Operation.status(Nfs4Status.BAD_STATEID);
        if (st.server.states().locksHeld(o)) return Operation.status(Nfs4Status.LOCKS_HELD);
        st.server.states().close(o);
        if (st.minorVersion >= 1) {
            Files.writeStateId(res, new StateId(0xffff_ffff, new byte[12]));
        } else {
            Files.writeStateId(res, new StateId(o.seqid + 1, sid.other()));
        }
        return OK;
    }
}
