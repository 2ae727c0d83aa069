package dev.cairn.nfs.v4.op;

import dev.cairn.core.async.Promise;
import dev.cairn.nfs.v4.CompoundState;
import dev.cairn.nfs.v4.Fattr;
import dev.cairn.nfs.v4.Nfs4Status;
import dev.cairn.nfs.v4.Operation;
import dev.cairn.nfs.xdr.XdrDecoder;
import dev.cairn.nfs.xdr.XdrEncoder;

/**
 * VERIFY and NVERIFY (RFC 8881 §18.31, §18.20): the given attribute values are compared, as encoded,
 * with the file's. VERIFY goes on when they are all the same (else NOT_SAME); NVERIFY when any differs
 * (else SAME).
 */
public final class Verify implements Operation {
    private final boolean negated;

    private Verify(boolean negated) { this.negated = negated; }

    public static Verify verify() { return new Verify(false); }

    public static Verify nverify() { return new Verify(true); }

    @Override public Promise<Integer> execute(CompoundState st, XdrDecoder d, XdrEncoder res) {
        int[] bitmap = Fattr.readBitmap(d);
        byte[] theirs = d.readOpaque(64 * 1024);
        if (st.current == null) return Operation.status(Nfs4Status.NOFILEHANDLE);
        if (Fattr.isSet(bitmap, Fattr.RDATTR_ERROR) || Fattr.namesWriteOnly(bitmap)) return Operation.status(Nfs4Status.INVAL);
        int[] supported = Fattr.supported(st.minorVersion);
        for (int a = 0; a < bitmap.length * 32; a++) {
            if (Fattr.isSet(bitmap, a) && !Fattr.isSet(supported, a)) return Operation.status(Nfs4Status.ATTRNOTSUPP);
        }
        var fh = st.current;
        return Files.call(Files.fs(st).getAttr(fh.inode()), a -> {
            XdrEncoder mine = new XdrEncoder();
            Fattr.encode(mine, bitmap, a, st.server.attrContext(fh, st.minorVersion));
            XdrDecoder m = new XdrDecoder(mine.toByteArray());
            Fattr.readBitmap(m);
            boolean same = java.util.Arrays.equals(m.readOpaque(64 * 1024), theirs);
            if (negated) return same ? Nfs4Status.SAME : Nfs4Status.NFS4_OK;
            return same ? Nfs4Status.NFS4_OK : Nfs4Status.NOT_SAME;
        });
    }
}
