package dev.cairn.master.namespace;

import dev.cairn.core.chunk.ChunkFormat;
import dev.cairn.core.env.KvBatch;
import dev.cairn.core.env.KvStore;
import dev.cairn.core.proto.CairnException;
import dev.cairn.core.proto.Codec;
import dev.cairn.core.proto.CodecException;
import dev.cairn.core.proto.Status;
import dev.cairn.core.proto.StorageClass;
import dev.cairn.core.proto.Types.DirEntry;
import dev.cairn.core.proto.Types.FileAttr;
import dev.cairn.core.proto.Types.FileType;
import dev.cairn.master.meta.ChunkRecord;
import dev.cairn.master.meta.MetaCommand;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/**
 * The namespace and chunk records, kept in the key-value store (the heap does not grow with the number
 * of files). Reads go straight to the store; mutations happen only through {@link #apply}, called by the
 * metadata log in log order.
 *
 * <pre>
 *   M next-inode | M next-chunk      -> counter (8 bytes)
 *   I inode                          -> InodeRecord
 *   D parent name                    -> child inode (8 bytes)
 *   C inode index                    -> chunk id (8 bytes)
 *   K chunkId                        -> ChunkRecord
 * </pre>
 */
public final class Namespace {
    public static final long ROOT = 1;
    public static final int DEFAULT_CHUNK_SIZE = ChunkFormat.MAX_CHUNK_SIZE;
    /** Entries a single directory listing returns at most. */
    public static final int MAX_LIST_ENTRIES = 100_000;
    /** Chunks one archive rewrite may reserve (a file of up to 4 TiB at 64 MiB chunks). */
    public static final int MAX_CHUNKS_PER_REWRITE = 65_536;

    private static final byte[] NEXT_INODE = "Mnext-inode".getBytes(StandardCharsets.UTF_8);
    private static final byte[] NEXT_CHUNK = "Mnext-chunk".getBytes(StandardCharsets.UTF_8);

    private final KvStore kv;
    private final int defaultGoal;

    public Namespace(KvStore kv, int defaultGoal) {
        this.kv = kv;
        this.defaultGoal = defaultGoal;
    }

    /** True if the store has never held a namespace (the root is created by {@link #formatBatch}). */
    public boolean isEmpty() { return kv.get(inodeKey(ROOT)) == null; }

    /** The writes that create an empty namespace. */
    public KvBatch formatBatch(long mtime) {
        KvBatch b = new KvBatch();
        b.put(inodeKey(ROOT), Codec.encodeRecord(new InodeRecord(ROOT, FileType.DIR, ROOT, 0, mtime, 0, StorageClass.DEFAULT)));
        b.put(NEXT_INODE, longBytes(ROOT + 1));
        b.put(NEXT_CHUNK, longBytes(1));
        return b;
    }

    // ---------------------------------------------------------------- reads

    public InodeRecord resolve(String path) {
        long ino = ROOT;
        for (String name : Paths.split(path)) {
            InodeRecord dir = inode(ino);
            if (dir.type() != FileType.DIR) throw new CairnException(Status.NOT_DIR, path);
            byte[] child = kv.get(direntKey(ino, name));
            if (child == null) throw new CairnException(Status.NOT_FOUND, path);
            ino = ByteBuffer.wrap(child).getLong();
        }
        return inode(ino);
    }

    public InodeRecord inode(long ino) {
        byte[] b = kv.get(inodeKey(ino));
        if (b == null) throw new CairnException(Status.NOT_FOUND, "inode " + ino);
        return decode(b, InodeRecord.class);
    }

    public List<DirEntry> list(String path) {
        InodeRecord dir = resolve(path);
        if (dir.type() != FileType.DIR) throw new CairnException(Status.NOT_DIR, path);
        List<DirEntry> out = new ArrayList<>();
        byte[] prefix = direntPrefix(dir.inode());
        kv.scan(prefix, (k, v) -> {
            String name = new String(k, prefix.length, k.length - prefix.length, StandardCharsets.UTF_8);
            out.add(new DirEntry(name, inode(ByteBuffer.wrap(v).getLong()).attr()));
            return out.size() < MAX_LIST_ENTRIES;
        });
        return out;
    }

