package dev.cairn.nfs.v4.op;

import dev.cairn.core.async.Promise;
import dev.cairn.core.proto.Types.FileType;
import dev.cairn.nfs.v4.CompoundState;
import dev.cairn.nfs.v4.Nfs4Status;
import dev.cairn.nfs.v4.Operation;
import dev.cairn.nfs.xdr.XdrDecoder;
import dev.cairn.nfs.xdr.XdrEncoder;

/** LOOKUPP (RFC 8881 §18.16): the parent directory; NOENT at the root. */
public final class LookupP implements Operation {
    @Override public Promise<Integer> execute(CompoundState st, XdrDecoder d, XdrEncoder res) {
        if (st.current == null) return Operation.status(Nfs4Status.NOFILEHANDLE);
        if (st.current.inode() == st.server.rootHandle().inode()) return Operation.status(Nfs4Status.NOENT);
        long ino = st.current.inode();
        return Files.fs(st).getAttr(ino).then((a, e) -> {
            if (e != null) return Operation.status(Files.status(e));
            if (a.type() == FileType.SYMLINK) return Operation.status(Nfs4Status.SYMLINK);
            if (a.type() != FileType.DIR) return Operation.status(Nfs4Status.NOTDIR);
            st.current = Files.handle(st, a.parent());
            return OK;
        });
    }
}
