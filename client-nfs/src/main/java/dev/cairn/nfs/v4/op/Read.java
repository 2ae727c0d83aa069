package dev.cairn.nfs.v4.op;

import dev.cairn.core.async.Promise;
import dev.cairn.nfs.v4.CompoundState;
import dev.cairn.nfs.v4.Fattr;
import dev.cairn.nfs.v4.Nfs4Status;
import dev.cairn.nfs.v4.Operation;
import dev.cairn.nfs.v4.state.StateTable;
import dev.cairn.nfs.v4.state.StateTable.StateId;
import dev.cairn.nfs.xdr.XdrDecoder;
import dev.cairn.nfs.xdr.XdrEncoder;

/** READ (RFC 8881 §18.22): at most {@link Fattr#MAX_IO} bytes, within one chunk (a short read; clients continue). */
public final class Read implements Operation {
    @Override public Promise<Integer> execute(CompoundState st, XdrDecoder d, XdrEncoder res) {
        StateId sid = Files.readStateId(d);
        long offset = d.readLong();
        int count = d.readInt();
        if (st.current == null) return Operation.status(Nfs4Status.NOFILEHANDLE);
        if (offset < 0) return Operation.status(Nfs4Status.INVAL);
        long ino = st.current.inode();
        int n = (int) Math.min(Integer.toUnsignedLong(count), Fattr.MAX_IO);
        return Files.withDataAccess(st, sid, ino, StateTable.ACCESS_READ, a -> Files.call(Files.fs(st).read(ino, offset, n), r -> {
            res.writeBoolean(r.eof());
            res.writeOpaque(r.data());
            return Nfs4Status.NFS4_OK;
        }));
    }
}
