package dev.cairn.nfs.v4.op;

import dev.cairn.core.async.Promise;
import dev.cairn.nfs.v4.CompoundState;
import dev.cairn.nfs.v4.Nfs4Status;
import dev.cairn.nfs.v4.Operation;
import dev.cairn.nfs.v4.state.Session;
import dev.cairn.nfs.xdr.XdrDecoder;
import dev.cairn.nfs.xdr.XdrEncoder;

/**
 * SEQUENCE (RFC 8881 §18.46): places the COMPOUND in a session slot. A new sequence id runs it; the same
 * one again is a retransmission, answered from the slot's cache without running anything twice.
 */
public final class Sequence implements Operation {
    /** SEQUENCE's result with its operation number and status: what even the smallest reply holds. */
    static final int RESULT_BYTES = 8 + 16 + 5 * 4;

    @Override public Promise<Integer> execute(CompoundState st, XdrDecoder d, XdrEncoder res) {
        byte[] sessionId = d.readFixedOpaque(Session.ID_BYTES);
        int sequenceId = d.readInt();
        int slotId = d.readInt();
        int highestSlot = d.readInt();
        st.cacheThis = d.readBoolean();
        Session s = st.server.clients().session(sessionId);
        if (s == null) return Operation.status(Nfs4Status.BADSESSION);
        // what the session negotiated (RFC 8881 §18.36.3); none of these moves the slot on
        if (st.operationCount > s.fore().maxOperations()) return Operation.status(Nfs4Status.TOO_MANY_OPS);
        if (st.requestBytes > s.fore().maxRequestSize()) return Operation.status(Nfs4Status.REQ_TOO_BIG);
        int limit = st.cacheThis ? Math.min(s.fore().maxResponseSize(), s.fore().maxResponseSizeCached()) : s.fore().maxResponseSize();
        if (st.replyOverhead + RESULT_BYTES > limit) {
            return Operation.status(st.replyOverhead + RESULT_BYTES > s.fore().maxResponseSize() ? Nfs4Status.REP_TOO_BIG : Nfs4Status.REP_TOO_BIG_TO_CACHE);
        }
        if (Integer.compareUnsigned(slotId, highestSlot) > 0) return Operation.status(Nfs4Status.BAD_HIGH_SLOT);
        Session.Admission a = s.admit(slotId, sequenceId);
        if (a instanceof Session.Refuse r) return Operation.status(r.status());
        if (a instanceof Session.Replay r) {
            st.replay = r.reply();
            return OK;
        }
        st.session = s;
        st.slot = ((Session.Execute) a).slot();
        st.replyLimit = limit;
        s.bind(st.connection.id()); // implicit binding of the connection (no state protection is offered)
        st.server.clients().renew(s.client(), st.server.clock().nanoTime());
        res.writeFixedOpaque(sessionId);
        res.writeInt(sequenceId);
        res.writeInt(slotId);
        res.writeInt(s.slotCount() - 1); // highest slot id
        res.writeInt(s.slotCount() - 1); // target highest slot id
        res.writeInt(0); // status flags: no callback path is expected, nothing revoked
        return OK;
    }
}
