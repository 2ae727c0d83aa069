package dev.cairn.nfs.v4.op;

import dev.cairn.core.async.Promise;
import dev.cairn.core.proto.MasterProtocol;
import dev.cairn.nfs.v4.CompoundState;
import dev.cairn.nfs.v4.Nfs4Status;
import dev.cairn.nfs.v4.Operation;
import dev.cairn.nfs.xdr.XdrDecoder;
import dev.cairn.nfs.xdr.XdrEncoder;
import java.nio.charset.StandardCharsets;
import java.util.List;

/**
 * LISTXATTRS (RFC 8276 §8.4.4): the names of the current object's extended attributes, in the master's (byte) order,
 * from {@code cookie} (how many names earlier pages returned) as far as {@code maxcount} — the size of the whole
 * result: cookie, names and eof — allows. TOOSMALL if not even the next name fits; an object with none answers an
 * empty list at eof. The caller needs read permission (ACCESS4_XALIST).
 */
public final class ListXattrs implements Operation {
    /** The result's fixed part: the cookie, the names' count and eof. */
    static final int FIXED_BYTES = 8 + 4 + 4;

    @Override public Promise<Integer> execute(CompoundState st, XdrDecoder d, XdrEncoder res) {
        long cookie = d.readLong();
        long maxCount = d.readUnsignedInt();
        if (st.current == null) return Operation.status(Nfs4Status.NOFILEHANDLE);
        // a cookie is a count of names, which never exceeds what an inode holds
        if (cookie < 0 || cookie > MasterProtocol.MAX_XATTRS) return Operation.status(Nfs4Status.BAD_COOKIE);
        long ino = st.current.inode();
        return Files.withXattrAccess(st, false, a -> Files.call(Files.fs(st).listXattrs(ino), names -> answer(res, names, (int) cookie, maxCount)));
    }

    /** Writes the page of {@code names} from {@code from}; a cookie past the end (names removed since) is an empty last page. */
    static int answer(XdrEncoder res, List<String> names, int from, long maxCount) {
        long used = FIXED_BYTES;
        int to = Math.min(from, names.size());
        while (to < names.size()) {
            long n = 4 + ((names.get(to).getBytes(StandardCharsets.UTF_8).length + 3L) & ~3L);
            if (used + n > maxCount) break;
            used += n;
            to++;
        }
        if (to < names.size() && to == Math.min(from, names.size())) return Nfs4Status.TOOSMALL;
        res.writeLong(to);
        res.writeInt(to - Math.min(from, names.size()));
        for (int i = Math.min(from, names.size()); i < to; i++) res.writeString(names.get(i));
        res.writeBoolean(to == names.size());
        return Nfs4Status.NFS4_OK;
    }
}
