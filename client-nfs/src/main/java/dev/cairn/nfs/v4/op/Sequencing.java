package dev.cairn.nfs.v4.op;

import dev.cairn.core.async.Promise;
import dev.cairn.nfs.v4.CompoundState;
import dev.cairn.nfs.v4.Operation;
import dev.cairn.nfs.v4.state.OwnerSequences;
import dev.cairn.nfs.v4.state.StateTable.StateId;
import dev.cairn.nfs.xdr.XdrEncoder;

/**
 * The 4.0 owner-sequence check at the start of OPEN, OPEN_CONFIRM, OPEN_DOWNGRADE, CLOSE, LOCK and LOCKU
 * ({@link OwnerSequences}). Each answers null when the operation is to run (its ticket is then settled
 * with the outcome by the COMPOUND), or the answer: a retransmission's cached reply, BAD_SEQID, DELAY.
 * In 4.1 the session's slot does this job and the seqid fields are ignored.
 */
final class Sequencing {
    private Sequencing() {}

    static Promise<Integer> check(CompoundState st, OwnerSequences.Owner owner, int op, int seqid, XdrEncoder res) {
        if (st.minorVersion != 0 || owner == null) return null;
        OwnerSequences.Verdict v = st.server.states().sequences().check(owner, op, seqid);
        if (v instanceof OwnerSequences.Proceed p) {
            st.sequenced.add(p.ticket());
            return null;
        }
        if (v instanceof OwnerSequences.Replay r) {
            res.writeRaw(r.body());
            if (r.current() != null) st.current = r.current();
            st.currentStateId = r.currentStateId();
            return Operation.status(r.status());
        }
        return Operation.status(((OwnerSequences.Refuse) v).status());
    }

    /** The same for an operation that names its owner by a stateid (the open's, or the lock state's). */
    static Promise<Integer> check(CompoundState st, StateId stateId, int op, int seqid, XdrEncoder res) {
        if (st.minorVersion != 0) return null;
        return check(st, st.server.states().sequenceOwner(stateId), op, seqid, res);
    }
}
