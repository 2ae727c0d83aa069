package dev.cairn.nfs.fs;

import dev.cairn.client.CairnClient;
import dev.cairn.core.async.Promise;
import dev.cairn.core.env.Clock;
import dev.cairn.core.proto.CairnException;
import dev.cairn.core.proto.Codec;
import dev.cairn.core.proto.MasterProtocol.ChangeReply;
import dev.cairn.core.proto.MasterProtocol.DirReply;
import dev.cairn.core.proto.Status;
import dev.cairn.core.proto.Types.AttrChange;
import dev.cairn.core.proto.Types.DirCookieEntry;
import dev.cairn.core.proto.Types.FileAttr;
import dev.cairn.core.proto.Types.FileType;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The file system as the NFS gateway serves it: namespace calls go to the master; data written by WRITE
 * is held here (bounded) until COMMIT, then each changed chunk is rewritten whole under a new lease and
 * synced on every copy its class requires, and the file's length committed at the master. Until then
 * clients of this gateway see the new size and data (and a change attribute that moved). UNSTABLE data
 * lost with the gateway is resent by the clients: they see the write verifier change.
 */
public final class ClusterFs {
    /** Uncommitted bytes held for all files at most; past it a WRITE first flushes its file. */
    public static final long MAX_DIRTY_BYTES = 256L << 20;
    /** Files whose state is kept at most (clean ones are dropped first, least recently used). */
    public static final int MAX_FILES = 4096;
    /** The largest file (the master's limit). */
    public static final long MAX_FILE_SIZE = 1L << 50;
    /** Local changes folded into the change attribute below the master's counter (20 bits). */
    static final int LOCAL_CHANGE_BITS = 20;

    private final CairnClient client;
    private final Clock clock;
    private final Map<Long, OpenFile> files = new LinkedHashMap<>(16, 0.75f, true);
    private long dirtyBytes;

    public ClusterFs(CairnClient client, Clock clock) {
        this.client = client;
        this.clock = clock;
    }

    /** The change attribute clients see: the master's counter, then WRITEs held here since it was read. */
    static long change(long masterChange, long local) {
        return (masterChange << LOCAL_CHANGE_BITS) | Math.min(local, (1L << LOCAL_CHANGE_BITS) - 1);
    }

    /** Attributes as clients see them when nothing of the file is held here. */
    static FileAttr shifted(FileAttr a) {
        if (a.inode() == 0) return a; // NO_ATTR
        return new FileAttr(a.inode(), a.type(), a.size(), a.mtimeMillis(), a.chunkSize(), a.storageClass(), a.mode(), a.uid(), a.gid(),
                a.nlink(), a.atimeMillis(), a.ctimeMillis(), change(a.change(), 0), a.parent(), a.target());
    }

    private static ChangeReply shifted(ChangeReply r) {
        List<FileAttr> dirs = new ArrayList<>();
        for (FileAttr d : r.dirs()) dirs.add(shifted(d));
        return new ChangeReply(r.rid(), r.status(), r.detail(), shifted(r.attr()), dirs);
    }

    public long dirtyBytes() { return dirtyBytes; }

    // ---------------------------------------------------------------- namespace

    public Promise<FileAttr> getAttr(long inode) {
        OpenFile f = files.get(inode);
        if (f != null && f.dirty()) return Promise.completed(f.attr());
        return client.getAttr(inode).map(this::seen);
    }

    public Promise<FileAttr> lookup(long dir, String name) { return client.lookup(dir, name).map(this::seen); }

    public Promise<DirReply> readDir(long dir, long cookie, int max) {
        return client.readDir(dir, cookie, max).map(r -> {
            List<DirCookieEntry> out = new ArrayList<>(r.entries().size());
            for (DirCookieEntry e : r.entries()) out.add(new DirCookieEntry(e.name(), e.cookie(), seen(e.attr())));
            return new DirReply(r.rid(), r.status(), r.detail(), seen(r.dir()), out, r.eof());
        });
    }

    public Promise<ChangeReply> create(long parent, String name, FileType type, int mode, int uid, int gid, String target, long verifier) {
        return client.createIn(parent, name, type, mode, uid, gid, target, verifier).map(ClusterFs::shifted);
    }

