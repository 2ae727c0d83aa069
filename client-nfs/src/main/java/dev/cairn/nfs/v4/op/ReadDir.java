package dev.cairn.nfs.v4.op;

import dev.cairn.core.async.Promise;
import dev.cairn.core.proto.Types.FileType;
import dev.cairn.nfs.v4.CompoundState;
import dev.cairn.nfs.v4.Fattr;
import dev.cairn.nfs.v4.Nfs4Status;
import dev.cairn.nfs.v4.Operation;
import dev.cairn.nfs.xdr.XdrDecoder;
import dev.cairn.nfs.xdr.XdrEncoder;

/**
 * READDIR (RFC 8881 §18.23): entries after a cookie, each with the attributes asked for, within the
 * client's maxcount. Cookies are the master's entry ids: stable while an entry exists and never reused,
 * so the cookie verifier never needs to change (it is all zeros).
 */
public final class ReadDir implements Operation {
    static final byte[] VERIFIER = new byte[8];
    /** Bytes of READDIR4resok around the entries: the verifier, the end of the list, eof. */
    static final int OVERHEAD = 8 + 4 + 4;

    @Override public Promise<Integer> execute(CompoundState st, XdrDecoder d, XdrEncoder res) {
        long cookie = d.readLong();
        byte[] verifier = d.readFixedOpaque(8);
        d.readInt(); // dircount: a hint
        int maxcount = d.readInt();
        int[] requested = Fattr.readBitmap(d);
        if (st.current == null) return Operation.status(Nfs4Status.NOFILEHANDLE);
        if (Fattr.namesWriteOnly(requested)) return Operation.status(Nfs4Status.INVAL);
        if (cookie == 1 || cookie == 2) return Operation.status(Nfs4Status.BAD_COOKIE);
        if (cookie != 0 && !java.util.Arrays.equals(verifier, VERIFIER)) return Operation.status(Nfs4Status.NOT_SAME);
        long limit = Integer.toUnsignedLong(maxcount);
        // the answer for an empty directory is OVERHEAD bytes, so anything from there on may succeed; with entries,
        // TOOSMALL comes once the first of them is known not to fit
        if (limit < OVERHEAD) return Operation.status(Nfs4Status.TOOSMALL);
        long dir = st.current.inode();
        int want = (int) Math.max(1, Math.min(dev.cairn.core.proto.MasterProtocol.ReadDir.MAX_ENTRIES, limit / 48));
        return Files.fs(st).getAttr(dir).then((da, e) -> {
            if (e != null) return Operation.status(Files.status(e));
            if (da.type() != FileType.DIR) return Operation.status(Nfs4Status.NOTDIR);
            if (!Files.mayRead(st.credentials, da)) return Operation.status(Nfs4Status.ACCESS);
            return Files.call(Files.fs(st).readDir(dir, cookie, want), r -> {
                XdrEncoder entries = new XdrEncoder(4096);
                int count = 0;
                for (var entry : r.entries()) {
                    int before = entries.size();
                    entries.writeBoolean(true).writeLong(entry.cookie()).writeString(entry.name());
                    Fattr.encode(entries, requested, entry.attr(), st.server.attrContext(Files.handle(st, entry.attr().inode()), st.minorVersion));
                    if (entries.size() + OVERHEAD > limit) {
                        entries.truncate(before);
                        break;
                    }
                    count++;
                }
                if (count == 0 && !r.entries().isEmpty()) return Nfs4Status.TOOSMALL;
                boolean eof = count == r.entries().size() && r.eof();
                res.writeFixedOpaque(VERIFIER).writeRaw(entries).writeBoolean(false).writeBoolean(eof);
                return Nfs4Status.NFS4_OK;
            });
        });
    }
}
