package dev.cairn.nfs.v4.op;

import dev.cairn.core.async.Promise;
import dev.cairn.nfs.v4.CompoundState;
import dev.cairn.nfs.v4.Operation;
import dev.cairn.nfs.v4.Nfs4Status;
import dev.cairn.nfs.v4.state.ByteRangeLocks;
import dev.cairn.nfs.v4.state.StateTable;
import dev.cairn.nfs.xdr.XdrDecoder;
import dev.cairn.nfs.xdr.XdrEncoder;

/** RELEASE_LOCKOWNER (RFC 7530 §16.37, 4.0): forgets a lock owner's lock stateids; LOCKS_HELD while it holds locks. */
public final class ReleaseLockOwner implements Operation {
    @Override public Promise<Integer> execute(CompoundState st, XdrDecoder d, XdrEncoder res) {
        long clientId = d.readLong();
        byte[] name = d.readOpaque(StateTable.MAX_OWNER_BYTES);
        int cs = st.server.checkClient40(clientId);
        if (cs != Nfs4Status.NFS4_OK) return Operation.status(cs);
        return Operation.status(st.server.states().releaseLockOwner(ByteRangeLocks.Owner.of(clientId, name)));
    }
}
