package dev.cairn.nfs.v4.op;

import dev.cairn.core.async.Promise;
import dev.cairn.nfs.rpc.Credentials;
import dev.cairn.nfs.v4.CompoundState;
import dev.cairn.nfs.v4.Nfs4Status;
import dev.cairn.nfs.v4.Operation;
import dev.cairn.nfs.xdr.XdrDecoder;
import dev.cairn.nfs.xdr.XdrEncoder;

/** SECINFO_NO_NAME (RFC 8881 §18.45): AUTH_SYS is the flavor here. It consumes the current file handle. */
public final class SecInfoNoName implements Operation {
    static final int STYLE_CURRENT_FH = 0;
    static final int STYLE_PARENT = 1;

    @Override public Promise<Integer> execute(CompoundState st, XdrDecoder d, XdrEncoder res) {
        int style = d.readInt();
        if (style != STYLE_CURRENT_FH && style != STYLE_PARENT) return Operation.status(Nfs4Status.INVAL);
        if (st.current == null) return Operation.status(Nfs4Status.NOFILEHANDLE);
        if (style == STYLE_PARENT && st.current.equals(st.server.rootHandle())) return Operation.status(Nfs4Status.NOENT);
        res.writeInt(1).writeInt(Credentials.AUTH_SYS);
        st.current = null;
        return OK;
    }
}
