package dev.cairn.nfs.v4.op;

import dev.cairn.core.async.Promise;
import dev.cairn.core.proto.Types.FileAttr;
import dev.cairn.core.proto.Types.FileType;
import dev.cairn.nfs.v4.CompoundState;
import dev.cairn.nfs.v4.Nfs4Status;
import dev.cairn.nfs.v4.Operation;
import dev.cairn.nfs.xdr.XdrDecoder;
import dev.cairn.nfs.xdr.XdrEncoder;

/** RENAME (RFC 8881 §18.26): saved handle is the source directory, current the target; POSIX rename rules. */
public final class Rename implements Operation {
    @Override public Promise<Integer> execute(CompoundState st, XdrDecoder d, XdrEncoder res) {
        String from = Files.readName(d);
        String to = Files.readName(d);
        if (st.current == null || st.saved == null) return Operation.status(Nfs4Status.NOFILEHANDLE);
        for (String n : new String[] {from, to}) {
            Integer bad = Files.badName(n);
            if (bad != null) return Operation.status(bad);
        }
        long fromDir = st.saved.inode(), toDir = st.current.inode();
        return Promise.all(java.util.List.of(Files.fs(st).getAttr(fromDir), Files.fs(st).getAttr(toDir))).then((dirs, e) -> {
            if (e != null) return Operation.status(Files.status(e));
            for (FileAttr da : dirs) {
                if (da.type() != FileType.DIR) return Operation.status(Nfs4Status.NOTDIR);
                if (!Files.mayWrite(st.credentials, da) || !Files.maySearch(st.credentials, da)) return Operation.status(Nfs4Status.ACCESS);
            }
            java.util.function.Supplier<Promise<Integer>> rename = () -> Files.call(Files.fs(st).rename(fromDir, from, toDir, to), r -> {
                Files.writeChangeInfo(res, dirs.get(0), r.dirs().get(0));
                Files.writeChangeInfo(res, dirs.get(1), r.dirs().get(1));
                return Nfs4Status.NFS4_OK;
            });
            // in a sticky directory the caller must own what it moves away, and what it replaces (POSIX rename); a
            // rename of a name onto itself changes nothing and is no one's to refuse
            if (fromDir == toDir && from.equals(to)) return rename.get();
            return Files.unlessStickyForbids(st, dirs.get(0), fromDir, from, () -> Files.unlessStickyForbids(st, dirs.get(1), toDir, to, rename));
        });
    }
}
