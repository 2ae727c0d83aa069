package dev.cairn.master.namespace;

import dev.cairn.core.proto.Types.FileAttr;
import dev.cairn.core.proto.Types.FileType;

/** The durable record of a file or directory. */
public record InodeRecord(long inode, FileType type, long parent, long size, long mtimeMillis, int chunkSize, int goal) {
    public FileAttr attr() { return new FileAttr(inode, type, size, mtimeMillis, chunkSize, goal); }

    public InodeRecord withSize(long newSize, long mtime) {
        return new InodeRecord(inode, type, parent, newSize, mtime, chunkSize, goal);
    }
}
