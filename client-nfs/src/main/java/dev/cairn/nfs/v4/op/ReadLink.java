package dev.cairn.nfs.v4.op;

import dev.cairn.core.async.Promise;
import dev.cairn.core.proto.Types.FileType;
import dev.cairn.nfs.v4.CompoundState;
import dev.cairn.nfs.v4.Nfs4Status;
import dev.cairn.nfs.v4.Operation;
import dev.cairn.nfs.xdr.XdrDecoder;
import dev.cairn.nfs.xdr.XdrEncoder;

/** READLINK (RFC 8881 §18.24): a symlink's target; INVAL for anything else. */
public final class ReadLink implements Operation {
    @Override public Promise<Integer> execute(CompoundState st, XdrDecoder d, XdrEncoder res) {
        if (st.current == null) return Operation.status(Nfs4Status.NOFILEHANDLE);
        return Files.call(Files.fs(st).getAttr(st.current.inode()), a -> {
            if (a.type() != FileType.SYMLINK) return Nfs4Status.INVAL;
            res.writeString(a.target());
            return Nfs4Status.NFS4_OK;
        });
    }
}