    /** Chunk records of a file for indexes [from, from + count), in index order (missing indexes skipped). */
    public List<ChunkRecord> chunks(long ino, int from, int count) {
        List<ChunkRecord> out = new ArrayList<>();
        byte[] prefix = ByteBuffer.allocate(9).put((byte) 'C').putLong(ino).array();
        kv.scan(prefix, (k, v) -> {
            int index = ByteBuffer.wrap(k, 9, 4).getInt();
            if (index >= from + count) return false;
            if (index >= from) out.add(chunk(ByteBuffer.wrap(v).getLong()));
            return true;
        });
        return out;
    }

    /** The record of a chunk, or null if no file has it. */
    public ChunkRecord chunk(long chunkId) {
        byte[] b = kv.get(chunkKey(chunkId));
        return b == null ? null : decode(b, ChunkRecord.class);
    }

    /** Visits every chunk record in chunk id order while the visitor returns true. */
    public void forEachChunk(java.util.function.Predicate<ChunkRecord> visitor) {
        kv.scan(new byte[] {'K'}, (k, v) -> visitor.test(decode(v, ChunkRecord.class)));
    }

    /** Every chunk id below this was allocated at some point (used to tell removed chunks from unknown ones). */
    public long nextChunkId() { return counter(NEXT_CHUNK); }

    // ---------------------------------------------------------------- mutations

    /** Applies a command, adding its writes to {@code batch}; throws (writing nothing) if it is refused. */
    @SuppressWarnings("unchecked")
    public <R> R apply(MetaCommand<R> command, KvBatch batch) {
        if (command instanceof MetaCommand.Mkdir c) return (R) create(c.path(), FileType.DIR, 0, StorageClass.DEFAULT, c.mtimeMillis(), batch);

        if (command instanceof MetaCommand.CreateFile c) return (R) create(c.path(), FileType.FILE, c.chunkSize(), c.storageClass(), c.mtimeMillis(), batch);
        if (command instanceof MetaCommand.Remove c) return (R) remove(c.path(), batch);
        if (command instanceof MetaCommand.AllocChunk c) return (R) allocChunk(c.inode(), c.index(), batch);
        if (command instanceof MetaCommand.BumpVersion c) return (R) bumpVersion(c.chunkId(), batch);
        if (command instanceof MetaCommand.AdoptVersion c) return (R) adoptVersion(c.chunkId(), c.version(), batch);
        if (command instanceof MetaCommand.SetLength c) return (R) setLength(c.inode(), c.length(), c.mtimeMillis(), batch);
        if (command instanceof MetaCommand.SetClass c) return (R) setClass(c.path(), c.storageClass(), batch);
        if (command instanceof MetaCommand.ReserveChunkIds c) return (R) reserveChunkIds(c.count(), batch);
        if (command instanceof MetaCommand.Archive c) return (R) archive(c, batch);
        throw new IllegalArgumentException("unknown command " + command);
    }

    private FileAttr create(String path, FileType type, int chunkSize, StorageClass cls, long mtime, KvBatch batch) {
        List<String> parts = Paths.split(path);
        if (parts.isEmpty()) throw new CairnException(Status.EXISTS, path);
        String parentPath = "/" + String.join("/", parts.subList(0, parts.size() - 1));
        InodeRecord parent = resolve(parentPath);
        if (parent.type() != FileType.DIR) throw new CairnException(Status.NOT_DIR, parentPath);
        String name = parts.get(parts.size() - 1);
        if (kv.get(direntKey(parent.inode(), name)) != null) throw new CairnException(Status.EXISTS, path);
        if (type == FileType.FILE) {
            if (chunkSize == 0) chunkSize = DEFAULT_CHUNK_SIZE;
            if (chunkSize < ChunkFormat.BLOCK_SIZE || chunkSize > ChunkFormat.MAX_CHUNK_SIZE || chunkSize % ChunkFormat.BLOCK_SIZE != 0) {
                throw new CairnException(Status.BAD_REQUEST, "chunk size must be a multiple of " + ChunkFormat.BLOCK_SIZE + " up to " + ChunkFormat.MAX_CHUNK_SIZE);
            }
        }
        // a class not given is inherited from the directory (whose own may be unset: then the master's default)
        if (cls.equals(StorageClass.DEFAULT)) cls = parent.storageClass();
        if (type == FileType.FILE && cls.equals(StorageClass.DEFAULT)) cls = StorageClass.replicated(defaultGoal);
        long ino = counter(NEXT_INODE);
        InodeRecord rec = new InodeRecord(ino, type, parent.inode(), 0, mtime, chunkSize, cls);
        batch.put(NEXT_INODE, longBytes(ino + 1));
        batch.put(inodeKey(ino), Codec.encodeRecord(rec));
        batch.put(direntKey(parent.inode(), name), longBytes(ino));
        return rec.attr();
    }

