package dev.cairn.master.namespace;

import dev.cairn.core.chunk.ChunkFormat;
import dev.cairn.core.env.KvBatch;
import dev.cairn.core.env.KvStore;
import dev.cairn.core.proto.CairnException;
import dev.cairn.core.proto.CodecException;
import dev.cairn.core.proto.MasterProtocol;
import dev.cairn.core.proto.Status;
import dev.cairn.core.proto.StorageClass;
import dev.cairn.core.proto.Types;
import dev.cairn.core.proto.Types.AttrChange;
import dev.cairn.core.proto.Types.DirCookieEntry;
import dev.cairn.core.proto.Types.DirEntry;
import dev.cairn.core.proto.Types.FileAttr;
import dev.cairn.core.proto.Types.FileType;
import dev.cairn.core.proto.Types.ChunkVersion;
import dev.cairn.master.meta.ChunkRecord;
import dev.cairn.master.meta.MetaCommand;
import dev.cairn.master.meta.StoreFormat;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * The namespace and chunk records, kept in the key-value store (the heap does not grow with the number
 * of files). Reads go to the store, through a bounded cache of decoded inode and chunk records; mutations
 * happen only through {@link #apply}, called by the metadata log in log order.
 *
 * <pre>
 *   M format                         -> layout version (4 bytes)
 *   M next-inode | next-chunk | next-entry -> counter (8 bytes)
 *   I inode                          -> InodeRecord
 *   D parent name                    -> child inode (8 bytes), entry id (8 bytes)
 *   E parent entryId                 -> name (READDIR order and cookies: entry ids only grow)
 *   X inode                          -> exclusive-create verifier (8 bytes)
 *   A inode name                     -> extended attribute value (name: UTF-8; RFC 8276's user namespace)
 *   C inode index                    -> chunk id (8 bytes)
 *   K chunkId                        -> ChunkRecord
 *   Q op                             -> sequence (8 bytes), outcome: a client operation done (for its retries)
 *   P sequence                       -> op (8 bytes): the order outcomes are forgotten in
 *   S serverId                       -> (empty): a chunkserver ever registered
 *   R serverId                       -> (empty): a chunkserver marked for removal
 * </pre>
 *
 * Keys and counters are big-endian; records ({@code InodeRecord}, {@code ChunkRecord}, outcomes) are in the
 * {@link StoreFormat}, which reads every encoding a release ever wrote. The layout version is the keys' layout.
 */
public final class Namespace {
    public static final long ROOT = 1;
    public static final int DEFAULT_CHUNK_SIZE = ChunkFormat.MAX_CHUNK_SIZE;
    /** Entries a single directory listing returns at most. */
    public static final int MAX_LIST_ENTRIES = 100_000;
    /** Chunks one archive rewrite may reserve (a file of up to 4 TiB at 64 MiB chunks). */
    public static final int MAX_CHUNKS_PER_REWRITE = 65_536;
    /** Bytes of a symlink's target at most (Linux's PATH_MAX). */
    public static final int MAX_TARGET_BYTES = 4096;
    /** Names one inode may have at most (Linux ext4's limit). */
    public static final int MAX_LINKS = 65_000;
    /** The largest file size (chunk indexes are ints). */
    public static final long MAX_FILE_SIZE = 1L << 50;
    /** Layout of the store; a store made by another layout is refused with a clear error rather than misread. */
    public static final int FORMAT = 3;
    /** READDIR cookies 0..2 mean "from the start" and "." and ".." (RFC 8881 §18.23.3): entry ids start above. */
    public static final long FIRST_ENTRY_ID = 3;
    public static final int DEFAULT_DIR_MODE = 0755;
    public static final int DEFAULT_FILE_MODE = 0644;

    private static final byte[] FORMAT_KEY = "Mformat".getBytes(StandardCharsets.UTF_8);
    private static final byte[] NEXT_INODE = "Mnext-inode".getBytes(StandardCharsets.UTF_8);
    private static final byte[] NEXT_CHUNK = "Mnext-chunk".getBytes(StandardCharsets.UTF_8);
    private static final byte[] NEXT_ENTRY = "Mnext-entry".getBytes(StandardCharsets.UTF_8);
    /** The next op outcome's sequence number ({@link #recordOutcome}). */
    private static final byte[] NEXT_OP = "Mnext-op".getBytes(StandardCharsets.UTF_8);
    /**
     * Outcomes of client operations kept for their retries: far more than can be in flight across one failover
     * (a client retries for 30 s), at ~100 bytes each.
     */
    public static final int OPS_REMEMBERED = 100_000;
    /** Prefix of the chunkservers ever registered (the start-up grace window waits for them). */
    private static final byte[] KNOWN_SERVER = "S".getBytes(StandardCharsets.UTF_8);
    /** Prefix of the chunkservers an operator marked for removal. */
    private static final byte[] DRAINING_SERVER = "R".getBytes(StandardCharsets.UTF_8);

    /**
     * Told of every chunk and inode record a command writes, as the command is applied (the store shows the
     * change from then on): the master's planner looks again only at what changed, not at every chunk.
     */
    public interface Watcher {
        /** A chunk record was written: {@code delta} +1 created, -1 deleted, 0 changed. */
        void chunkChanged(long chunkId, int delta);

        /** An inode record was written or deleted. */
        void inodeChanged(long inode);

        Watcher NONE = new Watcher() {
            @Override public void chunkChanged(long chunkId, int delta) {}
            @Override public void inodeChanged(long inode) {}
        };
    }

    /**
     * Decoded inode and chunk records most recently read, by id. The planner, registrations and inventories
     * read the same records over and over; decoding them each time was most of a master's work. Records are
     * immutable, and every write through {@link #apply} drops its entry.
     */
    public static final int CACHED_RECORDS = 8192;

    private final KvStore kv;
    private final int defaultGoal;
    private Watcher watcher = Watcher.NONE;
    private int opsRemembered = OPS_REMEMBERED;
    private final RecordCache<InodeRecord> inodes;
    private final RecordCache<ChunkRecord> chunkRecords;

    /** A bounded least-recently-used map of decoded records. */
    private static final class RecordCache<T> extends java.util.LinkedHashMap<Long, T> {
        private final int max;

        RecordCache(int max) {
            super(Math.min(256, max + 1), 0.75f, true);
            this.max = max;
        }

        @Override protected boolean removeEldestEntry(java.util.Map.Entry<Long, T> eldest) { return size() > max; }
    }

    public Namespace(KvStore kv, int defaultGoal) { this(kv, defaultGoal, CACHED_RECORDS); }

    /**
     * A namespace that decodes every record it reads ({@code cachedRecords} 0): for a reader of a store that
     * changes under it without going through {@link #apply} (the simulator's checkers, reading a master's
     * durable state), which a cache would show stale.
     */
    public static Namespace uncached(KvStore kv, int defaultGoal) { return new Namespace(kv, defaultGoal, 0); }

    private Namespace(KvStore kv, int defaultGoal, int cachedRecords) {
        this.kv = kv;
        this.defaultGoal = defaultGoal;
        this.inodes = new RecordCache<>(cachedRecords);
        this.chunkRecords = new RecordCache<>(cachedRecords);
    }

    public void watch(Watcher w) { this.watcher = w; }

    /** The store was replaced under this namespace (a snapshot installed): decoded records are dropped. */
    public void forgetCached() {
        inodes.clear();
        chunkRecords.clear();
    }

    /** Tests: keeps fewer op outcomes (every replica of a store must use the same number). */
    void rememberOps(int n) { this.opsRemembered = n; }

    /** True if the store has never held a namespace (the root is created by {@link #formatBatch}). */
    public boolean isEmpty() { return kv.get(inodeKey(ROOT)) == null; }

    /** Throws, naming the problem, if the store holds a namespace of another layout. */
    public void checkFormat() {
        byte[] f = kv.get(FORMAT_KEY);
        int found = f == null ? 1 : ByteBuffer.wrap(f).getInt();
        if (found != FORMAT) {
            throw new IllegalStateException("the metadata store holds namespace layout " + found + "; this master reads layout " + FORMAT
                    + " (made by another version of Cairn: start with an empty data directory)");
        }
    }

    /** The writes that create an empty namespace. */
    public KvBatch formatBatch(long mtime) {
        KvBatch b = new KvBatch();
        b.put(inodeKey(ROOT), StoreFormat.encode(new InodeRecord(ROOT, FileType.DIR, ROOT, 0, mtime, 0, StorageClass.DEFAULT,
                DEFAULT_DIR_MODE, 0, 0, 2, mtime, mtime, 1, "")));
        b.put(FORMAT_KEY, ByteBuffer.allocate(4).putInt(FORMAT).array());
        b.put(NEXT_INODE, longBytes(ROOT + 1));
        b.put(NEXT_CHUNK, longBytes(1));
        b.put(NEXT_ENTRY, longBytes(FIRST_ENTRY_ID));
        return b;
    }

    // ---------------------------------------------------------------- reads

    /** The chunkservers ever registered ({@link MetaCommand.ServerKnown}), by id. */
    public java.util.SortedSet<String> knownServers() { return serverIds(KNOWN_SERVER); }

    /** The chunkservers marked for removal ({@link MetaCommand.SetDraining}), by id. */
    public java.util.SortedSet<String> drainingServers() { return serverIds(DRAINING_SERVER); }

    private java.util.SortedSet<String> serverIds(byte[] prefix) {
        java.util.SortedSet<String> out = new java.util.TreeSet<>();
        kv.scan(prefix, (key, value) -> {
            out.add(new String(key, prefix.length, key.length - prefix.length, StandardCharsets.UTF_8));
            return true;
        });
        return out;
    }

    private static byte[] serverKey(byte[] prefix, String serverId) {
        byte[] id = serverId.getBytes(StandardCharsets.UTF_8);
        byte[] key = java.util.Arrays.copyOf(prefix, prefix.length + id.length);
        System.arraycopy(id, 0, key, prefix.length, id.length);
        return key;
    }

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

    /** The inode's record, or null if there is none. */
    public InodeRecord inodeOrNull(long ino) {
        InodeRecord r = inodes.get(ino);
        if (r != null) return r;
        byte[] b = kv.get(inodeKey(ino));
        if (b == null) return null;
        r = decode(b, InodeRecord.class);
        inodes.put(ino, r);
        return r;
    }

    public InodeRecord inode(long ino) {
        InodeRecord r = inodeOrNull(ino);
        if (r == null) throw new CairnException(Status.NOT_FOUND, "inode " + ino);
        return r;
    }

    /** The inode {@code name} names in directory {@code dir}; ".." is the directory's parent, "." itself. */
    public InodeRecord lookup(long dir, String name) {
        InodeRecord d = inode(dir);
        if (d.type() != FileType.DIR) throw new CairnException(Status.NOT_DIR, "inode " + dir);
        if (name.equals(".")) return d;
        if (name.equals("..")) return inode(d.parent());
        byte[] child = kv.get(direntKey(dir, Paths.checkName(name)));
        if (child == null) throw new CairnException(Status.NOT_FOUND, name);
        return inode(ByteBuffer.wrap(child).getLong());
    }

    public List<DirEntry> list(String path) {
        InodeRecord dir = resolve(path);
        if (dir.type() != FileType.DIR) throw new CairnException(Status.NOT_DIR, path);
        List<DirEntry> out = new ArrayList<>();
        for (DirCookieEntry e : readDir(dir.inode(), 0, MAX_LIST_ENTRIES)) out.add(new DirEntry(e.name(), e.attr()));
        out.sort(java.util.Comparator.comparing(DirEntry::name));
        return out;
    }

    /**
     * Up to {@code max} entries of a directory after {@code cookie} (0: from the start), in the order they
     * were made. An entry's cookie stays valid while it exists; a removed entry's cookie still resumes
     * after where it was.
     */
    public List<DirCookieEntry> readDir(long dir, long cookie, int max) {
        InodeRecord d = inode(dir);
        if (d.type() != FileType.DIR) throw new CairnException(Status.NOT_DIR, "inode " + dir);
        List<DirCookieEntry> out = new ArrayList<>();
        if (max <= 0) return out;
        byte[] prefix = entryPrefix(dir);
        long after = Math.max(cookie, FIRST_ENTRY_ID - 1);
        kv.scanFrom(prefix, entryKey(dir, after + 1), (k, v) -> {
            long id = ByteBuffer.wrap(k, prefix.length, 8).getLong();
            String name = new String(v, StandardCharsets.UTF_8);
            byte[] child = kv.get(direntKey(dir, name));
            if (child != null) out.add(new DirCookieEntry(name, id, inode(ByteBuffer.wrap(child).getLong()).attr()));
            return out.size() < max;
        });
        return out;
    }

    /** True if {@link #readDir} after {@code cookie} would return nothing more. */
    public boolean readDirDone(long dir, long cookie) {
        boolean[] more = {false};
        kv.scanFrom(entryPrefix(dir), entryKey(dir, Math.max(cookie, FIRST_ENTRY_ID - 1) + 1), (k, v) -> { more[0] = true; return false; });
        return !more[0];
    }

    /** Chunk records of a file for indexes [from, from + count), in index order (missing indexes skipped). */
    public List<ChunkRecord> chunks(long ino, int from, int count) {
        List<ChunkRecord> out = new ArrayList<>();
        byte[] prefix = ByteBuffer.allocate(9).put((byte) 'C').putLong(ino).array();
        kv.scan(prefix, (k, v) -> {
            int index = ByteBuffer.wrap(k, 9, 4).getInt();
            if (index >= (long) from + count) return false;
            if (index >= from) out.add(chunk(ByteBuffer.wrap(v).getLong()));
            return true;
        });
        return out;
    }

    /** The record of a chunk, or null if no file has it. */
    public ChunkRecord chunk(long chunkId) {
        ChunkRecord r = chunkRecords.get(chunkId);
        if (r != null) return r;
        byte[] b = kv.get(chunkKey(chunkId));
        if (b == null) return null;
        r = decode(b, ChunkRecord.class);
        chunkRecords.put(chunkId, r);
        return r;
    }

    /**
     * The highest version of chunk {@code chunkId} ever sent to a chunkserver: its record's version, or above it
     * while a bump reserved with {@link MetaCommand.ReserveVersion} is unrecorded (in flight, or lost with the
     * master's power). No version at or below it is handed out again.
     */
    public long handedOut(long chunkId) {
        ChunkRecord r = chunk(chunkId);
        if (r == null) return 0;
        byte[] b = kv.get(reservedKey(chunkId));
        return b == null ? r.version() : Math.max(r.version(), ByteBuffer.wrap(b).getLong());
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
        long op = command instanceof MetaCommand.Op o ? o.op() : 0;
        if (op != 0) {
            byte[] done = kv.get(opKey(op));
            if (done != null) return (R) outcome(command, Arrays.copyOfRange(done, 8, done.length)); // a retry: done already
        }
        R result = applyCommand(command, batch);
        if (op != 0) recordOutcome(op, command, result, batch);
        written(batch);
        return result;
    }

    /** A removal's outcome as recorded (a list is not a record). */
    public record Freed(List<Long> chunks) {}

    /**
     * Records what an {@link MetaCommand.Op} returned, in its own batch, under its op id; the oldest record goes
     * once {@link #OPS_REMEMBERED} are kept (a count, not a time, so that every replica forgets the same ones).
     */
    @SuppressWarnings("unchecked")
    private void recordOutcome(long op, MetaCommand<?> command, Object result, KvBatch batch) {
        byte[] r = command instanceof MetaCommand.Remove ? StoreFormat.encode(new Freed((List<Long>) result)) : StoreFormat.encode((Record) result);
        byte[] seqBytes = kv.get(NEXT_OP);
        long seq = seqBytes == null ? 1 : ByteBuffer.wrap(seqBytes).getLong();
        batch.put(NEXT_OP, longBytes(seq + 1));
        batch.put(opKey(op), ByteBuffer.allocate(8 + r.length).putLong(seq).put(r).array());
        batch.put(opSeqKey(seq), longBytes(op));
        if (seq > opsRemembered) {
            byte[] old = kv.get(opSeqKey(seq - opsRemembered));
            if (old != null) {
                batch.delete(opKey(ByteBuffer.wrap(old).getLong()));
                batch.delete(opSeqKey(seq - opsRemembered));
            }
        }
    }

    private static Object outcome(MetaCommand<?> command, byte[] recorded) {
        if (command instanceof MetaCommand.Remove) return List.copyOf(decode(recorded, Freed.class).chunks());
        if (command instanceof MetaCommand.Mkdir || command instanceof MetaCommand.CreateFile || command instanceof MetaCommand.SetXattr) {
            return decode(recorded, FileAttr.class);
        }
        return decode(recorded, MetaCommand.Changed.class);
    }

    private static byte[] opKey(long op) { return ByteBuffer.allocate(9).put((byte) 'Q').putLong(op).array(); }

    private static byte[] opSeqKey(long seq) { return ByteBuffer.allocate(9).put((byte) 'P').putLong(seq).array(); }

    /**
     * Drops the batch's chunk and inode records from the caches and reports them to the watcher; the store
     * does not show the batch yet, so it tells new from changed.
     */
    private void written(KvBatch batch) {
        for (KvBatch.Op op : batch.ops()) {
            byte[] k = op.key();
            if (k.length != 9 || (k[0] != 'K' && k[0] != 'I')) continue;
            long id = ByteBuffer.wrap(k, 1, 8).getLong();
            if (k[0] == 'K') {
                chunkRecords.remove(id);
                if (watcher == Watcher.NONE) continue;
                boolean existed = kv.get(k) != null;
                watcher.chunkChanged(id, op.value() == null ? (existed ? -1 : 0) : (existed ? 0 : 1));
            } else {
                inodes.remove(id);
                watcher.inodeChanged(id);
            }
        }
    }

    @SuppressWarnings("unchecked")
    private <R> R applyCommand(MetaCommand<R> command, KvBatch batch) {
        Writes w = new Writes(batch);
        if (command instanceof MetaCommand.Mkdir c) {
            Parent p = parentOf(c.path());
            return (R) createIn(w, p.dir, p.name, FileType.DIR, DEFAULT_DIR_MODE, 0, 0, "", 0, StorageClass.DEFAULT, 0, c.mtimeMillis()).attr();
        }
        if (command instanceof MetaCommand.CreateFile c) {
            Parent p = parentOf(c.path());
            return (R) createIn(w, p.dir, p.name, FileType.FILE, DEFAULT_FILE_MODE, 0, 0, "", c.chunkSize(), c.storageClass(), 0, c.mtimeMillis()).attr();
        }
        if (command instanceof MetaCommand.Remove c) {
            List<String> parts = Paths.split(c.path());
            if (parts.isEmpty()) throw new CairnException(Status.BAD_REQUEST, "cannot remove /");
            Parent p = parentOf(c.path());
            return (R) unlink(w, p.dir, p.name, 0).freedChunks();
        }
        if (command instanceof MetaCommand.CreateIn c) {
            return (R) createIn(w, c.parent(), c.name(), c.type(), c.mode(), c.uid(), c.gid(), c.target(), c.chunkSize(), c.storageClass(), c.verifier(), c.timeMillis());
        }
        if (command instanceof MetaCommand.Unlink c) return (R) unlink(w, c.parent(), c.name(), c.timeMillis());
        if (command instanceof MetaCommand.Rename c) return (R) rename(w, c);
        if (command instanceof MetaCommand.Link c) return (R) link(w, c);
        if (command instanceof MetaCommand.SetAttr c) return (R) setAttr(w, c.inode(), c.change(), c.timeMillis());
        if (command instanceof MetaCommand.SetXattr c) return (R) setXattr(w, c);
        if (command instanceof MetaCommand.AllocChunk c) return (R) allocChunk(c.inode(), c.index(), batch);
        if (command instanceof MetaCommand.BumpVersion c) return (R) bumpVersion(c.chunkId(), batch);
        if (command instanceof MetaCommand.AdoptVersion c) return (R) adoptVersion(c.chunkId(), c.version(), batch);
        if (command instanceof MetaCommand.ReserveVersion c) return (R) reserveVersion(c.chunkId(), batch);
        if (command instanceof MetaCommand.SetLength c) return (R) setLength(c, batch);
        if (command instanceof MetaCommand.CommitRewrite c) return (R) commitRewrite(c, batch);
        if (command instanceof MetaCommand.SetClass c) return (R) setClass(c.path(), c.storageClass(), batch);
        if (command instanceof MetaCommand.ReserveChunkIds c) return (R) reserveChunkIds(c.count(), batch);
        if (command instanceof MetaCommand.Archive c) return (R) archive(c, batch);
        if (command instanceof MetaCommand.Format c) {
            if (!isEmpty()) return (R) Boolean.FALSE;
            for (KvBatch.Op op : formatBatch(c.mtimeMillis()).ops()) batch.put(op.key(), op.value());
            return (R) Boolean.TRUE;
        }
        if (command instanceof MetaCommand.Barrier c) return (R) Long.valueOf(c.nonce());
        if (command instanceof MetaCommand.ServerKnown c) {
            if (kv.get(serverKey(KNOWN_SERVER, c.serverId())) != null) return (R) Boolean.FALSE;
            batch.put(serverKey(KNOWN_SERVER, c.serverId()), new byte[0]);
            return (R) Boolean.TRUE;
        }
        if (command instanceof MetaCommand.SetDraining c) {
            boolean was = kv.get(serverKey(DRAINING_SERVER, c.serverId())) != null;
            if (c.draining()) batch.put(serverKey(DRAINING_SERVER, c.serverId()), new byte[0]);
            else batch.delete(serverKey(DRAINING_SERVER, c.serverId()));
            return (R) Boolean.valueOf(was);
        }
        throw new IllegalArgumentException("unknown command " + command);
    }

    private record Parent(long dir, String name) {}

    private Parent parentOf(String path) {
        List<String> parts = Paths.split(path);
        if (parts.isEmpty()) throw new CairnException(Status.EXISTS, path);
        String parentPath = "/" + String.join("/", parts.subList(0, parts.size() - 1));
        InodeRecord parent = resolve(parentPath);
        if (parent.type() != FileType.DIR) throw new CairnException(Status.NOT_DIR, parentPath);
        return new Parent(parent.inode(), parts.get(parts.size() - 1));
    }

    /**
     * The inodes one command has changed so far: a command that touches an inode twice (a rename within one
     * directory) must see its own first change, which the store does not show until the batch is written.
     */
    private final class Writes {
        final KvBatch batch;
        final java.util.Map<Long, InodeRecord> inodes = new java.util.HashMap<>();
        long nextEntry = -1;

        Writes(KvBatch batch) { this.batch = batch; }

        InodeRecord get(long ino) {
            InodeRecord r = inodes.get(ino);
            return r != null ? r : inode(ino);
        }

        void put(InodeRecord r) {
            inodes.put(r.inode(), r);
            batch.put(inodeKey(r.inode()), StoreFormat.encode(r));
        }

        long entryId() {
            if (nextEntry < 0) nextEntry = counter(NEXT_ENTRY);
            long id = nextEntry++;
            batch.put(NEXT_ENTRY, longBytes(nextEntry));
            return id;
        }

        void addEntry(long dir, String name, long child) {
            long id = entryId();
            batch.put(direntKey(dir, name), ByteBuffer.allocate(16).putLong(child).putLong(id).array());
            batch.put(entryKey(dir, id), name.getBytes(StandardCharsets.UTF_8));
        }

        void removeEntry(long dir, String name, byte[] value) {
            batch.delete(direntKey(dir, name));
            batch.delete(entryKey(dir, ByteBuffer.wrap(value, 8, 8).getLong()));
        }
    }

    private MetaCommand.Changed createIn(Writes w, long parentIno, String name, FileType type, int mode, int uid, int gid, String target,
                              int chunkSize, StorageClass cls, long verifier, long now) {
        InodeRecord parent = w.get(parentIno);
        if (parent.type() != FileType.DIR) throw new CairnException(Status.NOT_DIR, "inode " + parentIno);
        Paths.checkName(name);
        if ((mode & ~InodeRecord.MODE_BITS) != 0) throw new CairnException(Status.BAD_REQUEST, "mode " + Integer.toOctalString(mode));
        byte[] existing = kv.get(direntKey(parentIno, name));
        if (existing != null) {
            long ino = ByteBuffer.wrap(existing).getLong();
            byte[] v = verifier == 0 ? null : kv.get(verifierKey(ino));
            if (v != null && ByteBuffer.wrap(v).getLong() == verifier) { // a retransmitted exclusive create
                return new MetaCommand.Changed(inode(ino).attr(), List.of(parent.attr()), List.of());
            }
            throw new CairnException(Status.EXISTS, name);
        }
        if (type == FileType.FILE) {
            if (chunkSize == 0) chunkSize = DEFAULT_CHUNK_SIZE;
            if (chunkSize < ChunkFormat.BLOCK_SIZE || chunkSize > ChunkFormat.MAX_CHUNK_SIZE || chunkSize % ChunkFormat.BLOCK_SIZE != 0) {
                throw new CairnException(Status.BAD_REQUEST, "chunk size must be a multiple of " + ChunkFormat.BLOCK_SIZE + " up to " + ChunkFormat.MAX_CHUNK_SIZE);
            }
        } else {
            chunkSize = 0;
        }
        if (type == FileType.SYMLINK) {
            if (target.isEmpty() || target.getBytes(StandardCharsets.UTF_8).length > MAX_TARGET_BYTES || target.indexOf('\0') >= 0) {
                throw new CairnException(Status.BAD_REQUEST, "a symlink target is 1.." + MAX_TARGET_BYTES + " bytes without NUL");
            }
        } else if (type.isDevice()) {
            if (Types.DeviceNumber.parse(target) == null) throw new CairnException(Status.BAD_REQUEST, "a device number is major:minor, not " + target);
        } else if (!target.isEmpty()) {
            throw new CairnException(Status.BAD_REQUEST, "only a symlink or a device has a target");
        }
        // a class not given is inherited from the directory (whose own may be unset: then the master's default)
        if (cls.equals(StorageClass.DEFAULT)) cls = parent.storageClass();
        if (type == FileType.FILE && cls.equals(StorageClass.DEFAULT)) cls = StorageClass.replicated(defaultGoal);
        if (type == FileType.DIR && parent.nlink() >= MAX_LINKS) throw new CairnException(Status.BAD_REQUEST, "too many subdirectories");
        long ino = counter(NEXT_INODE);
        long size = type == FileType.SYMLINK ? target.getBytes(StandardCharsets.UTF_8).length : 0;
        InodeRecord rec = new InodeRecord(ino, type, parentIno, size, now, chunkSize, cls, mode, uid, gid, type == FileType.DIR ? 2 : 1,
                now, now, 1, type == FileType.SYMLINK || type.isDevice() ? target : "");
        w.batch.put(NEXT_INODE, longBytes(ino + 1));
        w.put(rec);
        w.addEntry(parentIno, name, ino);
        if (verifier != 0) w.batch.put(verifierKey(ino), longBytes(verifier));
        InodeRecord p = parent.touched(now);
        if (type == FileType.DIR) p = p.withLinks(p.nlink() + 1, now);
        w.put(p);
        return new MetaCommand.Changed(rec.attr(), List.of(p.attr()), List.of());
    }

    private MetaCommand.Changed unlink(Writes w, long dirIno, String name, long now) {
        InodeRecord dir = w.get(dirIno);
        if (dir.type() != FileType.DIR) throw new CairnException(Status.NOT_DIR, "inode " + dirIno);
        Paths.checkName(name);
        byte[] entry = kv.get(direntKey(dirIno, name));
        if (entry == null) throw new CairnException(Status.NOT_FOUND, name);
        InodeRecord rec = w.get(ByteBuffer.wrap(entry).getLong());
        if (rec.type() == FileType.DIR && !isEmptyDir(rec.inode())) throw new CairnException(Status.NOT_EMPTY, name);
        w.removeEntry(dirIno, name, entry);
        InodeRecord d = dir.touched(now);
        if (rec.type() == FileType.DIR) d = d.withLinks(d.nlink() - 1, now);
        w.put(d);
        List<Long> freed = dropLink(w, rec, now);
        return new MetaCommand.Changed(dev.cairn.core.proto.Types.NO_ATTR, List.of(d.attr()), freed);
    }

    /** One name of {@code rec} is gone: the inode goes with its last name, with its chunks (returned). */
    private List<Long> dropLink(Writes w, InodeRecord rec, long now) {
        if (rec.type() != FileType.DIR && rec.nlink() > 1) {
            w.put(rec.withLinks(rec.nlink() - 1, now));
            return List.of();
        }
        List<Long> chunkIds = new ArrayList<>();
        for (ChunkRecord c : chunks(rec.inode(), 0, Integer.MAX_VALUE)) {
            chunkIds.add(c.chunkId());
            w.batch.delete(chunkKey(c.chunkId()));
            w.batch.delete(reservedKey(c.chunkId()));
            w.batch.delete(fileChunkKey(rec.inode(), c.index()));
        }
        w.inodes.remove(rec.inode());
        w.batch.delete(inodeKey(rec.inode()));
        w.batch.delete(verifierKey(rec.inode()));
        kv.scan(xattrPrefix(rec.inode()), (k, v) -> { w.batch.delete(k); return true; });
        return chunkIds;
    }

    private boolean isEmptyDir(long ino) {
        boolean[] empty = {true};
        kv.scan(direntPrefix(ino), (k, v) -> { empty[0] = false; return false; });
        return empty[0];
    }

    private MetaCommand.Changed rename(Writes w, MetaCommand.Rename c) {
        Paths.checkName(c.fromName());
        Paths.checkName(c.toName());
        long now = c.timeMillis();
        InodeRecord from = w.get(c.fromDir());
        InodeRecord to = w.get(c.toDir());
        if (from.type() != FileType.DIR) throw new CairnException(Status.NOT_DIR, "inode " + c.fromDir());
        if (to.type() != FileType.DIR) throw new CairnException(Status.NOT_DIR, "inode " + c.toDir());
        byte[] src = kv.get(direntKey(c.fromDir(), c.fromName()));
        if (src == null) throw new CairnException(Status.NOT_FOUND, c.fromName());
        InodeRecord moved = w.get(ByteBuffer.wrap(src).getLong());
        byte[] dst = kv.get(direntKey(c.toDir(), c.toName()));
        if (dst != null && ByteBuffer.wrap(dst).getLong() == moved.inode()) { // two names of one inode: POSIX does nothing
            return new MetaCommand.Changed(moved.attr(), List.of(from.attr(), to.attr()), List.of());
        }
        if (moved.type() == FileType.DIR) {
            // a directory may not move into itself or below itself (directories have exactly one parent)
            for (long d = c.toDir(); ; d = w.get(d).parent()) {
                if (d == moved.inode()) throw new CairnException(Status.BAD_REQUEST, "cannot move a directory into itself");
                if (d == ROOT) break;
            }
        }
        List<Long> freed = List.of();
        if (dst != null) {
            InodeRecord victim = w.get(ByteBuffer.wrap(dst).getLong());
            if (moved.type() == FileType.DIR && victim.type() != FileType.DIR) throw new CairnException(Status.NOT_DIR, c.toName());
            if (moved.type() != FileType.DIR && victim.type() == FileType.DIR) throw new CairnException(Status.IS_DIR, c.toName());
            if (victim.type() == FileType.DIR && !isEmptyDir(victim.inode())) throw new CairnException(Status.NOT_EMPTY, c.toName());
            w.removeEntry(c.toDir(), c.toName(), dst);
            if (victim.type() == FileType.DIR) w.put(w.get(c.toDir()).withLinks(w.get(c.toDir()).nlink() - 1, now));
            freed = dropLink(w, victim, now);
        }
        w.removeEntry(c.fromDir(), c.fromName(), src);
        w.addEntry(c.toDir(), c.toName(), moved.inode());
        w.put(w.get(c.fromDir()).touched(now));
        if (c.toDir() != c.fromDir()) {
            w.put(w.get(c.toDir()).touched(now));
            if (moved.type() == FileType.DIR) {
                w.put(w.get(c.fromDir()).withLinks(w.get(c.fromDir()).nlink() - 1, now));
                w.put(w.get(c.toDir()).withLinks(w.get(c.toDir()).nlink() + 1, now));
            }
        }
        InodeRecord m = w.get(moved.inode());
        w.put(moved.type() == FileType.DIR || m.parent() == c.fromDir() ? m.withParent(c.toDir(), now) : m.withLinks(m.nlink(), now));
        return new MetaCommand.Changed(w.get(moved.inode()).attr(), List.of(w.get(c.fromDir()).attr(), w.get(c.toDir()).attr()), freed);
    }

    private MetaCommand.Changed link(Writes w, MetaCommand.Link c) {
        InodeRecord rec = w.get(c.inode());
        if (rec.type() == FileType.DIR) throw new CairnException(Status.IS_DIR, "cannot link a directory");
        if (rec.nlink() >= MAX_LINKS) throw new CairnException(Status.BAD_REQUEST, "too many links");
        InodeRecord dir = w.get(c.dir());
        if (dir.type() != FileType.DIR) throw new CairnException(Status.NOT_DIR, "inode " + c.dir());
        Paths.checkName(c.name());
        if (kv.get(direntKey(c.dir(), c.name())) != null) throw new CairnException(Status.EXISTS, c.name());
        w.addEntry(c.dir(), c.name(), rec.inode());
        InodeRecord d = dir.touched(c.timeMillis());
        w.put(d);
        InodeRecord next = rec.withLinks(rec.nlink() + 1, c.timeMillis());
        w.put(next);
        return new MetaCommand.Changed(next.attr(), List.of(d.attr()), List.of());
    }

    private MetaCommand.AttrResult setAttr(Writes w, long ino, AttrChange ch, long now) {
        InodeRecord rec = w.get(ino);
        int mode = ch.mode() == AttrChange.KEEP ? rec.mode()
                : ch.mode() == AttrChange.DROP_SET_ID ? (rec.type() == FileType.DIR ? rec.mode() : AttrChange.withoutSetId(rec.mode()))
                : ch.mode();
        if ((mode & ~InodeRecord.MODE_BITS) != 0) throw new CairnException(Status.BAD_REQUEST, "mode " + Integer.toOctalString(mode));
        long size = rec.size();
        List<Long> freed = new ArrayList<>();
        long mtime = ch.mtimeMillis() == AttrChange.KEEP ? rec.mtimeMillis() : ch.mtimeMillis();
        if (ch.size() != AttrChange.KEEP) {
            if (rec.type() == FileType.DIR) throw new CairnException(Status.IS_DIR, "inode " + ino);
            if (rec.type() != FileType.FILE) throw new CairnException(Status.BAD_REQUEST, "only a file has a settable size");
            if (ch.size() < 0 || ch.size() > MAX_FILE_SIZE) throw new CairnException(Status.BAD_REQUEST, "size " + ch.size());
            if (ch.fromSize() != AttrChange.KEEP && ch.fromSize() != size) {
                throw new CairnException(Status.STALE, "inode " + ino + " is " + size + " bytes, not the " + ch.fromSize() + " the size change was for");
            }
            if (ch.size() != size && ch.mtimeMillis() == AttrChange.KEEP) mtime = now;
            long kept = Math.min(size, ch.size());
            size = ch.size();
            // chunks wholly past the new end go; so do those wholly past the old end when the file grows (a writer
            // that failed before its commit may have left bytes there, and the grown range must read as zeros). The
            // chunk the shorter end falls in keeps its bytes past that end, which the writer that shrank or grows
            // the file overwrites with zeros first
            long firstGone = (kept + rec.chunkSize() - 1) / rec.chunkSize();
            for (ChunkRecord c : chunks(ino, (int) Math.min(firstGone, Integer.MAX_VALUE), Integer.MAX_VALUE)) {
                freed.add(c.chunkId());
                w.batch.delete(chunkKey(c.chunkId()));
                w.batch.delete(reservedKey(c.chunkId()));
                w.batch.delete(fileChunkKey(ino, c.index()));
            }
        }
        InodeRecord next = rec.withAttrs(mode, ch.uid() == AttrChange.KEEP ? rec.uid() : ch.uid(), ch.gid() == AttrChange.KEEP ? rec.gid() : ch.gid(),
                size, ch.atimeMillis() == AttrChange.KEEP ? rec.atimeMillis() : ch.atimeMillis(), mtime, now);
        w.put(next);
        return new MetaCommand.AttrResult(next.attr(), freed);
    }

    private FileAttr setXattr(Writes w, MetaCommand.SetXattr c) {
        InodeRecord rec = w.get(c.inode());
        checkXattrName(c.name());
        byte[] key = xattrKey(c.inode(), c.name());
        byte[] old = kv.get(key);
        switch (c.how()) {
            case MasterProtocol.XATTR_EITHER -> { }
            case MasterProtocol.XATTR_CREATE -> { if (old != null) throw new CairnException(Status.EXISTS, "xattr " + c.name()); }
            case MasterProtocol.XATTR_REPLACE, MasterProtocol.XATTR_REMOVE -> {
                if (old == null) throw new CairnException(Status.NOT_FOUND, "xattr " + c.name());
            }
            default -> throw new CairnException(Status.BAD_REQUEST, "xattr option " + c.how());
        }
        if (c.how() == MasterProtocol.XATTR_REMOVE) {
            if (c.value().length != 0) throw new CairnException(Status.BAD_REQUEST, "a removal carries no value");
            w.batch.delete(key);
        } else {
            if (c.value().length > MasterProtocol.MAX_XATTR_VALUE_BYTES) {
                throw new CairnException(Status.BAD_REQUEST, "xattr value of " + c.value().length + " bytes (at most " + MasterProtocol.MAX_XATTR_VALUE_BYTES + ")");
            }
            // the inode's attributes as they would be: bounded in number and bytes, so a listing fits one reply
            int nameBytes = key.length - 9;
            long[] held = {0, 0}; // count, bytes
            kv.scan(xattrPrefix(c.inode()), (k, v) -> {
                held[0]++;
                held[1] += k.length - 9 + v.length;
                return true;
            });
            if (old != null) {
                held[0]--;
                held[1] -= nameBytes + old.length;
            }
            if (held[0] + 1 > MasterProtocol.MAX_XATTRS || held[1] + nameBytes + c.value().length > MasterProtocol.MAX_XATTR_BYTES) {
                throw new CairnException(Status.NO_SPACE, "inode " + c.inode() + " holds " + held[0] + " extended attributes of " + held[1]
                        + " bytes: at most " + MasterProtocol.MAX_XATTRS + " and " + MasterProtocol.MAX_XATTR_BYTES + " bytes");
            }
            w.batch.put(key, c.value());
        }
        InodeRecord next = rec.withAttrs(rec.mode(), rec.uid(), rec.gid(), rec.size(), rec.atimeMillis(), rec.mtimeMillis(), c.timeMillis());
        w.put(next);
        return next.attr();
    }

    /** An extended attribute's name: 1 to {@link MasterProtocol#MAX_XATTR_NAME_BYTES} bytes of UTF-8 without NUL. */
    private static void checkXattrName(String name) {
        int n = name.getBytes(StandardCharsets.UTF_8).length;
        if (n == 0 || n > MasterProtocol.MAX_XATTR_NAME_BYTES || name.indexOf('\0') >= 0) {
            throw new CairnException(Status.BAD_REQUEST, "an extended attribute's name is 1.." + MasterProtocol.MAX_XATTR_NAME_BYTES + " bytes without NUL");
        }
    }

    /** The value of extended attribute {@code name} of an inode; NOT_FOUND ("xattr …") if it has none of that name. */
    public byte[] xattr(long ino, String name) {
        inode(ino); // NOT_FOUND "inode …" for an inode that is gone
        checkXattrName(name);
        byte[] v = kv.get(xattrKey(ino, name));
        if (v == null) throw new CairnException(Status.NOT_FOUND, "xattr " + name);
        return v;
    }

    /** The names of an inode's extended attributes, in the byte order of their UTF-8 (at most {@link MasterProtocol#MAX_XATTRS}). */
    public List<String> xattrNames(long ino) {
        inode(ino);
        List<String> out = new ArrayList<>();
        kv.scan(xattrPrefix(ino), (k, v) -> {
            out.add(new String(k, 9, k.length - 9, StandardCharsets.UTF_8));
            return true;
        });
        return out;
    }

    private ChunkRecord allocChunk(long ino, int index, KvBatch batch) {
        InodeRecord rec = inode(ino);
        if (rec.type() != FileType.FILE) throw new CairnException(Status.IS_DIR, "inode " + ino);
        if (index < 0) throw new CairnException(Status.BAD_REQUEST, "chunk index " + index);
        byte[] existing = kv.get(fileChunkKey(ino, index));
        if (existing != null) return chunk(ByteBuffer.wrap(existing).getLong());
        long id = counter(NEXT_CHUNK);
        ChunkRecord c = new ChunkRecord(id, 1, ino, index, 0); // nothing committed to it yet
        batch.put(NEXT_CHUNK, longBytes(id + 1));
        batch.put(chunkKey(id), StoreFormat.encode(c));
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
        for (int i = 0; i < c.chunks().size(); i++) {
            MetaCommand.Rewritten r = c.chunks().get(i);
            if (r.newChunkId() >= counter(NEXT_CHUNK) || kv.get(chunkKey(r.newChunkId())) != null) {
                throw new CairnException(Status.BAD_REQUEST, "chunk id " + r.newChunkId() + " was not reserved");
            }
            old.add(r.oldChunkId());
            batch.delete(chunkKey(r.oldChunkId()));
            batch.delete(reservedKey(r.oldChunkId()));
            // version 2: a written chunk (version 1 means allocated and never written). Its data version says what it
            // holds, as the old one's did: a chunk no commit named, or one wholly past the file's size, was rewritten from
            // nothing acknowledged (as 0 bytes, past the size) and stays a hole to readers. Counted as committed, it was
            // required to reach the file's end once a writer grew the file over it, which its empty parts never did (sim
            // seed 5359 at 60 s: an archived file grown past such a chunk could not be read)
            boolean holdsData = now.get(i).committed() && (long) r.index() * rec.chunkSize() < rec.size();
            batch.put(chunkKey(r.newChunkId()), StoreFormat.encode(new ChunkRecord(r.newChunkId(), 2, c.inode(), r.index(), holdsData ? 2 : 0)));
            batch.put(fileChunkKey(c.inode(), r.index()), longBytes(r.newChunkId()));
        }
        batch.put(inodeKey(rec.inode()), StoreFormat.encode(rec.withClass(c.storageClass(), rec.ctimeMillis())));
        return old;
    }

    private ChunkRecord bumpVersion(long chunkId, KvBatch batch) {
        ChunkRecord c = chunk(chunkId);
        if (c == null) throw new CairnException(Status.NOT_FOUND, "chunk " + chunkId);
        ChunkRecord next = c.withVersion(handedOut(chunkId) + 1);
        batch.put(chunkKey(chunkId), StoreFormat.encode(next));
        batch.delete(reservedKey(chunkId)); // the record is above every reservation now
        return next;
    }

    private Long reserveVersion(long chunkId, KvBatch batch) {
        if (chunk(chunkId) == null) throw new CairnException(Status.NOT_FOUND, "chunk " + chunkId);
        long to = handedOut(chunkId) + 1;
        batch.put(reservedKey(chunkId), longBytes(to));
        return to;
    }

    private ChunkRecord adoptVersion(long chunkId, long version, KvBatch batch) {
        ChunkRecord c = chunk(chunkId);
        if (c == null) throw new CairnException(Status.NOT_FOUND, "chunk " + chunkId);
        if (version <= c.version()) return c;
        ChunkRecord next = c.withVersion(version);
        batch.put(chunkKey(chunkId), StoreFormat.encode(next));
        if (version >= handedOut(chunkId)) batch.delete(reservedKey(chunkId));
        return next;
    }

    private FileAttr setLength(MetaCommand.SetLength c, KvBatch batch) { return setLength(c, Set.of(), batch); }

    /**
     * Commits a writer's length and the chunk versions it wrote ({@code rewritten}: the indexes of chunks a
     * {@link MetaCommand.CommitRewrite} swaps in with it). Every committed chunk's copies must hold the file as far as
     * it reaches into the chunk (the master counts a shorter copy short, and no reader may use it), so a commit is
     * refused (STALE: the writer's view of the file is old) where it would leave one that does not: a chunk that holds
     * only what this writer wrote (erasure-coded, uploaded whole; replicated and never committed before, its copies
     * made fresh by this writer's lease) reaches only as far as the writer's own length, not past it, where another
     * writer has grown the file meanwhile (sim seed 5268 at 60 s: a gateway's commit retried 33 s after it failed
     * named a chunk uploaded for its old size, below the file's size now, and the chunk's parts all counted short).
     * (A commit growing the file past a partly filled last chunk it does not name is not refused: a writer extends a
     * chunk it committed once under the same lease version without naming it again, and the master cannot tell
     * that from a writer that never saw the old end.)
     */
    private FileAttr setLength(MetaCommand.SetLength c, Set<Integer> rewritten, KvBatch batch) {
        long ino = c.inode(), length = c.length(), mtime = c.mtimeMillis();
        InodeRecord rec = inode(ino);
        if (rec.type() != FileType.FILE) throw new CairnException(Status.IS_DIR, "inode " + ino);
        if (length < 0) throw new CairnException(Status.BAD_REQUEST, "length " + length);
        List<ChunkRecord> raised = new ArrayList<>();
        long size = Math.max(rec.size(), length);
        for (int index : rewritten) requireReach(rec, size, length, index);
        if (rec.storageClass().isEc()) requireGrownLastChunk(rec, c, rewritten);
        for (ChunkVersion w : c.chunks()) {
            ChunkRecord chunk = chunk(w.chunkId());
            // a chunk wholly past the committed size holds nothing this commit vouches for: its data version stays
            // (a commit that reaches it names it again). Raising it would make its copies required to reach the
            // file's end once anyone grows the file over it, whatever they hold (sim seed 1677 at 10 s)
            if (chunk != null && chunk.inode() == ino && (long) chunk.index() * rec.chunkSize() >= size) continue;
            if (chunk == null) {
                // dropped since (a truncate, or an archive rewrite that swapped the file's chunks): the bytes written
                // there are gone, and the length must not be committed as if they were (the simulator's witness
                // caught an archive rewrite of a file whose writer had paused, then the writer's close acknowledged)
                throw new CairnException(Status.STALE, "chunk " + w.chunkId() + " is no longer part of inode " + ino
                        + " (truncated or rewritten since this write); write it again");
            }
            if (chunk.inode() != ino) {
                throw new CairnException(Status.BAD_REQUEST, "chunk " + w.chunkId() + " belongs to inode " + chunk.inode() + ", not " + ino);
            }
            if (w.version() > chunk.version()) {
                throw new CairnException(Status.BAD_REQUEST, "chunk " + w.chunkId() + " is at v" + chunk.version() + "; v" + w.version() + " was never leased");
            }
            long leased = handedOut(w.chunkId());
            if (w.version() < leased) {
                // a later lease may have moved copies on that never received this write: it is not durable
                // everywhere a reader may look, so it cannot be acknowledged. A bump under way counts as soon as its
                // version is reserved: it cuts the copies to the length committed before it (BumpVersion.cutTo)
                throw new CairnException(Status.STALE, "chunk " + w.chunkId() + " was leased again (v" + leased + ") after this write at v"
                        + w.version() + "; write it again");
            }
            if (rec.storageClass().isEc() || !chunk.committed()) requireReach(rec, size, length, chunk.index());
            if (w.version() > chunk.dataVersion()) raised.add(chunk.withDataVersion(w.version()));
        }
        for (ChunkRecord r : raised) batch.put(chunkKey(r.chunkId()), StoreFormat.encode(r));
        // a commit says "at least this much is durable": a late or repeated one must never shrink the file
        // (shrinking is a truncate, a different command)
        InodeRecord next = rec.withSize(size, mtime);
        batch.put(inodeKey(ino), StoreFormat.encode(next));
        return next.attr();
    }

    /**
     * Refuses a commit that grows an erasure-coded file past its partly filled, committed last chunk without writing
     * that chunk again: its parts hold the file up to the old end only and cannot grow in place (a replicated chunk's
     * copies are extended by the writer under its lease; an erasure-coded chunk is only ever written whole), so the
     * grown file would reach past what its parts hold, and the chunk would count short and unreadable. A writer that
     * extends the file itself rewrites that chunk with zeros first; one that commits a size from a view older than
     * another writer's truncate and regrowth does not (60 s seed 5112: a native client's gateway committed a file's
     * old length after another writer had cut it and written a shorter last chunk; the chunk became unreadable).
     */
    private void requireGrownLastChunk(InodeRecord rec, MetaCommand.SetLength c, Set<Integer> rewritten) {
        int cs = rec.chunkSize();
        if (c.length() <= rec.size() || rec.size() % cs == 0) return;
        int last = (int) (rec.size() / cs);
        if (rewritten.contains(last)) return;
        List<ChunkRecord> at = chunks(rec.inode(), last, 1);
        if (at.isEmpty() || at.get(0).index() != last || !at.get(0).committed()) return;
        long id = at.get(0).chunkId();
        for (ChunkVersion w : c.chunks()) if (w.chunkId() == id) return;
        throw new CairnException(Status.STALE, "chunk " + last + " of inode " + rec.inode() + " ends with the file at " + rec.size()
                + " bytes, and this commit grows the file to " + c.length() + " without writing that chunk again (an erasure-coded chunk"
                + " does not grow in place; another writer changed the file since this one's view); write it again");
    }

    /** Refuses a commit naming chunk {@code index} written only as far as {@code length} if the file reaches further into it. */
    private static void requireReach(InodeRecord rec, long size, long length, int index) {
        int cs = rec.chunkSize();
        long start = (long) index * cs;
        long inFile = Math.max(0, Math.min(cs, size - start));
        long written = Math.max(0, Math.min(cs, length - start));
        if (written < inFile) {
            throw new CairnException(Status.STALE, "chunk " + index + " of inode " + rec.inode() + " was written for a file of " + length
                    + " bytes, and the file has " + size + " now (another writer grew it); write it again");
        }
    }

    private List<Long> commitRewrite(MetaCommand.CommitRewrite c, KvBatch batch) {
        long ino = c.inode();
        InodeRecord rec = inode(ino);
        if (rec.type() != FileType.FILE) throw new CairnException(Status.IS_DIR, "inode " + ino);
        Set<Integer> indexes = new HashSet<>();
        Set<Long> fresh = new HashSet<>();
        List<Long> old = new ArrayList<>();
        for (MetaCommand.Rewritten r : c.rewritten()) {
            if (!indexes.add(r.index())) throw new CairnException(Status.BAD_REQUEST, "chunk " + r.index() + " of inode " + ino + " rewritten twice in one commit");
            List<ChunkRecord> now = chunks(ino, r.index(), 1);
            ChunkRecord cur = now.isEmpty() ? null : now.get(0);
            if (cur == null || cur.index() != r.index() || cur.chunkId() != r.oldChunkId() || cur.version() != r.oldVersion()) {
                throw new CairnException(Status.STALE, "chunk " + r.index() + " of inode " + ino + " changed while it was rewritten (truncated, "
                        + "or written by another writer); write it again");
            }
            if (r.newChunkId() >= counter(NEXT_CHUNK) || kv.get(chunkKey(r.newChunkId())) != null) {
                throw new CairnException(Status.BAD_REQUEST, "chunk id " + r.newChunkId() + " was not reserved");
            }
            long version = -1;
            for (ChunkVersion w : c.chunks()) if (w.chunkId() == r.newChunkId()) version = w.version();
            if (version < 1) throw new CairnException(Status.BAD_REQUEST, "the commit does not name the version chunk " + r.newChunkId() + " was written at");
            fresh.add(r.newChunkId());
            old.add(r.oldChunkId());
            batch.delete(chunkKey(r.oldChunkId()));
            batch.delete(reservedKey(r.oldChunkId()));
            // its data version is the one written: this commit vouches for the whole chunk, which was written whole
            batch.put(chunkKey(r.newChunkId()), StoreFormat.encode(new ChunkRecord(r.newChunkId(), version, ino, r.index(), version)));
            batch.put(fileChunkKey(ino, r.index()), longBytes(r.newChunkId()));
        }
        List<ChunkVersion> rest = new ArrayList<>();
        for (ChunkVersion w : c.chunks()) if (!fresh.contains(w.chunkId())) rest.add(w);
        setLength(new MetaCommand.SetLength(ino, c.length(), c.mtimeMillis(), rest), indexes, batch);
        return old;
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
        InodeRecord next = rec.withClass(cls, rec.ctimeMillis());
        batch.put(inodeKey(rec.inode()), StoreFormat.encode(next));
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

    /** A chunk's version reserved for a bump not yet recorded (see {@link #handedOut}); absent when the record is at or above it. */
    private static byte[] reservedKey(long id) { return ByteBuffer.allocate(9).put((byte) 'H').putLong(id).array(); }

    private static byte[] fileChunkKey(long ino, int index) {
        return ByteBuffer.allocate(13).put((byte) 'C').putLong(ino).putInt(index).array();
    }

    private static byte[] direntPrefix(long parent) { return ByteBuffer.allocate(9).put((byte) 'D').putLong(parent).array(); }

    private static byte[] entryPrefix(long parent) { return ByteBuffer.allocate(9).put((byte) 'E').putLong(parent).array(); }

    private static byte[] entryKey(long parent, long entryId) {
        return ByteBuffer.allocate(17).put((byte) 'E').putLong(parent).putLong(entryId).array();
    }

    private static byte[] xattrPrefix(long ino) { return ByteBuffer.allocate(9).put((byte) 'A').putLong(ino).array(); }

    private static byte[] xattrKey(long ino, String name) {
        byte[] n = name.getBytes(StandardCharsets.UTF_8);
        return ByteBuffer.allocate(9 + n.length).put((byte) 'A').putLong(ino).put(n).array();
    }

    private static byte[] verifierKey(long ino) { return ByteBuffer.allocate(9).put((byte) 'X').putLong(ino).array(); }

    private static byte[] direntKey(long parent, String name) {
        byte[] n = name.getBytes(StandardCharsets.UTF_8);
        return ByteBuffer.allocate(9 + n.length).put((byte) 'D').putLong(parent).put(n).array();
    }

    private static byte[] longBytes(long v) { return ByteBuffer.allocate(8).putLong(v).array(); }

    private static <T extends Record> T decode(byte[] b, Class<T> type) {
        try {
            return StoreFormat.decode(b, type);
        } catch (CodecException e) {
            throw new IllegalStateException("corrupt metadata record " + type.getSimpleName() + ": " + e.getMessage(), e);
        }
    }
}
