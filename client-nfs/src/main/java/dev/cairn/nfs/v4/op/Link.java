package dev.cairn.nfs.v4.op;

import dev.cairn.core.async.Promise;
import dev.cairn.nfs.v4.CompoundState;
import dev.cairn.nfs.v4.Nfs4Status;
import dev.cairn.nfs.v4.Operation;
import dev.cairn.nfs.xdr.XdrDecoder;
import dev.cairn.nfs.xdr.XdrEncoder;

/** LINK (RFC 8881 §18.9): saved handle is the file, current the directory that gets the new name. */
public final class Link implements Operation {
    @Override public Promise<Integer> execute(CompoundState st, XdrDecoder d, XdrEncoder res) {
        String name = Files.readName(d);
        if (st.current == null || st.saved == null) return Operation.status(Nfs4Status.NOFILEHANDLE);
        Integer bad = Files.badName(name);
        if (bad != null) return Operation.status(bad);
        long file = st.saved.inode(), dir = st.current.inode();
        return Files.inDirectory(st, dir, true, da -> Files.call(Files.fs(st).link(file, dir, name), r -> {
            Files.writeChangeInfo(res, r.dirs().get(0));
            return Nfs4Status.NFS4_OK;
        }));
    }
}
