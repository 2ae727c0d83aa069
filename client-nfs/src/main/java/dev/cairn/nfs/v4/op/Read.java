package dev.cairn.nfs.v4.op;

import dev.cairn.core.async.Promise;
import dev.cairn.nfs.v4.CompoundState;
import dev.cairn.nfs.v4.Fattr;
import dev.cairn.nfs.v4.Nfs4Status;
import dev.cairn.nfs.v4.Operation;
import dev.cairn.nfs.xdr.XdrDecoder;
import dev.cairn.nfs.xdr.XdrEncoder;

/** READ (RFC 8881 §18.22): at most {@link Fattr#MAX_IO} bytes, within one chunk (a short read; clients continue). */
public final class Read implements Operation {
    @Override public Promise<Integer> execute(CompoundState st, XdrDecoder d, XdrEncoder res) {
        return Files.read(st, d, (offset, r) -> {
            res.writeBoolean(r.eof());
            res.writeOpaque(r.data());
            return Nfs4Status.NFS4_OK;
        });
    }
}
