package dev.cairn.nfs.v4.op;

import dev.cairn.core.async.Promise;
import dev.cairn.core.proto.Types.AttrChange;
import dev.cairn.core.proto.Types.FileType;
import dev.cairn.nfs.v4.CompoundState;
import dev.cairn.nfs.v4.Fattr;
import dev.cairn.nfs.v4.Nfs4Status;
import dev.cairn.nfs.v4.Operation;
import dev.cairn.nfs.xdr.XdrDecoder;
import dev.cairn.nfs.xdr.XdrEncoder;

/**
 * CREATE (RFC 8881 §18.4): directories and symlinks (regular files are made by OPEN). Owner from the
 * caller's AUTH_SYS ids unless the create attributes name one; the current handle becomes the new object.
 */
public final class Create implements Operation {
    @Override public Promise<Integer> execute(CompoundState st, XdrDecoder d, XdrEncoder res) {
        int type = d.readInt();
        String target = "";
        if (type == Fattr.NF4LNK) target = d.readString(64 * 1024);
        else if (type == 3 || type == 4) { d.readInt(); d.readInt(); } // specdata4 of a device
        String name = Files.readName(d);
        Fattr.Settable attrs = Fattr.decodeSettable(d, st.server.clock().wallMillis(), false);
        if (st.current == null) return Operation.status(Nfs4Status.NOFILEHANDLE);
        if (type == Fattr.NF4REG) return Operation.status(Nfs4Status.BADTYPE);
        if (type != Fattr.NF4DIR && type != Fattr.NF4LNK) return Operation.status(type >= 1 && type <= 9 ? Nfs4Status.BADTYPE : Nfs4Status.INVAL);
        Integer bad = Files.badName(name);
        if (bad != null) return Operation.status(bad);
        if (attrs.status() != Nfs4Status.NFS4_OK) return Operation.status(attrs.status());
        if (type == Fattr.NF4LNK && (target.isEmpty() || target.length() > Files.MAX_LINKTEXT)) return Operation.status(Nfs4Status.INVAL);
        AttrChange c = attrs.change();
        if (c.size() != AttrChange.KEEP) return Operation.status(Nfs4Status.INVAL);
        long dir = st.current.inode();
        FileType ft = type == Fattr.NF4DIR ? FileType.DIR : FileType.SYMLINK;
        int mode = c.mode() != AttrChange.KEEP ? c.mode() : ft == FileType.DIR ? 0755 : 0777;
        int uid = c.uid() != AttrChange.KEEP ? c.uid() : st.credentials.uid();
        int gid = c.gid() != AttrChange.KEEP ? c.gid() : st.credentials.gid();
        String linkText = target;
        return Files.inDirectory(st, dir, true, da -> Files.call(Files.fs(st).create(dir, name, ft, mode, uid, gid, linkText, 0), r -> {
            Files.writeChangeInfo(res, r.dirs().get(0));
            Fattr.writeBitmap(res, attrs.bitmap());
            st.current = Files.handle(st, r.attr().inode());
            return Nfs4Status.NFS4_OK;
        }));
    }
}
