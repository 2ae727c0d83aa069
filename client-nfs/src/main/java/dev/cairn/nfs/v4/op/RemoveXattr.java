package dev.cairn.nfs.v4.op;

import dev.cairn.core.async.Promise;
import dev.cairn.core.proto.MasterProtocol;
import dev.cairn.nfs.v4.CompoundState;
import dev.cairn.nfs.v4.Nfs4Status;
import dev.cairn.nfs.v4.Operation;
import dev.cairn.nfs.xdr.XdrDecoder;
import dev.cairn.nfs.xdr.XdrEncoder;

/**
 * REMOVEXATTR (RFC 8276 §8.4.5): removes one extended attribute of the current object, NOXATTR if it has none of that
 * name; the caller needs write permission (ACCESS4_XAWRITE). Durable before the answer, like SETXATTR.
 */
public final class RemoveXattr implements Operation {
    private static final byte[] NO_VALUE = new byte[0];

    @Override public Promise<Integer> execute(CompoundState st, XdrDecoder d, XdrEncoder res) {
        return Files.namedXattr(st, d, true, (ino, name) -> Files.call(Files.fs(st).setXattr(ino, name, NO_VALUE, MasterProtocol.XATTR_REMOVE), after -> {
            Files.writeChangeInfo(res, after);
            return Nfs4Status.NFS4_OK;
        }));
    }
}
