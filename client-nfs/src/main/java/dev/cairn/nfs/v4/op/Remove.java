package dev.cairn.nfs.v4.op;

import dev.cairn.core.async.Promise;
import dev.cairn.nfs.v4.CompoundState;
import dev.cairn.nfs.v4.Nfs4Status;
import dev.cairn.nfs.v4.Operation;
import dev.cairn.nfs.xdr.XdrDecoder;
import dev.cairn.nfs.xdr.XdrEncoder;

/**
 * REMOVE (RFC 8881 §18.25): a file, symlink or empty directory; the caller needs write and search on the directory,
 * and in a sticky one to own the entry or the directory.
 */
public final class Remove implements Operation {
    @Override public Promise<Integer> execute(CompoundState st, XdrDecoder d, XdrEncoder res) {
        String name = Files.readName(d);
        if (st.current == null) return Operation.status(Nfs4Status.NOFILEHANDLE);
        Integer bad = Files.badName(name);
        if (bad != null) return Operation.status(bad);
        long dir = st.current.inode();
        return Files.inDirectory(st, dir, true, da -> Files.unlessStickyForbids(st, da, dir, name,
                () -> Files.call(Files.fs(st).unlink(dir, name), r -> {
                    Files.writeChangeInfo(res, r.dirs().get(0));
                    return Nfs4Status.NFS4_OK;
                })));
    }
}
