package dev.cairn.nfs.v4.op;

import dev.cairn.core.async.Promise;
import dev.cairn.nfs.v4.CompoundState;
import dev.cairn.nfs.v4.Nfs4Status;
import dev.cairn.nfs.v4.Op;
import dev.cairn.nfs.v4.Operation;
import dev.cairn.nfs.v4.state.ByteRangeLocks;
import dev.cairn.nfs.v4.state.OwnerSequences;
import dev.cairn.nfs.v4.state.StateTable;
import dev.cairn.nfs.v4.state.StateTable.StateId;
import dev.cairn.nfs.xdr.XdrDecoder;
import dev.cairn.nfs.xdr.XdrEncoder;

/**
 * LOCK (RFC 8881 §18.10, RFC 7530 §16.10): takes a read or write lock on a byte range for a lock owner,
 * either new (named with the open it locks through) or known by its lock stateid. A conflicting lock of
 * another owner gets NFS4ERR_DENIED with that lock described; the blocking lock types are answered the
 * same way and the client polls. A reclaim (after a gateway restart) is taken only in the grace period,
 * during which other locks wait ({@link dev.cairn.nfs.v4.state.Grace}).
 */
public final class Lock implements Operation {
    @Override public Promise<Integer> execute(CompoundState st, XdrDecoder d, XdrEncoder res) {
        int type = d.readInt();
        boolean reclaim = d.readBoolean();
        long offset = d.readLong();
        long length = d.readLong();
        boolean newOwner = d.readBoolean();
        StateId sid;
        ByteRangeLocks.Owner owner = null;
        int openSeqid = 0, lockSeqid;
        if (newOwner) {
            openSeqid = d.readInt();
            sid = Files.readStateId(d);
            lockSeqid = d.readInt();
            owner = Locks.readOwner(st, d);
        } else {
            sid = Files.readStateId(d);
            lockSeqid = d.readInt();
        }
        if (st.current == null) return Operation.status(Nfs4Status.NOFILEHANDLE);
        if (st.minorVersion == 0) {
            // A lock-owner's sequence is established by its first granted LOCK (as knfsd does, and the Linux
            // client expects): until then each LOCK naming it as new starts it afresh at lock_seqid, since a
            // denied one leaves the client nothing to continue from. The open-owner's sequence moves on too;
            // a retransmission of a granted LOCK finds the lock-owner at lock_seqid and gets the first reply.
            if (newOwner && !states0(st).lockOwnerEstablished(owner)) states0(st).sequences().forget(OwnerSequences.lockOwner(owner));
            Promise<Integer> answered = newOwner
                    ? Sequencing.check(st, OwnerSequences.lockOwner(owner), Op.LOCK, lockSeqid, res)
                    : Sequencing.check(st, sid, Op.LOCK, lockSeqid, res);
            if (answered != null) return answered;
            if (newOwner) {
                // a replay here is a retransmission of a LOCK that was not granted (the lock-owner started afresh)
                answered = Sequencing.check(st, sid, Op.LOCK, openSeqid, res);
                if (answered != null) return answered;
            }
        }
        if (!Locks.validType(type)) return Operation.status(Nfs4Status.INVAL);
        Long last = ByteRangeLocks.lastByte(offset, length);
        if (last == null) return Operation.status(Nfs4Status.INVAL);
        sid = Files.resolveCurrent(st, sid);
        StateTable states = st.server.states();
        int[] status = new int[1];
        StateTable.LockState ls;
        if (newOwner) {
            StateTable.Open o = states.find(sid, st.minorVersion, Files.requester(st), status);
            if (o == null) return Operation.status(status[0]);
            if (st.minorVersion == 0) {
                if (owner.clientId() != o.clientId) return Operation.status(Nfs4Status.STALE_CLIENTID);
                int cs = st.server.checkClient40(owner.clientId());
                if (cs != Nfs4Status.NFS4_OK) return Operation.status(cs);
            }
            if (o.inode != st.current.inode()) return wrongFile(st);
            ls = states.lockState(o, owner, status);
            if (ls == null) return Operation.status(status[0]);
        } else {
            ls = states.findLock(sid, st.minorVersion, Files.requester(st), status);
            if (ls == null) return Operation.status(status[0]);
            if (ls.open.inode != st.current.inode()) return wrongFile(st);
        }
        int g = st.server.grace().admit(st.minorVersion >= 1 ? st.client() : st.server.clients().client(ls.open.clientId), reclaim);
        if (g != Nfs4Status.NFS4_OK) return Operation.status(g);
        if ((ls.open.access & Locks.accessFor(type)) == 0) return Operation.status(Nfs4Status.OPENMODE);
        boolean write = Locks.isWrite(type);
        long inode = ls.open.inode;
        ByteRangeLocks.Range conflict = states.ranges().conflict(inode, ls.owner, write, offset, last);
        if (conflict != null) return Operation.status(Locks.denied(res, conflict));
        if (!states.ranges().lock(inode, ls.owner, write, offset, last)) return Operation.status(Nfs4Status.DELAY);
        ls.seqid++;
        StateId out = states.stateId(ls);
        Files.writeStateId(res, out);
        st.currentStateId = out;
        return OK;
    }

    private static StateTable states0(CompoundState st) { return st.server.states(); }

    /** The stateid is of another file: the current handle is not a file at all (ISDIR, ...), or BAD_STATEID. */
    static Promise<Integer> wrongFile(CompoundState st) {
        return Files.regularFile(st, () -> Operation.status(Nfs4Status.BAD_STATEID));
    }
}
