package dev.cairn.nfs.v4.op;

import dev.cairn.core.async.Promise;
import dev.cairn.nfs.v4.CompoundState;
import dev.cairn.nfs.v4.Fattr;
import dev.cairn.nfs.v4.Nfs4Status;
import dev.cairn.nfs.v4.Operation;
import dev.cairn.nfs.xdr.XdrDecoder;
import dev.cairn.nfs.xdr.XdrEncoder;

/**
 * READ_PLUS (RFC 7862 §15.10): READ, with a hole answered as its extent instead of its zeros. Like READ it answers at
 * most {@link Fattr#MAX_IO} bytes within one chunk, so one segment: {@code NFS4_CONTENT_HOLE} where the gateway knows
 * the range is a hole ({@code ClusterFs.ReadResult#hole}: a chunk never committed, or past the committed end, and
 * zeros as read), else {@code NFS4_CONTENT_DATA}. Nothing at or past the end: no segment, and eof.
 */
public final class ReadPlus implements Operation {
    @Override public Promise<Integer> execute(CompoundState st, XdrDecoder d, XdrEncoder res) {
        return Files.read(st, d, (offset, r) -> {
            res.writeBoolean(r.eof());
            if (r.data().length == 0) {
                res.writeInt(0);
            } else if (r.hole()) {
                res.writeInt(1).writeInt(Seek.CONTENT_HOLE).writeLong(offset).writeLong(r.data().length);
            } else {
                res.writeInt(1).writeInt(Seek.CONTENT_DATA).writeLong(offset).writeOpaque(r.data());
            }
            return Nfs4Status.NFS4_OK;
        });
    }
}
