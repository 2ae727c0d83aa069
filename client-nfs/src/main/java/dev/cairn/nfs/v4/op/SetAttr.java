package dev.cairn.nfs.v4.op;

import dev.cairn.core.async.Promise;
import dev.cairn.core.proto.Types.AttrChange;
import dev.cairn.core.proto.Types.FileType;
import dev.cairn.nfs.v4.CompoundState;
import dev.cairn.nfs.v4.Fattr;
import dev.cairn.nfs.v4.Nfs4Status;
import dev.cairn.nfs.v4.Operation;
import dev.cairn.nfs.v4.state.StateTable;
import dev.cairn.nfs.v4.state.StateTable.StateId;
import dev.cairn.nfs.xdr.XdrDecoder;
import dev.cairn.nfs.xdr.XdrEncoder;

/**
 * SETATTR (RFC 8881 §18.30): mode and owner (the owner or root; only root gives a file away), times, size
 * (write permission; a size change makes pending writes durable first). A change of owner, or a size set by anyone but
 * root, drops set-id bits. The result always carries the
 * bitmap of what was set, empty on error.
 */
public final class SetAttr implements Operation {
    @Override public Promise<Integer> execute(CompoundState st, XdrDecoder d, XdrEncoder res) {
        StateId sid = Files.readStateId(d);
        Fattr.Settable attrs = Fattr.decodeSettable(d, st.server.clock().wallMillis(), false);
        if (st.current == null) return failed(res, Nfs4Status.NOFILEHANDLE);
        if (attrs.status() != Nfs4Status.NFS4_OK) return failed(res, attrs.status());
        AttrChange asked = attrs.change();
        long ino = st.current.inode();
        if (asked.size() != AttrChange.KEEP) {
            Integer bad = Files.checkStateId(st, sid, ino, StateTable.ACCESS_WRITE);
            if (bad != null) return failed(res, bad);
        }
        return Files.fs(st).getAttr(ino).then((a, e) -> {
            if (e != null) return failed(res, Files.status(e));
            var cred = st.credentials;
            AttrChange c = droppingSetIdOnChown(asked, a.type());
            boolean owner = cred.uid() == 0 || cred.uid() == a.uid();
            if (c.mode() != AttrChange.KEEP && !owner) return failed(res, Nfs4Status.PERM);
            if (c.uid() != AttrChange.KEEP && c.uid() != a.uid() && cred.uid() != 0) return failed(res, Nfs4Status.PERM);
            if (c.gid() != AttrChange.KEEP && c.gid() != a.gid() && !(cred.uid() == 0 || (owner && Files.inGroup(cred, c.gid())))) {
                return failed(res, Nfs4Status.PERM);
            }
            if ((c.atimeMillis() != AttrChange.KEEP || c.mtimeMillis() != AttrChange.KEEP) && !owner && !Files.mayWrite(cred, a)) {
                return failed(res, Nfs4Status.ACCESS);
            }
            if (c.size() != AttrChange.KEEP) {
                if (a.type() == FileType.DIR) return failed(res, Nfs4Status.ISDIR);
                if (a.type() != FileType.FILE) return failed(res, Nfs4Status.INVAL);
                if (sid.isSpecial() && !Files.mayWrite(cred, a)) return failed(res, Nfs4Status.ACCESS);
            }
            // after the checks: the bits a truncate drops are not a mode change its caller asked for
            return Files.fs(st).setAttr(ino, droppingSetIdOnTruncate(c, a.type(), a.mode(), cred.uid())).then((r, e2) -> {
                if (e2 != null) return failed(res, Files.status(e2));
                Fattr.writeBitmap(res, attrs.bitmap());
                return OK;
            });
        });
    }

    /**
     * A change of owner or group of anything but a directory drops the set-user-id bit, and the set-group-id bit
     * where group execute is set, whoever makes it (as chown(2) on Linux, and knfsd): a file must not keep running
     * with the privileges of an owner it no longer has. With a mode in the same request, the bits are taken off it;
     * without, the master takes them off the mode it holds ({@link AttrChange#DROP_SET_ID}).
     */
    static AttrChange droppingSetIdOnChown(AttrChange c, FileType type) {
        if ((c.uid() == AttrChange.KEEP && c.gid() == AttrChange.KEEP) || type == FileType.DIR) return c;
        int mode = c.mode() == AttrChange.KEEP ? AttrChange.DROP_SET_ID : AttrChange.withoutSetId(c.mode());
        return new AttrChange(mode, c.uid(), c.gid(), c.size(), c.atimeMillis(), c.mtimeMillis(), c.fromSize());
    }

    /**
     * A size set on a regular file by anyone but root drops its set-id bits, as a WRITE does (Linux's truncate(2):
     * {@code should_remove_suid}, whoever owns the file; xfstests generic/684 checks it over NFS): a set-user-id
     * program cut short by someone who may write it must not keep running with its owner's privileges. An explicit mode
     * in the same request is left as asked (only the owner may give one).
     */
    static AttrChange droppingSetIdOnTruncate(AttrChange c, FileType type, int mode, int uid) {
        if (c.size() == AttrChange.KEEP || type != FileType.FILE || uid == 0 || c.mode() != AttrChange.KEEP || !AttrChange.hasSetId(mode)) return c;
        return new AttrChange(AttrChange.DROP_SET_ID, c.uid(), c.gid(), c.size(), c.atimeMillis(), c.mtimeMillis(), c.fromSize());
    }

    private static Promise<Integer> failed(XdrEncoder res, int status) {
        res.writeInt(0); // attrsset: nothing
        return Operation.status(status);
    }
}
