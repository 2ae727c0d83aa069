package dev.cairn.nfs.v4.op;

import dev.cairn.core.async.Promise;
import dev.cairn.nfs.v4.CompoundState;
import dev.cairn.nfs.v4.Nfs4Status;
import dev.cairn.nfs.v4.Operation;
import dev.cairn.nfs.v4.state.StateTable;
import dev.cairn.nfs.v4.state.StateTable.StateId;
import dev.cairn.nfs.xdr.XdrDecoder;
import dev.cairn.nfs.xdr.XdrEncoder;

/** OPEN_CONFIRM (RFC 7530 §16.18, 4.0 only): this gateway never asks for it, but answers it for a valid open. */
public final class OpenConfirm implements Operation {
    @Override public Promise<Integer> execute(CompoundState st, XdrDecoder d, XdrEncoder res) {
        StateId sid = Files.readStateId(d);
        int seqid = d.readInt();
        if (st.current == null) return Operation.status(Nfs4Status.NOFILEHANDLE);
        Promise<Integer> answered = Sequencing.check(st, sid, dev.cairn.nfs.v4.Op.OPEN_CONFIRM, seqid, res);
        if (answered != null) return answered;
        int[] status = new int[1];
        StateTable.Open o = st.server.states().find(sid, st.minorVersion, Files.requester(st), status);
        if (o == null) return Operation.status(status[0]);
        o.seqid++;
        Files.writeStateId(res, st.server.states().stateId(o));
        return OK;
    }
}
