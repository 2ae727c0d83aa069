package dev.cairn.master.namespace;

import dev.cairn.core.proto.StorageClass;
import dev.cairn.core.proto.Types.FileAttr;
import dev.cairn.core.proto.Types.FileType;

/**
 * The durable record of a file, directory or symlink (see {@link FileAttr} for the fields). Every
 * {@code with…} bumps {@link #change} and sets the ctime: nothing changes an inode without a client being
 * able to tell.
 */
public record InodeRecord(long inode, FileType type, long parent, long size, long mtimeMillis, int chunkSize, StorageClass storageClass,
                          int mode, int uid, int gid, int nlink, long atimeMillis, long ctimeMillis, long change, String target) {
    public static final int MODE_BITS = 07777;

    public InodeRecord {
        assert (mode & ~MODE_BITS) == 0 : "mode " + Integer.toOctalString(mode);
        assert nlink >= 0 && size >= 0;
    }

    public FileAttr attr() {
        return new FileAttr(inode, type, size, mtimeMillis, chunkSize, storageClass, mode, uid, gid, nlink, atimeMillis, ctimeMillis, change, parent, target);
    }

    /** New content up to {@code newSize}, written at {@code mtime}. */
    public InodeRecord withSize(long newSize, long mtime) {
        return new InodeRecord(inode, type, parent, newSize, mtime, chunkSize, storageClass, mode, uid, gid, nlink, atimeMillis, mtime, change + 1, target);
    }

    public InodeRecord withClass(StorageClass cls, long now) {
        return new InodeRecord(inode, type, parent, size, mtimeMillis, chunkSize, cls, mode, uid, gid, nlink, atimeMillis, now, change + 1, target);
    }

    public InodeRecord withLinks(int links, long now) {
        return new InodeRecord(inode, type, parent, size, mtimeMillis, chunkSize, storageClass, mode, uid, gid, links, atimeMillis, now, change + 1, target);
    }

    public InodeRecord withParent(long newParent, long now) {
        return new InodeRecord(inode, type, newParent, size, mtimeMillis, chunkSize, storageClass, mode, uid, gid, nlink, atimeMillis, now, change + 1, target);
    }

    /** A directory whose entries changed at {@code now} (its mtime moves too). */
    public InodeRecord touched(long now) {
        return new InodeRecord(inode, type, parent, size, now, chunkSize, storageClass, mode, uid, gid, nlink, atimeMillis, now, change + 1, target);
    }

    public InodeRecord withAttrs(int newMode, int newUid, int newGid, long newSize, long atime, long mtime, long now) {
        return new InodeRecord(inode, type, parent, newSize, mtime, chunkSize, storageClass, newMode, newUid, newGid, nlink, atime, now, change + 1, target);
    }
}
