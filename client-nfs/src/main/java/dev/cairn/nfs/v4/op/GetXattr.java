package dev.cairn.nfs.v4.op;

import dev.cairn.core.async.Promise;
import dev.cairn.nfs.v4.CompoundState;
import dev.cairn.nfs.v4.Nfs4Status;
import dev.cairn.nfs.v4.Operation;
import dev.cairn.nfs.xdr.XdrDecoder;
import dev.cairn.nfs.xdr.XdrEncoder;

/**
 * GETXATTR (RFC 8276 §8.4.2): the value of one extended attribute of the current object (any type), NOXATTR if it has
 * none of that name; the caller needs read permission (ACCESS4_XAREAD). The value comes from the master's namespace,
 * where SETXATTR made it durable before answering.
 */
public final class GetXattr implements Operation {
    @Override public Promise<Integer> execute(CompoundState st, XdrDecoder d, XdrEncoder res) {
        return Files.namedXattr(st, d, false, (ino, name) -> Files.call(Files.fs(st).getXattr(ino, name), value -> {
            res.writeOpaque(value);
            return Nfs4Status.NFS4_OK;
        }));
    }
}