    public Promise<ChangeReply> unlink(long parent, String name) {
        return client.unlink(parent, name).map(r -> shifted(forgetGone(r)));
    }

    public Promise<ChangeReply> rename(long fromDir, String fromName, long toDir, String toName) {
        return client.rename(fromDir, fromName, toDir, toName).map(r -> shifted(forgetGone(r)));
    }

    public Promise<ChangeReply> link(long inode, long dir, String name) {
        return client.link(inode, dir, name).map(r -> {
            OpenFile f = files.get(inode);
            if (f != null && f.queue.idle() && !f.dirty()) f.rebase(r.attr());
            return shifted(r);
        });
    }

    /** Attribute changes; a size change first makes this gateway's pending writes of the file durable. */
    public Promise<FileAttr> setAttr(long inode, AttrChange change) {
        if (change.size() == AttrChange.KEEP) {
            OpenFile f = files.get(inode);
            Promise<FileAttr> p = client.setAttr(inode, change);
            return f == null ? p.map(this::seen) : f.queue.submit(() -> p.map(a -> { f.rebase(a); return f.attr(); }));
        }
        return open(inode).flatMap(f -> f.queue.submit(() -> truncate(f, change)));
    }

    // ---------------------------------------------------------------- data

    /** A READ's answer: the bytes, and whether they end at the end of the file. */
    public record ReadResult(byte[] data, boolean eof) {}

    public Promise<ReadResult> read(long inode, long offset, int count) {
        return open(inode).flatMap(f -> f.queue.submit(() -> {
            if (f.base.type() != FileType.FILE) return Promise.failed(new CairnException(f.base.type() == FileType.DIR ? Status.IS_DIR : Status.BAD_REQUEST, "not a file"));
            if (offset >= f.size || count == 0) return Promise.completed(new ReadResult(new byte[0], offset >= f.size));
            int cs = f.chunkSize();
            int index = (int) (offset / cs);
            int inChunk = (int) (offset - (long) index * cs);
            int n = (int) Math.min(Math.min(count, Codec.MAX_DATA_BYTES), Math.min(f.size - offset, cs - inChunk));
            OpenFile.Image img = f.images.get(index);
            if (img != null) {
                byte[] out = new byte[n];
                if (inChunk < img.length) System.arraycopy(img.bytes, inChunk, out, 0, Math.min(n, img.length - inChunk));
                return Promise.completed(new ReadResult(out, offset + n >= f.size));
            }
            if (f.reader == null) f.reader = client.reader(f.base);
            return f.reader.read(offset, n).map(b -> new ReadResult(b, offset + b.length >= f.size));
        }));
    }

    /** Applies a WRITE here; durable only after {@link #commit} (or at once with {@code stable}). Answers the file's attributes after it. */
    public Promise<FileAttr> write(long inode, long offset, byte[] data, boolean stable) {
        if (offset < 0 || offset + data.length > MAX_FILE_SIZE) {
            return Promise.failed(new CairnException(Status.BAD_REQUEST, "write past the largest file size"));
        }
        return open(inode).flatMap(f -> f.queue.submit(() -> {
            if (f.base.type() != FileType.FILE) return Promise.failed(new CairnException(f.base.type() == FileType.DIR ? Status.IS_DIR : Status.BAD_REQUEST, "not a file"));
            long end = offset + data.length;
            Promise<Void> grown = end > f.size ? extend(f, end) : Promise.completed(null);
            return grown.flatMap(v -> apply(f, offset, data, 0)).flatMap(v -> {
                f.localChanges++;
                f.mtimeMillis = clock.wallMillis();
                if (stable || dirtyBytes > MAX_DIRTY_BYTES) return flush(f);
                return flushFull(f, (int) ((end - 1) / f.chunkSize()));
            }).map(v -> f.attr());
        }));
    }

    /** Makes every WRITE this gateway answered for the file durable on every copy, and its length committed. */
    public Promise<FileAttr> commit(long inode) {
        OpenFile f = files.get(inode);
        if (f == null) return client.getAttr(inode).map(this::seen);
        return f.queue.submit(() -> flush(f).map(v -> f.attr()));
    }

    // ---------------------------------------------------------------- internals

