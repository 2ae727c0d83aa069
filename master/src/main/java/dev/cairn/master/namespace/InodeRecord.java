package dev.cairn.master.namespace;

import dev.cairn.core.proto.StorageClass;
import dev.cairn.core.proto.Types.FileAttr;
import dev.cairn.core.proto.Types.FileType;

/** The durable record of a file or directory. */
public record InodeRecord(long inode, FileType type, long parent, long size, long mtimeMillis, int chunkSize, StorageClass storageClass) {
    public FileAttr attr() { return new FileAttr(inode, type, size, mtimeMillis, chunkSize, storageClass); }

    public InodeRecord withSize(long newSize, long mtime) {
        return new InodeRecord(inode, type, parent, newSize, mtime, chunkSize, storageClass);
    }
}
