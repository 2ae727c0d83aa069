package dev.cairn.nfs.v4.op;

import dev.cairn.core.async.Promise;
import dev.cairn.nfs.v4.CompoundState;
import dev.cairn.nfs.v4.FileHandle;
import dev.cairn.nfs.v4.Nfs4Status;
import dev.cairn.nfs.v4.Operation;
import dev.cairn.nfs.xdr.XdrDecoder;
import dev.cairn.nfs.xdr.XdrEncoder;

/**
 * PUTFH (RFC 8881 §18.19): bytes we did not make are NFS4ERR_BADHANDLE; a handle of another file system
 * is NFS4ERR_STALE. Whether the inode still exists is checked by the operation that uses it.
 */
public final class PutFh implements Operation {
    @Override public Promise<Integer> execute(CompoundState st, XdrDecoder d, XdrEncoder res) {
        FileHandle fh = FileHandle.decode(d.readOpaque(FileHandle.MAX_BYTES));
        if (fh == null) return Operation.status(Nfs4Status.BADHANDLE);
        if (fh.fsid() != st.server.rootHandle().fsid()) return Operation.status(Nfs4Status.STALE);
        if (st.export == null) return Operation.status(Nfs4Status.ACCESS); // not exported to this client
        st.current = fh;
        return OK;
    }
}
