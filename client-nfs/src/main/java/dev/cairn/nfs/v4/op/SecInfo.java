package dev.cairn.nfs.v4.op;

import dev.cairn.core.async.Promise;
import dev.cairn.nfs.v4.CompoundState;
import dev.cairn.nfs.v4.Nfs4Status;
import dev.cairn.nfs.v4.Operation;
import dev.cairn.nfs.xdr.XdrDecoder;
import dev.cairn.nfs.xdr.XdrEncoder;

/** SECINFO (RFC 8881 §18.29): AUTH_SYS for every name; it consumes the current handle (4.1) as SECINFO_NO_NAME does. */
public final class SecInfo implements Operation {
    @Override public Promise<Integer> execute(CompoundState st, XdrDecoder d, XdrEncoder res) {
        String name = Files.readName(d);
        if (st.current == null) return Operation.status(Nfs4Status.NOFILEHANDLE);
        Integer bad = Files.badName(name);
        if (bad != null) return Operation.status(bad);
        long dir = st.current.inode();
        return Files.call(Files.fs(st).lookup(dir, name), a -> {
            res.writeInt(1).writeInt(dev.cairn.nfs.rpc.Credentials.AUTH_SYS);
            if (st.minorVersion >= 1) st.current = null;
            return Nfs4Status.NFS4_OK;
        });
    }
}
