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
        return Files.existingEntry(st, d, false, (dir, name) -> Files.call(Files.fs(st).lookup(dir, name), a -> {
            st.current = Files.handle(st, a.inode());
            return Nfs4Status.NFS4_OK;
        }));
    }
}
