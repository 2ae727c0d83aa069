package dev.cairn.nfs.v4.op;

import dev.cairn.core.async.Promise;
import dev.cairn.core.proto.Types.AttrChange;
import dev.cairn.core.proto.Types.DeviceNumber;
import dev.cairn.core.proto.Types.FileType;
import dev.cairn.nfs.v4.CompoundState;
import dev.cairn.nfs.v4.Fattr;
import dev.cairn.nfs.v4.Nfs4Status;
import dev.cairn.nfs.v4.Operation;
import dev.cairn.nfs.xdr.XdrDecoder;
import dev.cairn.nfs.xdr.XdrEncoder;

/**
 * CREATE (RFC 8881 §18.4): directories, symlinks and the special files (FIFOs, sockets, character and block
 * devices, which hold no data: only their name, attributes and device number). Regular files are made by
 * OPEN. Owner from the caller's AUTH_SYS ids unless the create attributes name one; the current handle
 * becomes the new object.
 */
public final class Create implements Operation {
    @Override public Promise<Integer> execute(CompoundState st, XdrDecoder d, XdrEncoder res) {
        int type = d.readInt();
        String target = "";
        if (type == Fattr.NF4LNK) target = d.readString(64 * 1024);
        else if (type == Fattr.NF4BLK || type == Fattr.NF4CHR) target = new DeviceNumber(d.readInt(), d.readInt()).text();
        String name = Files.readName(d);
        Fattr.Settable attrs = Fattr.decodeSettable(d, st.server.clock().wallMillis(), false);
        if (st.current == null) return Operation.status(Nfs4Status.NOFILEHANDLE);
        FileType ft = switch (type) {
            case Fattr.NF4DIR -> FileType.DIR;
            case Fattr.NF4LNK -> FileType.SYMLINK;
            case Fattr.NF4FIFO -> FileType.FIFO;
            case Fattr.NF4SOCK -> FileType.SOCKET;
            case Fattr.NF4CHR -> FileType.CHAR_DEVICE;
            case Fattr.NF4BLK -> FileType.BLOCK_DEVICE;
            default -> null;
        };
        // a regular file (OPEN makes those) or a named-attribute directory: a type, but not one CREATE makes
        if (ft == null) return Operation.status(type >= Fattr.NF4REG && type <= NF4NAMEDATTR ? Nfs4Status.BADTYPE : Nfs4Status.INVAL);
        Integer bad = Files.badName(name);
        if (bad != null) return Operation.status(bad);
        if (attrs.status() != Nfs4Status.NFS4_OK) return Operation.status(attrs.status());
        if (type == Fattr.NF4LNK && (target.isEmpty() || target.length() > Files.MAX_LINKTEXT)) return Operation.status(Nfs4Status.INVAL);
        AttrChange c = attrs.change();
        if (c.size() != AttrChange.KEEP) return Operation.status(Nfs4Status.INVAL);
        if (!Files.mayCreateOwned(st.credentials, c.uid(), c.gid())) return Operation.status(Nfs4Status.PERM);
        long dir = st.current.inode();
        int mode = c.mode() != AttrChange.KEEP ? c.mode() : ft == FileType.DIR ? 0755 : ft == FileType.SYMLINK ? 0777 : 0644;
        int uid = c.uid() != AttrChange.KEEP ? c.uid() : st.credentials.uid();
        int gid = c.gid() != AttrChange.KEEP ? c.gid() : st.credentials.gid();
        String text = target;
        return Files.inDirectory(st, dir, true, da -> Files.call(Files.fs(st).create(dir, name, ft, mode, uid, gid, text, 0), r -> {
            Files.writeChangeInfo(res, r.dirs().get(0));
            Fattr.writeBitmap(res, attrs.bitmap());
            st.current = Files.handle(st, r.attr().inode());
            return Nfs4Status.NFS4_OK;
        }));
    }

    /** The last nfs_ftype4 (NF4ATTRDIR 8, NF4NAMEDATTR 9): named attributes are not offered. */
    static final int NF4NAMEDATTR = 9;
}