    private List<Long> remove(String path, KvBatch batch) {
        List<String> parts = Paths.split(path);
        if (parts.isEmpty()) throw new CairnException(Status.BAD_REQUEST, "cannot remove /");
        InodeRecord rec = resolve(path);
        if (rec.type() == FileType.DIR) {
            boolean[] empty = {true};
            kv.scan(direntPrefix(rec.inode()), (k, v) -> { empty[0] = false; return false; });
            if (!empty[0]) throw new CairnException(Status.NOT_EMPTY, path);
        }
        List<Long> chunkIds = new ArrayList<>();
        for (ChunkRecord c : chunks(rec.inode(), 0, Integer.MAX_VALUE)) {
            chunkIds.add(c.chunkId());
            batch.delete(chunkKey(c.chunkId()));
            batch.delete(fileChunkKey(rec.inode(), c.index()));
        }
        batch.delete(inodeKey(rec.inode()));
        batch.delete(direntKey(rec.parent(), parts.get(parts.size() - 1)));
        return chunkIds;
    }

    private ChunkRecord allocChunk(long ino, int index, KvBatch batch) {
        InodeRecord rec = inode(ino);
        if (rec.type() != FileType.FILE) throw new CairnException(Status.IS_DIR, "inode " + ino);
        if (index < 0) throw new CairnException(Status.BAD_REQUEST, "chunk index " + index);
        byte[] existing = kv.get(fileChunkKey(ino, index));
        if (existing != null) return chunk(ByteBuffer.wrap(existing).getLong());
        long id = counter(NEXT_CHUNK);
        ChunkRecord c = new ChunkRecord(id, 1, ino, index);
        batch.put(NEXT_CHUNK, longBytes(id + 1));
        batch.put(chunkKey(id), Codec.encodeRecord(c));
        batch.put(fileChunkKey(ino, index), longBytes(id));
        return c;
    }

    private Long reserveChunkIds(int count, KvBatch batch) {
        if (count < 1 || count > MAX_CHUNKS_PER_REWRITE) throw new CairnException(Status.BAD_REQUEST, "reserve " + count + " chunk ids");
        long first = counter(NEXT_CHUNK);
        batch.put(NEXT_CHUNK, longBytes(first + count));
        return first;
    }

    private List<Long> archive(MetaCommand.Archive c, KvBatch batch) {
        InodeRecord rec = inode(c.inode());
        if (rec.type() != FileType.FILE) throw new CairnException(Status.IS_DIR, "inode " + c.inode());
        List<ChunkRecord> now = chunks(c.inode(), 0, Integer.MAX_VALUE);
        boolean same = rec.mtimeMillis() == c.mtimeMillis() && rec.size() == c.size() && now.size() == c.chunks().size();
        for (int i = 0; same && i < now.size(); i++) {
            MetaCommand.Rewritten r = c.chunks().get(i);
            ChunkRecord cur = now.get(i);
            same = cur.index() == r.index() && cur.chunkId() == r.oldChunkId() && cur.version() == r.oldVersion();
        }
        if (!same) throw new CairnException(Status.STALE, "inode " + c.inode() + " changed while it was being rewritten");
        List<Long> old = new ArrayList<>();
        for (MetaCommand.Rewritten r : c.chunks()) {
            if (r.newChunkId() >= counter(NEXT_CHUNK) || kv.get(chunkKey(r.newChunkId())) != null) {
                throw new CairnException(Status.BAD_REQUEST, "chunk id " + r.newChunkId() + " was not reserved");
            }
            old.add(r.oldChunkId());
            batch.delete(chunkKey(r.oldChunkId()));
            // version 2: a written chunk (version 1 means allocated and never written)
            batch.put(chunkKey(r.newChunkId()), Codec.encodeRecord(new ChunkRecord(r.newChunkId(), 2, c.inode(), r.index())));
            batch.put(fileChunkKey(c.inode(), r.index()), longBytes(r.newChunkId()));
        }
        InodeRecord next = new InodeRecord(rec.inode(), rec.type(), rec.parent(), rec.size(), rec.mtimeMillis(), rec.chunkSize(), c.storageClass());
        batch.put(inodeKey(rec.inode()), Codec.encodeRecord(next));
        return old;
    }

