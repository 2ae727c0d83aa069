package dev.cairn.nfs.v4;

import dev.cairn.nfs.xdr.XdrException;
import java.nio.ByteBuffer;

/**
 * An NFSv4 file handle (nfs_fh4, at most {@value #MAX_BYTES} bytes): magic, format version, file
 * system id, inode id and the inode's generation. It holds nothing of the gateway's memory, so it
 * survives gateway restarts; a handle whose inode was removed (or reused: the generation differs) is
 * NFS4ERR_STALE, and bytes that are not one of ours are NFS4ERR_BADHANDLE.
 */
public record FileHandle(long fsid, long inode, long generation) {
    public static final int MAX_BYTES = 128;
    /** The namespace's root directory (Namespace.ROOT on the master). */
    public static final long ROOT_INODE = 1;
    static final int MAGIC = 0x4341_4952; // "CAIR"
    static final int FORMAT = 1;
    static final int LENGTH = 4 + 4 + 8 + 8 + 8;

    public byte[] encode() {
        return ByteBuffer.allocate(LENGTH).putInt(MAGIC).putInt(FORMAT).putLong(fsid).putLong(inode).putLong(generation).array();
    }

    /** Null if the bytes are not a handle this gateway made. */
    public static FileHandle decode(byte[] b) {
        if (b.length != LENGTH) return null;
        ByteBuffer bb = ByteBuffer.wrap(b);
        if (bb.getInt() != MAGIC || bb.getInt() != FORMAT) return null;
        return new FileHandle(bb.getLong(), bb.getLong(), bb.getLong());
    }

    static byte[] check(byte[] b) {
        if (b.length > MAX_BYTES) throw new XdrException("file handle of " + b.length + " bytes");
        return b;
    }
}
