package dev.cairn.nfs.v4;

import dev.cairn.core.async.Promise;
import dev.cairn.nfs.xdr.XdrDecoder;
import dev.cairn.nfs.xdr.XdrEncoder;

/**
 * One NFSv4 operation: decodes its arguments (an {@link dev.cairn.nfs.xdr.XdrException} becomes
 * NFS4ERR_BADXDR), runs, and on NFS4_OK writes its result body. Answers an nfsstat4; for an error the
 * body is written only where the RFC gives that error one (e.g. LOCK's NFS4ERR_DENIED).
 */
@FunctionalInterface
public interface Operation {
    Promise<Integer> execute(CompoundState state, XdrDecoder args, XdrEncoder result);

    static Promise<Integer> status(int s) { return Promise.completed(s); }

    Promise<Integer> OK = Promise.completed(Nfs4Status.NFS4_OK);
}
