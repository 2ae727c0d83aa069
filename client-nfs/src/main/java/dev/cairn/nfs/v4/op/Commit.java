package dev.cairn.nfs.v4.op;

import dev.cairn.core.async.Promise;
import dev.cairn.core.proto.Types.FileType;
import dev.cairn.nfs.v4.CompoundState;
import dev.cairn.nfs.v4.Nfs4Status;
import dev.cairn.nfs.v4.Operation;
import dev.cairn.nfs.xdr.XdrDecoder;
import dev.cairn.nfs.xdr.XdrEncoder;

/**
 * COMMIT (RFC 8881 §18.3): returns only when every WRITE this gateway answered for the file is fsynced on
 * every copy its class requires and the length is committed at the master. The whole file is committed
 * whatever range is asked.
 */
public final class Commit implements Operation {
    @Override public Promise<Integer> execute(CompoundState st, XdrDecoder d, XdrEncoder res) {
        long offset = d.readLong();
        int count = d.readInt();
        if (st.current == null) return Operation.status(Nfs4Status.NOFILEHANDLE);
        if (offset < 0 || (count != 0 && offset + Integer.toUnsignedLong(count) < 0)) return Operation.status(Nfs4Status.INVAL);
        long ino = st.current.inode();
        return Files.fs(st).getAttr(ino).then((a, e) -> {
            if (e != null) return Operation.status(Files.status(e));
            if (a.type() == FileType.DIR) return Operation.status(Nfs4Status.ISDIR);
            if (a.type() != FileType.FILE) return Operation.status(Nfs4Status.INVAL);
            return Files.call(Files.fs(st).commit(ino), x -> {
                res.writeFixedOpaque(st.server.writeVerifier());
                return Nfs4Status.NFS4_OK;
            });
        });
    }
}
