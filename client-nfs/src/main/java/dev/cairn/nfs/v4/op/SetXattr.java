package dev.cairn.nfs.v4.op;

import dev.cairn.core.async.Promise;
import dev.cairn.core.proto.MasterProtocol;
import dev.cairn.nfs.v4.CompoundState;
import dev.cairn.nfs.v4.Fattr;
import dev.cairn.nfs.v4.Nfs4Status;
import dev.cairn.nfs.v4.Operation;
import dev.cairn.nfs.xdr.XdrDecoder;
import dev.cairn.nfs.xdr.XdrEncoder;

/**
 * SETXATTR (RFC 8276 §8.4.3): sets one extended attribute of the current object; {@code SETXATTR4_CREATE} fails EXIST if
 * it is set, {@code SETXATTR4_REPLACE} NOXATTR if not. The caller needs write permission (ACCESS4_XAWRITE). A value
 * over {@link MasterProtocol#MAX_XATTR_VALUE_BYTES} is XATTR2BIG; an object already holding the most names or bytes
 * the master keeps per inode, NOSPC. Answered once the master's metadata log made the change durable; the object's
 * change attribute moves with it (change_info4, not atomic).
 */
public final class SetXattr implements Operation {
    @Override public Promise<Integer> execute(CompoundState st, XdrDecoder d, XdrEncoder res) {
        int how = d.readInt();
        String name = Files.readName(d);
        // read whatever size came (the session bounds a request), so that a large value is XATTR2BIG and not BADXDR
        byte[] value = d.readOpaque(Fattr.MAX_IO);
        if (st.current == null) return Operation.status(Nfs4Status.NOFILEHANDLE);
        if (how != MasterProtocol.XATTR_EITHER && how != MasterProtocol.XATTR_CREATE && how != MasterProtocol.XATTR_REPLACE) {
            return Operation.status(Nfs4Status.INVAL);
        }
        Integer bad = Files.badXattrName(name);
        if (bad != null) return Operation.status(bad);
        if (value.length > MasterProtocol.MAX_XATTR_VALUE_BYTES) return Operation.status(Nfs4Status.XATTR2BIG);
        long ino = st.current.inode();
        return Files.withXattrAccess(st, true, a -> Files.call(Files.fs(st).setXattr(ino, name, value, how), after -> {
            Files.writeChangeInfo(res, after);
            return Nfs4Status.NFS4_OK;
        }));
    }
}
