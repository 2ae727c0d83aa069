package dev.cairn.nfs.fs;

import dev.cairn.client.FileReader;
import dev.cairn.core.async.SerialQueue;
import dev.cairn.core.proto.Types.FileAttr;
import java.util.TreeMap;

/**
 * What the gateway holds of one file between a WRITE and the COMMIT that makes it durable: the chunks
 * being changed, each as an image of its bytes from the chunk's start (loaded from the cluster before
 * the first change, so a write anywhere in a chunk is a read-modify-write of that chunk), and the size
 * and change counter clients must see meanwhile. Everything on a file runs through its {@link #queue},
 * so a COMMIT sees every WRITE answered before it.
 */
final class OpenFile {
    /** One chunk's image: {@code length} valid bytes of {@code bytes}; dirty until uploaded. */
    static final class Image {
        byte[] bytes;
        int length;
        boolean dirty;
        /** Bytes of this image counted in the dirty totals (its length when last accounted, if dirty). */
        int counted;

        Image(byte[] bytes, int length) {
            this.bytes = bytes;
            this.length = length;
        }

        void ensure(int n, int chunkSize) {
            if (n <= bytes.length) return;
            bytes = java.util.Arrays.copyOf(bytes, Math.min(chunkSize, Math.max(n, bytes.length * 2)));
        }
    }

    final long inode;
    final SerialQueue queue = new SerialQueue();
    final TreeMap<Integer, Image> images = new TreeMap<>();
    /** The master's view of the file as last fetched. */
    FileAttr base;
    /** The size clients see: the master's, or further if WRITEs not yet committed went further. */
    long size;
    /** WRITEs applied since {@link #base} was fetched (folded into the change attribute clients see). */
    long localChanges;
    long mtimeMillis;
    long dirtyBytes;
    FileReader reader;

    OpenFile(FileAttr base) {
        this.inode = base.inode();
        this.base = base;
        this.size = base.size();
        this.mtimeMillis = base.mtimeMillis();
    }

    int chunkSize() { return base.chunkSize(); }

    boolean dirty() { return dirtyBytes > 0 || size != base.size(); }

    /** The attributes a client sees now. */
    FileAttr attr() {
        FileAttr b = base;
        return new FileAttr(b.inode(), b.type(), size, mtimeMillis, b.chunkSize(), b.storageClass(), b.mode(), b.uid(), b.gid(), b.nlink(),
                b.atimeMillis(), localChanges == 0 ? b.ctimeMillis() : mtimeMillis, ClusterFs.change(b.change(), localChanges), b.parent(), b.target());
    }

    /** The master's answer after a commit or attribute change: local changes are folded into its counter now. */
    void rebase(FileAttr fresh) {
        base = fresh;
        localChanges = 0;
        if (dirtyBytes == 0) {
            size = fresh.size();
            mtimeMillis = fresh.mtimeMillis(); // a SETATTR may set it back in time
        } else {
            size = Math.max(size, fresh.size());
            mtimeMillis = Math.max(mtimeMillis, fresh.mtimeMillis());
        }
        reader = null;
    }
}
