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
 * ids (the same rule the other operations enforce). All six rights are always "supported".
 */
public final class Access implements Operation {
    @Override public Promise<Integer> execute(CompoundState st, XdrDecoder d, XdrEncoder res) {
        int asked = d.readInt();
        if (st.current == null) return Operation.status(Nfs4Status.NOFILEHANDLE);
        return Files.call(Files.fs(st).getAttr(st.current.inode()), a -> {
            int p = Files.permissions(st.credentials, a);
            int granted = 0;
            if ((p & 4) != 0) granted |= Files.ACCESS4_READ;
            if ((p & 2) != 0) {
                granted |= Files.ACCESS4_MODIFY | Files.ACCESS4_EXTEND;
                if (a.type() == FileType.DIR) granted |= Files.ACCESS4_DELETE;
            }
            if ((p & 1) != 0) granted |= a.type() == FileType.DIR ? Files.ACCESS4_LOOKUP : Files.ACCESS4_EXECUTE;
            int supported = asked & 0x3f;
            res.writeInt(supported).writeInt(granted & supported);
            return Nfs4Status.NFS4_OK;
        });
    }
}
