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

/**
 * READ_PLUS (RFC 7862 §15.10): READ, with a hole answered as its offset and length instead of its zeros. Like READ
 * it answers at most {@link Fattr#MAX_IO} bytes within one chunk, so one segment: {@code NFS4_CONTENT_HOLE} where
 * the gateway knows the range is a hole ({@code ClusterFs.ReadResult#hole}: a chunk never committed, or past the
 * committed end, and zeros as read), else {@code NFS4_CONTENT_DATA}. Nothing at or past the end: no segment, eof.
 */
public final class ReadPlus implements Operation {
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
            if (r.data().length == 0) {
                res.writeInt(0);
            } else if (r.hole()) {
                res.writeInt(1).writeInt(Seek.CONTENT_HOLE).writeLong(offset).writeLong(r.data().length);
            } else {
                res.writeInt(1).writeInt(Seek.CONTENT_DATA).writeLong(offset).writeOpaque(r.data());
            }
            return Nfs4Status.NFS4_OK;
        }));
    }
}