    private ChunkRecord bumpVersion(long chunkId, KvBatch batch) {
        ChunkRecord c = chunk(chunkId);
        if (c == null) throw new CairnException(Status.NOT_FOUND, "chunk " + chunkId);
        ChunkRecord next = new ChunkRecord(chunkId, c.version() + 1, c.inode(), c.index());
        batch.put(chunkKey(chunkId), Codec.encodeRecord(next));
        return next;
    }

    private ChunkRecord adoptVersion(long chunkId, long version, KvBatch batch) {
        ChunkRecord c = chunk(chunkId);
        if (c == null) throw new CairnException(Status.NOT_FOUND, "chunk " + chunkId);
        if (version <= c.version()) return c;
        ChunkRecord next = new ChunkRecord(chunkId, version, c.inode(), c.index());
        batch.put(chunkKey(chunkId), Codec.encodeRecord(next));
        return next;
    }

    private FileAttr setLength(long ino, long length, long mtime, KvBatch batch) {
        InodeRecord rec = inode(ino);
        if (rec.type() != FileType.FILE) throw new CairnException(Status.IS_DIR, "inode " + ino);
        if (length < 0) throw new CairnException(Status.BAD_REQUEST, "length " + length);
        // a commit says "at least this much is durable": a late or repeated one must never shrink the file
        // (shrinking is a truncate, a different command)
        InodeRecord next = rec.withSize(Math.max(rec.size(), length), mtime);
        batch.put(inodeKey(ino), Codec.encodeRecord(next));
        return next.attr();
    }

    private FileAttr setClass(String path, StorageClass cls, KvBatch batch) {
        InodeRecord rec = resolve(path);
        if (rec.type() == FileType.FILE) {
            if (cls.equals(StorageClass.DEFAULT)) cls = StorageClass.replicated(defaultGoal);
            boolean hasChunks = !chunks(rec.inode(), 0, 1).isEmpty();
            if (hasChunks && cls.isEc() != rec.storageClass().isEc()) {
                throw new CairnException(Status.BAD_REQUEST, path + " holds data as " + rec.storageClass() + "; moving it to " + cls
                        + " means rewriting it (copy it to a new file of that class)");
            }
            if (hasChunks && cls.isEc() && (cls.k() != rec.storageClass().k() || cls.m() != rec.storageClass().m())) {
                throw new CairnException(Status.BAD_REQUEST, path + " holds data as " + rec.storageClass() + "; a new k+m means rewriting it");
            }
        }
        InodeRecord next = new InodeRecord(rec.inode(), rec.type(), rec.parent(), rec.size(), rec.mtimeMillis(), rec.chunkSize(), cls);
        batch.put(inodeKey(rec.inode()), Codec.encodeRecord(next));
        return next.attr();
    }

    // ---------------------------------------------------------------- keys

    private long counter(byte[] key) {
        byte[] b = kv.get(key);
        if (b == null) throw new IllegalStateException("namespace not formatted");
        return ByteBuffer.wrap(b).getLong();
    }

    private static byte[] inodeKey(long ino) { return ByteBuffer.allocate(9).put((byte) 'I').putLong(ino).array(); }

    private static byte[] chunkKey(long id) { return ByteBuffer.allocate(9).put((byte) 'K').putLong(id).array(); }

    private static byte[] fileChunkKey(long ino, int index) {
        return ByteBuffer.allocate(13).put((byte) 'C').putLong(ino).putInt(index).array();
    }

    private static byte[] direntPrefix(long parent) { return ByteBuffer.allocate(9).put((byte) 'D').putLong(parent).array(); }

    private static byte[] direntKey(long parent, String name) {
        byte[] n = name.getBytes(StandardCharsets.UTF_8);
        return ByteBuffer.allocate(9 + n.length).put((byte) 'D').putLong(parent).put(n).array();
    }

    private static byte[] longBytes(long v) { return ByteBuffer.allocate(8).putLong(v).array(); }

    private static <T extends Record> T decode(byte[] b, Class<T> type) {
        try {
            return Codec.decodeRecord(b, type);
        } catch (CodecException e) {
            throw new IllegalStateException("corrupt metadata record " + type.getSimpleName() + ": " + e.getMessage(), e);
        }
    }
}