    private FileAttr seen(FileAttr a) {
        OpenFile f = files.get(a.inode());
        if (f == null) return shifted(a);
        if (f.dirty() || !f.queue.idle()) return f.attr();
        // changed elsewhere (another gateway, the CLI): what is held of its chunks may be old
        if (a.change() != f.base.change()) f.images.clear();
        f.rebase(a);
        return f.attr();
    }

    private ChangeReply forgetGone(ChangeReply r) {
        // a file that lost its last name is gone at the master; clean state is only a cache, so drop it all
        for (Iterator<OpenFile> it = files.values().iterator(); it.hasNext(); ) {
            OpenFile f = it.next();
            if (f.queue.idle() && !f.dirty()) it.remove();
        }
        return r;
    }

    private Promise<OpenFile> open(long inode) {
        OpenFile f = files.get(inode);
        if (f != null) return Promise.completed(f);
        return client.getAttr(inode).map(a -> {
            OpenFile existing = files.get(inode);
            if (existing != null) return existing;
            OpenFile fresh = new OpenFile(a);
            files.put(inode, fresh);
            evict();
            return fresh;
        });
    }

    private void evict() {
        if (files.size() <= MAX_FILES) return;
        for (Iterator<OpenFile> it = files.values().iterator(); it.hasNext() && files.size() > MAX_FILES; ) {
            OpenFile f = it.next();
            if (f.queue.idle() && !f.dirty()) {
                it.remove();
            }
        }
    }

    /** The image of chunk {@code index}, loaded from the cluster (its bytes up to the file's size) on first use. */
    private Promise<OpenFile.Image> image(OpenFile f, int index) {
        OpenFile.Image img = f.images.get(index);
        if (img != null) return Promise.completed(img);
        int cs = f.chunkSize();
        long start = (long) index * cs;
        int existing = (int) Math.max(0, Math.min(f.base.size(), start + cs) - start);
        byte[] bytes = new byte[Math.min(cs, Math.max(existing, 64 << 10))];
        Promise<Void> loaded = existing == 0 ? Promise.completed(null) : load(f, start, bytes, 0, existing);
        return loaded.map(v -> {
            OpenFile.Image fresh = new OpenFile.Image(bytes, existing);
            f.images.put(index, fresh);
            return fresh;
        });
    }

    private Promise<Void> load(OpenFile f, long start, byte[] into, int at, int length) {
        if (at >= length) return Promise.completed(null);
        if (f.reader == null) f.reader = client.reader(f.base);
        return f.reader.read(start + at, length - at).flatMap(b -> {
            if (b.length == 0) return Promise.failed(new CairnException(Status.IO, "short read of inode " + f.inode + " at " + (start + at)));
            System.arraycopy(b, 0, into, at, b.length);
            return load(f, start, into, at + b.length, length);
        });
    }

    /** Copies {@code data[from..]} into the images it covers. */
    private Promise<Void> apply(OpenFile f, long offset, byte[] data, int from) {
        if (from >= data.length) return Promise.completed(null);
        int cs = f.chunkSize();
        long pos = offset + from;
        int index = (int) (pos / cs);
        int inChunk = (int) (pos - (long) index * cs);
        int n = Math.min(data.length - from, cs - inChunk);
        return image(f, index).flatMap(img -> {
            img.ensure(inChunk + n, cs);
            System.arraycopy(data, from, img.bytes, inChunk, n);
            if (inChunk + n > img.length) img.length = inChunk + n;
            markDirty(f, img);
            return apply(f, offset, data, from + n);
        });
    }

    /** The image changed: it is dirty, and the totals count its current length. */
    private void markDirty(OpenFile f, OpenFile.Image img) {
        img.dirty = true;
        account(f, img);
    }

    private void account(OpenFile f, OpenFile.Image img) {
        int now = img.dirty ? img.length : 0;
        int delta = now - img.counted;
        img.counted = now;
        f.dirtyBytes += delta;
        dirtyBytes += delta;
        assert f.dirtyBytes >= 0 && dirtyBytes >= 0 : "dirty bytes " + f.dirtyBytes + " / " + dirtyBytes;
    }

