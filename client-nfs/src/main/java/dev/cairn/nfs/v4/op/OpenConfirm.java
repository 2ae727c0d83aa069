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
 * OPEN_CONFIRM (RFC 7530 §16.18, 4.0 only): the first OPEN of a new open-owner asks for it (OPEN4_RESULT_CONFIRM),
 * and its stateid serves nothing else until the owner is confirmed; a second confirmation is BAD_STATEID.
 */
public final class OpenConfirm implements Operation {
    @Override public Promise<Integer> execute(CompoundState st, XdrDecoder d, XdrEncoder res) {
        StateId sid = Files.readStateId(d);
        int seqid = d.readInt();
        if (st.current == null) return Operation.status(Nfs4Status.NOFILEHANDLE);
        Promise<Integer> answered = Sequencing.check(st, sid, dev.cairn.nfs.v4.Op.OPEN_CONFIRM, seqid, res);
        if (answered != null) return answered;
        int[] status = new int[1];
        StateTable.Open o = st.server.states().findAny(sid, st.minorVersion, Files.requester(st), status);
        if (o == null) return Operation.status(status[0]);
        if (o.inode != st.current.inode()) return Operation.status(Nfs4Status.BAD_STATEID);
        int confirmed = st.server.states().confirm(o);
        if (confirmed != Nfs4Status.NFS4_OK) return Operation.status(confirmed);
        Files.writeStateId(res, st.server.states().stateId(o));
        return OK;
    }
}
