package dev.cairn.nfs.v4.op;

import dev.cairn.core.async.Promise;
import dev.cairn.nfs.v4.CompoundState;
import dev.cairn.nfs.v4.Nfs4Status;
import dev.cairn.nfs.v4.Operation;
import dev.cairn.nfs.v4.state.StateTable;
import dev.cairn.nfs.v4.state.StateTable.StateId;
import dev.cairn.nfs.xdr.XdrDecoder;
import dev.cairn.nfs.xdr.XdrEncoder;

/** OPEN_DOWNGRADE (RFC 8881 §18.18): to a subset of the access and deny modes the open holds. */
public final class OpenDowngrade implements Operation {
    @Override public Promise<Integer> execute(CompoundState st, XdrDecoder d, XdrEncoder res) {
        StateId sid = Files.readStateId(d);
        int seqid = d.readInt();
        int access = d.readInt() & StateTable.ACCESS_BOTH;
        int deny = d.readInt();
        if (st.current == null) return Operation.status(Nfs4Status.NOFILEHANDLE);
        Promise<Integer> answered = Sequencing.check(st, sid, dev.cairn.nfs.v4.Op.OPEN_DOWNGRADE, seqid, res);
        if (answered != null) return answered;
        sid = Files.resolveCurrent(st, sid);
        int[] status = new int[1];
        StateTable.Open o = st.server.states().find(sid, st.minorVersion, Files.requester(st), status);
        if (o == null) return Operation.status(status[0]);
        int s = st.server.states().downgrade(o, access, deny);
        if (s != Nfs4Status.NFS4_OK) return Operation.status(s);
        StateId next = st.server.states().stateId(o);
        st.currentStateId = next;
        Files.writeStateId(res, next);
        return OK;
    }
}
