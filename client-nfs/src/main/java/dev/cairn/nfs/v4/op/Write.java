package dev.cairn.nfs.v4.op;

import dev.cairn.core.async.Promise;
import dev.cairn.core.proto.Types.AttrChange;
import dev.cairn.nfs.fs.ClusterFs;
import dev.cairn.nfs.v4.CompoundState;
import dev.cairn.nfs.v4.Fattr;
import dev.cairn.nfs.v4.Nfs4Status;
import dev.cairn.nfs.v4.Operation;
import dev.cairn.nfs.v4.state.StateTable;
import dev.cairn.nfs.v4.state.StateTable.StateId;
import dev.cairn.nfs.xdr.XdrDecoder;
import dev.cairn.nfs.xdr.XdrEncoder;

/**
 * WRITE (RFC 8881 §18.32): UNSTABLE data is held by the gateway until COMMIT; DATA_SYNC and FILE_SYNC
 * return only when the data and the new length are durable on every copy the file's class requires.
 * Every reply carries the gateway's write verifier, which changes when it restarts. A write by anyone but root
 * drops the file's set-id bits.
 */
public final class Write implements Operation {
    static final int UNSTABLE4 = 0, DATA_SYNC4 = 1, FILE_SYNC4 = 2;
    private static final AttrChange DROP_SET_ID = new AttrChange(AttrChange.DROP_SET_ID, AttrChange.KEEP, AttrChange.KEEP, AttrChange.KEEP,
            AttrChange.KEEP, AttrChange.KEEP);

    @Override public Promise<Integer> execute(CompoundState st, XdrDecoder d, XdrEncoder res) {
        StateId sid = Files.readStateId(d);
        long offset = d.readLong();
        int stable = d.readInt();
        byte[] data = d.readOpaque(Fattr.MAX_IO);
        if (st.current == null) return Operation.status(Nfs4Status.NOFILEHANDLE);
        if (stable < UNSTABLE4 || stable > FILE_SYNC4) return Operation.status(Nfs4Status.INVAL);
        if (offset < 0 || offset + data.length > dev.cairn.nfs.fs.ClusterFs.MAX_FILE_SIZE) return Operation.status(Nfs4Status.FBIG);
        long ino = st.current.inode();
        ClusterFs fs = Files.fs(st);
        return Files.withDataAccess(st, sid, ino, StateTable.ACCESS_WRITE, () -> fs.prepareWrite(ino), ClusterFs.WriteTarget::attr, target -> {
            if (data.length == 0) {
                res.writeInt(0).writeInt(FILE_SYNC4).writeFixedOpaque(st.server.writeVerifier());
                return OK;
            }
            // a write by anyone but root drops the file's set-id bits first (Linux's VFS, and knfsd with it): whoever
            // could change a set-user-id program must not be able to run it with its owner's privileges
            Promise<?> dropped = st.credentials.uid() != 0 && AttrChange.hasSetId(target.attr().mode())
                    ? fs.setAttr(ino, DROP_SET_ID) : Promise.completed(null);
            return Files.call(dropped.flatMap(v -> fs.write(target, offset, data, stable != UNSTABLE4)), w -> {
                res.writeInt(data.length).writeInt(stable == UNSTABLE4 ? UNSTABLE4 : FILE_SYNC4).writeFixedOpaque(st.server.writeVerifier());
                return Nfs4Status.NFS4_OK;
            });
        });
    }
}
