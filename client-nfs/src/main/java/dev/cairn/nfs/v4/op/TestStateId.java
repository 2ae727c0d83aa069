package dev.cairn.nfs.v4.op;

import dev.cairn.core.async.Promise;
import dev.cairn.nfs.v4.CompoundState;
import dev.cairn.nfs.v4.Nfs4Status;
import dev.cairn.nfs.v4.Operation;
import dev.cairn.nfs.v4.state.StateTable.StateId;
import dev.cairn.nfs.xdr.XdrDecoder;
import dev.cairn.nfs.xdr.XdrEncoder;

/** TEST_STATEID (RFC 8881 §18.48): the status each stateid (an open's or a lock's) would get. */
public final class TestStateId implements Operation {
    static final int MAX_STATEIDS = 1024;

    @Override public Promise<Integer> execute(CompoundState st, XdrDecoder d, XdrEncoder res) {
        int n = d.readLength(MAX_STATEIDS, "stateids");
        int[] out = new int[n];
        for (int i = 0; i < n; i++) {
            StateId sid = Files.readStateId(d);
            int[] status = new int[1];
            if (sid.isSpecial()) out[i] = Nfs4Status.BAD_STATEID;
            else if (st.server.states().resolve(sid, st.minorVersion, Files.requester(st), status) == null) out[i] = status[0];
            else out[i] = Nfs4Status.NFS4_OK;
        }
        res.writeInt(n);
        for (int s : out) res.writeInt(s);
        return OK;
    }
}
