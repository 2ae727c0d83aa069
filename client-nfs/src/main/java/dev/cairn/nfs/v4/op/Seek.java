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
 * SEEK (RFC 7862 §15.11), what {@code lseek(SEEK_DATA)} and {@code lseek(SEEK_HOLE)} on a mount send, and {@code cp
 * --sparse} with them: the offset of the next data or hole at or after {@code sa_offset}, holes known at chunk
 * granularity ({@code ClusterFs.seek}). As Linux's server: an offset at or past the end, or data asked for where
 * only a hole follows, is NFS4ERR_NXIO (lseek's ENXIO); a hole found at the end of the file says {@code sr_eof}.
 */
public final class Seek implements Operation {
    /** data_content4. */
    static final int CONTENT_DATA = 0, CONTENT_HOLE = 1;

    @Override public Promise<Integer> execute(CompoundState st, XdrDecoder d, XdrEncoder res) {
        StateId sid = Files.readStateId(d);
        long offset = d.readLong();
        int what = d.readInt();
        if (st.current == null) return Operation.status(Nfs4Status.NOFILEHANDLE);
        if (what != CONTENT_DATA && what != CONTENT_HOLE) return Operation.status(Nfs4Status.UNION_NOTSUPP);
        long ino = st.current.inode();
        return Files.withDataAccess(st, sid, ino, StateTable.ACCESS_READ, a -> {
            if (offset < 0) return Operation.status(Nfs4Status.NXIO); // past 2^63: past any file's end
            return Files.call(Files.fs(st).seek(ino, offset, what == CONTENT_DATA), r -> {
                if (r.offset() < 0) return Nfs4Status.NXIO;
                res.writeBoolean(r.eof());
                res.writeLong(r.offset());
                return Nfs4Status.NFS4_OK;
            });
        });
    }
}
