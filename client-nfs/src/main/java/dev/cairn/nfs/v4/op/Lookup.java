package dev.cairn.nfs.v4.op;

import dev.cairn.core.async.Promise;
import dev.cairn.nfs.v4.CompoundState;
import dev.cairn.nfs.v4.Nfs4Status;
import dev.cairn.nfs.v4.Operation;
import dev.cairn.nfs.xdr.XdrDecoder;
import dev.cairn.nfs.xdr.XdrEncoder;

/** LOOKUP (RFC 8881 §18.15): the current handle becomes the named entry's; the caller needs search (x) on the directory. */
public final class Lookup implements Operation {
    @Override public Promise<Integer> execute(CompoundState st, XdrDecoder d, XdrEncoder res) {
        String name = Files.readName(d);
        if (st.current == null) return Operation.status(Nfs4Status.NOFILEHANDLE);
        Integer bad = Files.badExistingName(name);
        if (bad != null) return Operation.status(bad);
        long dir = st.current.inode();
        return Files.inDirectory(st, dir, false, da -> Files.call(Files.fs(st).lookup(dir, name), a -> {
            st.current = Files.handle(st, a.inode());
            return Nfs4Status.NFS4_OK;
        }));
    }
}
