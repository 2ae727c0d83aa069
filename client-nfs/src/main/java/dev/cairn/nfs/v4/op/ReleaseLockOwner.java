package dev.cairn.nfs.v4.op;

import dev.cairn.core.async.Promise;
import dev.cairn.nfs.v4.CompoundState;
import dev.cairn.nfs.v4.Operation;
import dev.cairn.nfs.v4.state.StateTable;
import dev.cairn.nfs.xdr.XdrDecoder;
import dev.cairn.nfs.xdr.XdrEncoder;

/** RELEASE_LOCKOWNER (RFC 7530 §16.37, 4.0): no byte-range lock state is kept, so there is nothing to release. */
public final class ReleaseLockOwner implements Operation {
    @Override public Promise<Integer> execute(CompoundState st, XdrDecoder d, XdrEncoder res) {
        long clientId = d.readLong();
        d.readOpaque(StateTable.MAX_OWNER_BYTES);
        return Operation.status(st.server.checkClient40(clientId));
    }
}
