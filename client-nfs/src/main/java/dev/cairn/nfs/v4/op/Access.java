package dev.cairn.nfs.v4.op;

import dev.cairn.core.async.Promise;
import dev.cairn.core.proto.Types.FileType;
import dev.cairn.nfs.v4.CompoundState;
import dev.cairn.nfs.v4.Nfs4Status;
import dev.cairn.nfs.v4.Operation;
import dev.cairn.nfs.xdr.XdrDecoder;
import dev.cairn.nfs.xdr.XdrEncoder;

/**
 * ACCESS (RFC 8881 §18.1): which of the asked rights the caller has, from the mode bits and its AUTH_SYS
 * ids (the same rule the other operations enforce). Each right is "supported" where it means something for the
 * object's type.
 */
public final class Access implements Operation {
    @Override public Promise<Integer> execute(CompoundState st, XdrDecoder d, XdrEncoder res) {
        int asked = d.readInt();
        if (st.current == null) return Operation.status(Nfs4Status.NOFILEHANDLE);
        return Files.call(Files.fs(st).getAttr(st.current.inode()), a -> {
            int p = Files.permissions(st.credentials, a);
            int granted = 0;
            if ((p & 4) != 0) granted |= Files.ACCESS4_READ | Files.ACCESS4_XAREAD | Files.ACCESS4_XALIST;
            if ((p & 2) != 0) {
                granted |= Files.ACCESS4_MODIFY | Files.ACCESS4_EXTEND | Files.ACCESS4_XAWRITE;
                if (a.type() == FileType.DIR) granted |= Files.ACCESS4_DELETE;
            }
            if ((p & 1) != 0) granted |= a.type() == FileType.DIR ? Files.ACCESS4_LOOKUP : Files.ACCESS4_EXECUTE;
            // rights with no meaning for the object's type are not "supported" for it (RFC 7530 §16.1.4): LOOKUP and
            // DELETE name entries of a directory, EXECUTE runs a non-directory
            int meaningful = a.type() == FileType.DIR ? 0x3f & ~Files.ACCESS4_EXECUTE : 0x3f & ~(Files.ACCESS4_LOOKUP | Files.ACCESS4_DELETE);
            // RFC 8276's bits, where its operations are served (4.1 and 4.2 COMPOUNDs): every object has extended attributes
            if (st.minorVersion >= 1) meaningful |= Files.ACCESS4_XAREAD | Files.ACCESS4_XAWRITE | Files.ACCESS4_XALIST;
            int supported = asked & meaningful;
            res.writeInt(supported).writeInt(granted & supported);
            return Nfs4Status.NFS4_OK;
        });
    }
}