    /**
     * The file grows to {@code newSize}: the chunk holding the old end is filled with zeros up to the new
     * end or its own end, so a read there finds zeros rather than a copy shorter than the file.
     */
    private Promise<Void> extend(OpenFile f, long newSize) {
        int cs = f.chunkSize();
        long oldSize = f.size;
        if (oldSize % cs != 0) {
            int index = (int) (oldSize / cs);
            long chunkEnd = (long) (index + 1) * cs;
            int upTo = (int) (Math.min(newSize, chunkEnd) - (long) index * cs);
            return image(f, index).map(img -> {
                if (img.length < upTo) {
                    img.ensure(upTo, cs);
                    java.util.Arrays.fill(img.bytes, img.length, upTo, (byte) 0);
                    img.length = upTo;
                    markDirty(f, img);
                }
                f.size = newSize;
                return null;
            });
        }
        f.size = newSize;
        return Promise.completed(null);
    }

    /** Uploads the dirty chunks before {@code current} that are full (a sequential writer has finished them). */
    private Promise<Void> flushFull(OpenFile f, int current) {
        for (Map.Entry<Integer, OpenFile.Image> e : f.images.entrySet()) {
            if (e.getKey() < current && e.getValue().dirty && e.getValue().length == f.chunkSize()) {
                return upload(f, e.getKey(), e.getValue()).flatMap(v -> {
                    f.images.remove(e.getKey());
                    return flushFull(f, current);
                });
            }
        }
        return Promise.completed(null);
    }

    /** Uploads every dirty chunk, then commits the length; clean images are dropped except the last. */
    private Promise<Void> flush(OpenFile f) {
        for (Map.Entry<Integer, OpenFile.Image> e : f.images.entrySet()) {
            if (e.getValue().dirty) return upload(f, e.getKey(), e.getValue()).flatMap(v -> flush(f));
        }
        if (f.size == f.base.size() && f.localChanges == 0) return Promise.completed(null);
        return client.commitLength(f.inode, f.size).<Void>then((v, e) -> {
            if (e == null) return Promise.completed(null);
            // another writer leased a chunk after this gateway wrote it: those WRITEs are not durable, and a
            // retried COMMIT must not acknowledge them (STALE would map to DELAY, and the retry would succeed)
            if (CairnException.statusOf(e) == Status.STALE) return Promise.failed(new CairnException(Status.IO, CairnException.detailOf(e)));
            return Promise.failed(e);
        }).flatMap(v -> client.getAttr(f.inode)).map(a -> {
            f.rebase(a);
            while (f.images.size() > 1) f.images.pollFirstEntry();
            return null;
        });
    }

    private Promise<Void> upload(OpenFile f, int index, OpenFile.Image img) {
        byte[] bytes = java.util.Arrays.copyOf(img.bytes, img.length);
        int uploaded = img.length;
        return client.writeChunk(f.base, index, bytes).map(v -> {
            // a WRITE may have grown the image meanwhile: then it stays dirty for the next flush
            if (img.length == uploaded) img.dirty = false;
            account(f, img);
            return null;
        });
    }

    private Promise<FileAttr> truncate(OpenFile f, AttrChange change) {
        long newSize = change.size();
        long oldSize = f.size;
        if (newSize > oldSize) {
            // grow: zeros into the old last chunk, made durable, then the size
            return extend(f, newSize).flatMap(v -> flush(f)).flatMap(v -> client.setAttr(f.inode, change)).map(a -> {
                f.rebase(a);
                return f.attr();
            });
        }
        return flush(f).flatMap(v -> client.setAttr(f.inode, change)).flatMap(a -> {
            f.images.clear();
            f.rebase(a);
            int cs = f.chunkSize();
            if (newSize == oldSize || newSize % cs == 0) return Promise.completed(f.attr());
            // shrink into a chunk: its bytes past the new end become zeros, so growing the file again shows zeros
            int index = (int) (newSize / cs);
            int keep = (int) (newSize - (long) index * cs);
            int upTo = (int) (Math.min(oldSize, (long) (index + 1) * cs) - (long) index * cs);
            byte[] img = new byte[upTo];
            FileAttr shortFile = a;
            Promise<Void> loaded = load(f, (long) index * cs, img, 0, keep);
            return loaded.flatMap(v -> client.writeChunk(shortFile, index, img)).map(v -> f.attr());
        });
    }
}
