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
 * DEALLOCATE (RFC 7862 §15.4), what {@code fallocate(FALLOC_FL_PUNCH_HOLE)} on a mount sends: the range reads as
 * zeros afterwards and the file's size does not change (a range past the end is ignored there). Cairn writes the
 * zeros through the ordinary write path ({@code ClusterFs.deallocate}) and answers once they are durable with the
 * length committed, as a FILE_SYNC WRITE would: DEALLOCATE has no COMMIT of its own to wait for. A range over
 * whole chunks could drop them instead; it does not yet, so punching a hole costs what writing it does.
 * ALLOCATE stays NOTSUPP: nothing here reserves space ahead of a write, and answering OK would promise it.
 */
public final class Deallocate implements Operation {
    @Override public Promise<Integer> execute(CompoundState st, XdrDecoder d, XdrEncoder res) {
        StateId sid = Files.readStateId(d);
        long offset = d.readLong();
        long length = d.readLong();
        if (st.current == null) return Operation.status(Nfs4Status.NOFILEHANDLE);
        // offset4 and length4 are unsigned: past 2^63, or a sum that wraps, is out of any file's reach
        if (offset < 0 || length < 0 || offset + length < 0) return Operation.status(Nfs4Status.INVAL);
        long ino = st.current.inode();
        return Files.withDataAccess(st, sid, ino, StateTable.ACCESS_WRITE, a -> {
            if (length == 0) return Operation.status(Nfs4Status.NFS4_OK);
            return Files.call(Files.fs(st).deallocate(ino, offset, length), x -> Nfs4Status.NFS4_OK);
        });
    }
}
