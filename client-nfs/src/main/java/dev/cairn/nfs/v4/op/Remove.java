package dev.cairn.nfs.v4.op;

import dev.cairn.core.async.Promise;
import dev.cairn.nfs.v4.CompoundState;
import dev.cairn.nfs.v4.Nfs4Status;
import dev.cairn.nfs.v4.Operation;
import dev.cairn.nfs.xdr.XdrDecoder;
import dev.cairn.nfs.xdr.XdrEncoder;

/** REMOVE (RFC 8881 §18.25): a file, symlink or empty directory; the caller needs write and search on the directory. */
public final class Remove implements Operation {
    @Override public Promise<Integer> execute(CompoundState st, XdrDecoder d, XdrEncoder res) {
        return Files.existingEntry(st, d, true, (dir, name) -> Files.call(Files.fs(st).unlink(dir, name), r -> {
            Files.writeChangeInfo(res, r.dirs().get(0));
            return Nfs4Status.NFS4_OK;
        }));
    }
}
