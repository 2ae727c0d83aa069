package dev.cairn.nfs.v4.op;

import dev.cairn.core.async.Promise;
import dev.cairn.nfs.v4.CompoundState;
import dev.cairn.nfs.v4.Fattr;
import dev.cairn.nfs.v4.Nfs4Status;
import dev.cairn.nfs.v4.Operation;
import dev.cairn.nfs.xdr.XdrDecoder;
import dev.cairn.nfs.xdr.XdrEncoder;

/** GETATTR (RFC 8881 §18.7): the attributes asked for that we support, and a bitmap saying which. */
public final class GetAttr implements Operation {
    @Override public Promise<Integer> execute(CompoundState st, XdrDecoder d, XdrEncoder res) {
        int[] requested = Fattr.readBitmap(d);
        if (st.current == null) return Operation.status(Nfs4Status.NOFILEHANDLE);
        if (Fattr.namesWriteOnly(requested)) return Operation.status(Nfs4Status.INVAL);
        var fh = st.current;
        return Files.call(Files.fs(st).getAttr(fh.inode()), a -> {
            Fattr.encode(res, requested, a, st.server.attrContext(fh, st.minorVersion));
            return Nfs4Status.NFS4_OK;
        });
    }
}
