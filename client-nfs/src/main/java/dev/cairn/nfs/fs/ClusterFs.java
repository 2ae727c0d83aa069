package dev.cairn.nfs.fs;

import dev.cairn.client.CairnClient;
import dev.cairn.client.ChunkSession;
import dev.cairn.client.FileReader;
import dev.cairn.core.async.Promise;
import dev.cairn.core.env.Clock;
import dev.cairn.core.proto.CairnException;
import dev.cairn.core.proto.Codec;
import dev.cairn.core.proto.MasterProtocol.ChangeReply;
import dev.cairn.core.proto.MasterProtocol.DirReply;
import dev.cairn.core.proto.MasterProtocol.WriteLease;
import dev.cairn.core.proto.Status;
import dev.cairn.core.proto.Types.AttrChange;
import dev.cairn.core.proto.Types.DirCookieEntry;
import dev.cairn.core.proto.Types.FileAttr;
import dev.cairn.core.proto.Types.FileType;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The file system as the NFS gateway serves it: namespace calls go to the master, data to the chunkservers.
 *
 * <p><b>Writes</b> of a replicated file stream: a WRITE goes down its chunk's chain at once through the chunk's
 * {@link ChunkSession} (unsynced on the copies, adjacent small writes merged into large pieces while they wait
 * for room in the session's window) and is answered once every copy took it. COMMIT (and a FILE_SYNC or
 * DATA_SYNC write) syncs every chunk written on every copy of its chain, then commits the file's length at
 * the master; only then is the data durable, and only then do the sessions let go of the bytes. Until a
 * commit covers them the sessions keep the bytes (to send them again if a copy fails), which is the
 * write-behind this gateway bounds ({@link Memory}, sized to its heap): past {@link #FLUSH_FILE_BYTES} of a file
 * a commit starts in the background, and a WRITE past {@link #MAX_FILE_HELD_BYTES} of its file or
 * {@link #MAX_HELD_BYTES} of the gateway waits for one (writers wait, they are not failed; the figures are the
 * defaults). So a file of any size is written in bounded
 * memory, and one file's commit never holds up another's writes or reads. Writes no client commits are committed
 * in the background once their file has been idle {@link #WRITE_BACK_AFTER_NANOS} ({@link #writeBackIdle}), and an
 * OPEN of a file another writer changed meanwhile commits (or loses) them first ({@link #revalidated}).
 *
 * <p>An erasure-coded file's chunks are written whole (their parity covers every byte of a stripe), so its
 * changed chunks are held as images, bounded by {@link #MAX_IMAGE_BYTES} over the gateway, and uploaded at
 * COMMIT or when full. A chunk that already holds committed data is never written in place: the master leases
 * a new chunk for the upload, and the commit swaps it in, refused if another writer changed the chunk since
 * (docs/architecture.md, "Erasure-coded chunks").
 *
 * <p><b>Reads</b> of a chunk with writes not yet committed go to its session's chain (every copy there took
 * them); others go through a {@link dev.cairn.client.FileReader}, which spreads reads over the copies, hedges
 * slow ones and decodes erasure-coded stripes. Until a commit, clients of this gateway see the new size and
 * data (and a change attribute that moved); UNSTABLE data lost with the gateway is resent by the clients,
 * which see the write verifier change.
 */
public final class ClusterFs {
    /** Bytes held for writes not yet committed over every file at most; past it a WRITE waits for a commit. */
    public static final long MAX_HELD_BYTES = 128L << 20;
    /** Bytes held for one file at most; past it a WRITE waits for the file's commit. */
    public static final long MAX_FILE_HELD_BYTES = 64L << 20;
    /** Bytes held for one file past which a commit starts in the background (writers go on meanwhile). */
    public static final long FLUSH_FILE_BYTES = 32L << 20;
    /** Erasure-coded chunk images held over every file at most; past it a WRITE first uploads its file's. */
    public static final long MAX_IMAGE_BYTES = 128L << 20;

    /**
     * The write-behind's bounds (above, the defaults): held over the gateway, held per file, per file before a
     * background commit, erasure-coded images. A gateway sizes them to its heap ({@link #forHeap}), so that they
     * fit in it with room for the calls in flight and the garbage between collections.
     */
    public record Memory(long heldBytes, long fileHeldBytes, long flushFileBytes, long imageBytes) {
        public static final Memory DEFAULT = new Memory(MAX_HELD_BYTES, MAX_FILE_HELD_BYTES, FLUSH_FILE_BYTES, MAX_IMAGE_BYTES);
        /**
         * The heap the defaults are for (what {@code ./cairn up} gives the gateway); a smaller one scales them down in
         * proportion. Not less: an erasure-coded image is a whole chunk in one array (64 MiB), and at 256 MiB of heap
         * with four fifths of the defaults random writes to an {@code ec(2,1)} file ran out of memory.
         */
        public static final long FULL_HEAP_BYTES = 512L << 20;
        /** How far down they scale: below it a heap is too small for the gateway whatever its bounds. */
        public static final double MIN_SCALE = 0.25;

        public Memory {
            if (flushFileBytes <= 0 || flushFileBytes > fileHeldBytes || fileHeldBytes > heldBytes || imageBytes <= 0) {
                throw new IllegalArgumentException("write-behind bounds out of order: " + this);
            }
        }

        /**
         * The defaults scaled to a heap of {@code heapBytes}: in full from {@link #FULL_HEAP_BYTES} up, in proportion below
         * (not below {@link #MIN_SCALE}). At 256 MiB: 64 MiB held, 32 per file, 64 of images, the bounds with which a
         * gateway of 160 MiB of heap wrote and read replicated files as fast as one of 512 (docs/benchmarks.md, tenth
         * stop).
         */
        public static Memory forHeap(long heapBytes) {
            double scale = Math.max(MIN_SCALE, Math.min(1.0, (double) heapBytes / FULL_HEAP_BYTES));
            return new Memory(mib(MAX_HELD_BYTES, scale), mib(MAX_FILE_HELD_BYTES, scale), mib(FLUSH_FILE_BYTES, scale), mib(MAX_IMAGE_BYTES, scale));
        }

        private static long mib(long bytes, double scale) { return Math.max(1, (long) (bytes * scale) >> 20) << 20; }
    }

    private final Memory memory;
    /**
     * Held writes of a file no WRITE reached for this long are committed in the background, as a Linux server writes
     * back dirty pages after 30 s ({@code dirty_expire_centisecs}): a client that never sends COMMIT (it gave the change
     * up, or died) does not leave them held here for good, invisible to every other client and lost with this gateway.
     */
    public static final long WRITE_BACK_AFTER_NANOS = 30_000_000_000L;
    /** Files whose state is kept at most (idle ones are dropped first, least recently used). */
    public static final int MAX_FILES = 4096;
    /** The largest file (the master's limit). */
    public static final long MAX_FILE_SIZE = 1L << 50;
    /** Local changes folded into the change attribute below the master's counter (20 bits). */
    static final int LOCAL_CHANGE_BITS = 20;
    /** Zeros written where a file grows past a partly written chunk (shared: a session never changes what it sends). */
    private static final byte[] ZEROS = new byte[Codec.MAX_DATA_BYTES];
    private static final byte[] EMPTY = new byte[0];

    private final CairnClient client;
    private final Clock clock;
    private final Map<Long, OpenFile> files = new LinkedHashMap<>(16, 0.75f, true);
    /** Files with bytes held in sessions (what the gateway-wide bound counts). */
    private final Set<OpenFile> holding = new LinkedHashSet<>();
    private long imageBytes;

    public ClusterFs(CairnClient client, Clock clock) { this(client, clock, Memory.DEFAULT); }

    public ClusterFs(CairnClient client, Clock clock, Memory memory) {
        this.client = client;
        this.clock = clock;
        this.memory = memory;
    }

    /** The write-behind's bounds this gateway runs with. */
    public Memory memory() { return memory; }

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

    /** What is held for writes not yet committed, file by file (for tests and logs). */
    public String describeHeld() {
        StringBuilder b = new StringBuilder();
        for (OpenFile f : holding) b.append(f.inode).append(": ").append(f.sessions.values()).append('\n');
        return b.toString();
    }

    /** Erasure-coded commits refused STALE whose images went up again ({@link #uploadAgain}), since start. */
    public long uploadsAgain() { return uploadsAgain; }

    private long uploadsAgain;

    /** Files the gateway keeps state for (open, or held for their writes), at most {@link #MAX_FILES}. */
    public int openFiles() { return files.size(); }

    /** Bytes read ahead for sequential READers and not yet asked for, over every file ({@link ReadAhead}). */
    public long readAheadBytes() { return readAhead.held(); }

    /** READs answered from what was read ahead, since start. */
    public long readAheadHits() { return readAhead.hits(); }

    private final ReadAhead.Budget readAhead = new ReadAhead.Budget(ReadAhead.Budget.MAX_BYTES);

    /** Bytes held for writes not yet committed, over every file (sessions and erasure-coded images). */
    public long heldBytes() {
        long n = imageBytes;
        for (OpenFile f : holding) n += f.heldBytes();
        return n;
    }

    /**
     * Starts a background commit of each file holding writes that no WRITE has reached for {@link #WRITE_BACK_AFTER_NANOS}
     * and that nothing else is committing (the gateway calls this every few seconds). A failure is logged and handled as
     * a COMMIT's is (a loss is owed to the file's next COMMIT; a transient one is tried again at the next call). A file
     * owing a loss is left alone: the loss is its client's to hear. Answers how many commits started.
     */
    public int writeBackIdle() {
        long now = clock.nanoTime();
        List<OpenFile> due = new ArrayList<>();
        for (OpenFile f : files.values()) {
            if (f.lost != null || !f.dirty() || f.writing > 0 || !f.meta.idle() || f.queuedFlush != null || !f.barrier.isDone()) continue;
            if (now - f.lastWriteNanos >= WRITE_BACK_AFTER_NANOS) due.add(f);
        }
        for (OpenFile f : due) {
            client.log().debug("inode {}: writes held {} s without a COMMIT; committing them", f.inode, (now - f.lastWriteNanos) / 1_000_000_000L);
            flush(f).onFailure(e -> client.log().info("inode {}: background write-back failed: {}", f.inode, e.getMessage()));
        }
        return due.size();
    }

    // ---------------------------------------------------------------- capacity

    /** How old the cluster's capacity figures may be before a file system query asks the master again. */
    public static final long SPACE_MAX_AGE_NANOS = 5_000_000_000L;

    /** The cluster's raw capacity as the master last reported it: bytes over its live chunkservers' disks. */
    public record Space(long totalBytes, long freeBytes) {
        public static final Space UNKNOWN = new Space(0, 0);
    }

    private Space space = Space.UNKNOWN;
    private long spaceAt;
    private boolean spaceAsked;

    /**
     * The cluster's capacity (for df: space_total, space_free, space_avail), as last heard; a query older than
     * {@link #SPACE_MAX_AGE_NANOS} asks the master again in the background (one request at a time), so a file
     * system query never waits on it. Raw bytes over the live chunkservers: a file's copies take several times its size.
     */
    public Space space() {
        long now = clock.nanoTime();
        if (!spaceAsked && (space == Space.UNKNOWN || now - spaceAt > SPACE_MAX_AGE_NANOS)) {
            spaceAsked = true;
            client.status().onComplete((st, e) -> {
                spaceAsked = false;
                if (e != null) return; // kept as it was: the next query asks again
                long total = 0, used = 0;
                for (var server : st.servers()) {
                    if (!server.alive()) continue;
                    total += server.capacityBytes();
                    used += Math.min(server.usedBytes(), server.capacityBytes());
                }
                space = new Space(total, total - used);
                spaceAt = clock.nanoTime();
            });
        }
        return space;
    }

    // ---------------------------------------------------------------- namespace

    public Promise<FileAttr> getAttr(long inode) {
        OpenFile f = files.get(inode);
        if (f != null && !f.cacheOnly()) return Promise.completed(f.attr());
        return client.getAttr(inode).map(this::seen);
    }

    /**
     * The attributes a READ or WRITE checks (type, mode) and works with: what this gateway holds of the file if
     * anything (no master round trip per WRITE), else the master's.
     */
    public Promise<FileAttr> attrForIo(long inode) {
        OpenFile f = files.get(inode);
        if (f != null) return Promise.completed(f.attr());
        return getAttr(inode);
    }

    public Promise<FileAttr> lookup(long dir, String name) { return client.lookup(dir, name).map(this::seen); }

    /**
     * The attributes an OPEN of {@code name} answers with (close-to-open): the master's, even where this gateway holds
     * writes of the file that no client committed — see {@link #revalidated}.
     */
    public Promise<FileAttr> lookupForOpen(long dir, String name) { return client.lookup(dir, name).flatMap(this::revalidated); }

    /** {@link #lookupForOpen} for an OPEN by file handle. */
    public Promise<FileAttr> attrForOpen(long inode) { return client.getAttr(inode).flatMap(this::revalidated); }

    /**
     * Close-to-open for a file this gateway holds writes of: if the master's change attribute moved past the one
     * these writes were made against, another writer (another gateway, the native client) changed the file since,
     * and an OPEN must see that change. The held writes are committed first (a server may make UNSTABLE writes
     * durable whenever it likes); where that cannot be done — the other writer's lease or rewrite refuses them, or
     * the cluster cannot take them — they are lost, and the next COMMIT of the file says so, as for any loss. Only a
     * transient refusal (a master election, a busy server) fails the OPEN, with DELAY, so that the client asks again.
     * Without this a gateway kept answering from writes its client had given up on (no COMMIT ever came), with the
     * size they left, after another writer had committed more (group sim seed 2583: an NFS read got 300,857 bytes of
     * a file committed at 338,385).
     */
    private Promise<FileAttr> revalidated(FileAttr fresh) {
        OpenFile f = files.get(fresh.inode());
        if (f == null || f.cacheOnly() || fresh.change() == f.base.change()) return Promise.completed(seen(fresh));
        client.log().info("inode {}: changed elsewhere (change {} -> {}) while this gateway holds writes of it; committing them before the open",
                f.inode, f.base.change(), fresh.change());
        return f.meta.<Void>submit(() -> {
            Promise<Void> flushed = f.lost != null ? dropDoomed(f) : f.ec() ? flushImages(f) : flushSessions(f);
            return flushed.then((v, e) -> {
                if (e == null) return Promise.completed(null);
                Status s = CairnException.statusOf(e);
                if (s == Status.UNAVAILABLE || s == Status.BUSY || s == Status.NOT_LEADER || s == Status.EXPIRED) return Promise.failed(e);
                if (f.lost == null) {
                    if (f.ec()) loseImages(f, new CairnException(Status.IO, CairnException.detailOf(e)));
                    else loseWrites(f, e);
                }
                return Promise.completed(null);
            });
        }).flatMap(v -> client.getAttr(f.inode)).map(this::seen);
    }

    /** Writes held after a loss the next COMMIT is to report: that COMMIT would drop them too; they go now, the loss still owed. */
    private Promise<Void> dropDoomed(OpenFile f) {
        if (f.ec()) {
            while (!f.images.isEmpty()) drop(f, f.images.firstKey());
            f.unstable = 0;
            f.size = f.base.size();
        } else {
            dropHeldWrites(f);
        }
        return Promise.completed(null);
    }

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
            if (f != null && f.cacheOnly()) f.rebase(r.attr());
            return shifted(r);
        });
    }

    /** Attribute changes; a size change first makes this gateway's pending writes of the file durable. */
    public Promise<FileAttr> setAttr(long inode, AttrChange change) {
        if (change.size() == AttrChange.KEEP) {
            OpenFile f = files.get(inode);
            if (f == null) return client.setAttr(inode, change).map(this::seen);
            return f.meta.submit(() -> client.setAttr(inode, change).map(a -> {
                f.rebase(a);
                return f.attr();
            }));
        }
        if (change.size() < 0 || change.size() > MAX_FILE_SIZE) return Promise.failed(new CairnException(Status.BAD_REQUEST, "size " + change.size()));
        // fresh attributes unless this gateway holds writes of the file: a size change works from the old size (zeros
        // from the old end to its chunk's end when growing), and a stale one would write zeros over another writer's
        // bytes before the master refused the change as STALE (sim seed 10 with the NFS lane: a native client's
        // ClusterFs truncated a file the gateway had grown meanwhile, zeroing acknowledged bytes)
        return openFresh(inode).flatMap(f -> {
            if (f.base.type() != FileType.FILE) return Promise.failed(notAFile(f));
            Promise<Void> done = new Promise<>();
            Promise<Void> before = f.barrier;
            f.barrier = done; // WRITEs arriving from now on wait for the size change
            Promise<FileAttr> out = before.flatMap(v -> f.meta.submit(() -> resize(f, change)));
            out.onComplete((a, e) -> done.complete(null));
            return out;
        });
    }

    // ---------------------------------------------------------------- extended attributes (RFC 8276)

    /** The value of an extended attribute; fails NOT_FOUND ("xattr …") if unset. Always the master's: nothing of them is cached here. */
    public Promise<byte[]> getXattr(long inode, String name) { return client.getXattr(inode, name); }

    public Promise<List<String>> listXattrs(long inode) { return client.listXattrs(inode); }

    /**
     * Sets or removes ({@link dev.cairn.core.proto.MasterProtocol#XATTR_REMOVE}) an extended attribute; answers the
     * attributes after, whose change attribute moved. For a file this gateway holds, ordered with its other attribute
     * changes and folded into what it holds, as a mode change is.
     */
    public Promise<FileAttr> setXattr(long inode, String name, byte[] value, int how) {
        OpenFile f = files.get(inode);
        if (f == null) return client.setXattr(inode, name, value, how).map(this::seen);
        return f.meta.submit(() -> client.setXattr(inode, name, value, how).map(a -> {
            f.rebase(a);
            return f.attr();
        }));
    }

    // ---------------------------------------------------------------- data

    /**
     * A READ's answer: the bytes, whether they end at the end of the file, and whether they lie in a hole — a chunk no
     * commit reached and this gateway holds no write for, or a range past the committed end the file grew over
     * (zeros; READ_PLUS says so instead of sending them). Zeros elsewhere are data.
     */
    public record ReadResult(byte[] data, boolean eof, boolean hole) {}

    public Promise<ReadResult> read(long inode, long offset, int count) {
        return open(inode).flatMap(f -> {
            if (f.base.type() != FileType.FILE) return Promise.failed(notAFile(f));
            if (offset >= f.size || count == 0) return Promise.completed(new ReadResult(new byte[0], offset >= f.size, false));
            int cs = f.chunkSize();
            int index = (int) (offset / cs);
            int inChunk = (int) (offset - (long) index * cs);
            int n = (int) Math.min(Math.min(count, Codec.MAX_DATA_BYTES), Math.min(f.size - offset, cs - inChunk));
            long size = f.size;
            return readChunk(f, index, inChunk, n)
                    .map(p -> new ReadResult(p.data(), offset + p.data().length >= size, p.hole() && allZero(p.data())));
        }).onFailure(e -> client.log().debug("READ of inode {} at {}: {}", inode, offset, e.toString()));
    }

    /** A hole is reported only over bytes read as zeros: whatever raced the read, data is never called a hole. */
    private static boolean allZero(byte[] b) {
        return Arrays.mismatch(b, new byte[b.length]) < 0;
    }

    /**
     * {@code n} bytes of chunk {@code index} from {@code inChunk}, from this gateway's writes where it holds any, else the
     * cluster; a hole (for READ_PLUS) where no chunk was committed, or past the committed end the file grew over.
     */
    /** This gateway holds writes of chunk {@code index} not yet committed: its READs go to them, not the cluster. */
    private static boolean heldHere(OpenFile f, int index) {
        ChunkSession s = f.sessions.get(index);
        return f.images.containsKey(index) || s != null && s.heldBytes() > 0;
    }

    private Promise<FileReader.Piece> readChunk(OpenFile f, int index, int inChunk, int n) {
        long offset = (long) index * f.chunkSize() + inChunk;
        OpenFile.Image img = f.images.get(index);
        if (img != null) {
            byte[] out = new byte[n];
            if (inChunk < img.length) System.arraycopy(img.bytes, inChunk, out, 0, Math.min(n, img.length - inChunk));
            return Promise.completed(new FileReader.Piece(out, false));
        }
        ChunkSession s = f.sessions.get(index);
        if (s != null && s.heldBytes() > 0) {
            // writes not yet committed: the chain of the session has them all; bytes it never wrote are zeros
            return s.read(inChunk, n).map(b -> new FileReader.Piece(b.length == n ? b : Arrays.copyOf(b, n), false));
        }
        long committed = f.base.size();
        if (offset >= committed) return Promise.completed(new FileReader.Piece(new byte[n], true)); // past the committed end: grown over
        if (f.reader == null) f.reader = client.reader(f.base);
        int fromCluster = (int) Math.min(n, committed - offset);
        if (f.ahead == null) f.ahead = new ReadAhead(readAhead);
        FileReader reader = f.reader;
        Promise<FileReader.Piece> ahead = f.ahead.read(reader, offset, fromCluster, f.base.change(), committed, clock.nanoTime(),
                at -> heldHere(f, (int) (at / f.chunkSize())));
        Promise<FileReader.Piece> read = ahead == null ? reader.readPiece(offset, fromCluster)
                : ahead.then((p, e) -> e == null ? Promise.completed(p) : reader.readPiece(offset, fromCluster)); // failed ahead: read it now
        return read.map(p -> {
            byte[] b = p.data();
            if (b.length == 0) throw new CairnException(Status.IO, "short read of inode " + f.inode + " at " + offset);
            return new FileReader.Piece(b.length < fromCluster || fromCluster == n ? b : Arrays.copyOf(b, n), p.hole());
        });
    }

    /** Applies a WRITE; durable only after {@link #commit} (or before the answer with {@code stable}). Answers the file's attributes after it. */
    public Promise<FileAttr> write(long inode, long offset, byte[] data, boolean stable) {
        return prepareWrite(inode).flatMap(t -> write(t, offset, data, stable));
    }

    /**
     * A file made ready for a WRITE: its state here, with the attributes the WRITE checks (type, mode). Fresh from the
     * master unless writes of it are held here, as {@link #write} needs it; to be written at once, in the step that
     * got it (a target kept for later would carry attributes another writer may have changed since).
     */
    public static final class WriteTarget {
        private final OpenFile file;

        private WriteTarget(OpenFile file) { this.file = file; }

        public FileAttr attr() { return file.attr(); }
    }

    /**
     * The first WRITE of a file not held here costs one master round trip for both its checks and its state (it cost two:
     * the checks' attributes, then the same attributes again for the state). With the commit's answer carrying the
     * attributes (no GetAttr after it), a small file's OPEN-create, WRITE, COMMIT and CLOSE make five master calls, not seven.
     */
    public Promise<WriteTarget> prepareWrite(long inode) {
        return openFresh(inode).map(f -> {
            // a WRITE of a directory or a special file is refused by its checks: no state is kept for it
            if (f.base.type() != FileType.FILE && f.idle()) files.remove(inode, f);
            return new WriteTarget(f);
        });
    }

    public Promise<FileAttr> write(WriteTarget target, long offset, byte[] data, boolean stable) {
        OpenFile prepared = target.file;
        if (offset < 0 || offset + data.length > MAX_FILE_SIZE) {
            return Promise.failed(new CairnException(Status.BAD_REQUEST, "write past the largest file size"));
        }
        // the state the target holds, unless this gateway let it go meanwhile (an idle file evicted: fetched again)
        Promise<OpenFile> ready = files.get(prepared.inode) == prepared ? Promise.completed(prepared) : openFresh(prepared.inode);
        return ready.flatMap(f -> f.barrier.flatMap(v -> {
            if (f.base.type() != FileType.FILE) return Promise.failed(notAFile(f));
            Promise<Void> applied = f.ec() ? f.meta.submit(() -> writeImage(f, offset, data)) : writeStreamed(f, offset, data);
            return applied.flatMap(x -> stable ? flush(f) : Promise.completed(null)).map(x -> f.attr());
        })).onFailure(e -> client.log().debug("WRITE of inode {} at {}: {}", prepared.inode, offset, e.toString()));
    }

    /** Where SEEK found what it looked for ({@code offset}, with {@code eof} when that is the file's end), or nothing ({@link #NOTHING}). */
    public record SeekResult(long offset, boolean eof) {
        /** No data at or after the offset, or the offset is at or past the end: NFS4ERR_NXIO, as lseek's ENXIO. */
        public static final SeekResult NOTHING = new SeekResult(-1, true);
    }

    /** Chunk indexes asked of the master at a time while seeking (its cap on one GetChunks). */
    static final int SEEK_PAGE = 4096;

    /**
     * SEEK (NFSv4.2): the first offset at or after {@code offset} in data ({@code data}) or in a hole. Holes are known
     * at chunk granularity: a chunk no commit reached (the master lists none there) for which this gateway holds no
     * write is a hole; any other chunk is data throughout, zeros inside it included (a server may report a hole as
     * data, never data as a hole: a reader skipping a "hole" would lose bytes). The file's end is a hole.
     */
    public Promise<SeekResult> seek(long inode, long offset, boolean data) {
        return openFresh(inode).flatMap(f -> f.barrier.flatMap(v -> {
            if (f.base.type() != FileType.FILE) return Promise.failed(notAFile(f));
            if (offset < 0 || offset >= f.size) return Promise.completed(SeekResult.NOTHING);
            return seekFrom(f, offset, data, f.size, (int) (offset / f.chunkSize()));
        }));
    }

    private Promise<SeekResult> seekFrom(OpenFile f, long offset, boolean data, long size, int from) {
        int cs = f.chunkSize();
        int last = (int) ((size - 1) / cs);
        int to = (int) Math.min(last, (long) from + SEEK_PAGE - 1);
        return client.chunks(f.inode, from, to - from + 1).flatMap(r -> {
            java.util.BitSet committed = new java.util.BitSet();
            for (var c : r.chunks()) if (c.index() >= from && c.index() <= to) committed.set(c.index() - from);
            for (int i = from; i <= to; i++) {
                boolean isData = committed.get(i - from) || f.sessions.containsKey(i) || f.images.containsKey(i);
                if (isData == data) return Promise.completed(new SeekResult(Math.max(offset, (long) i * cs), false));
            }
            if (to < last) return seekFrom(f, offset, data, size, to + 1);
            return Promise.completed(data ? SeekResult.NOTHING : new SeekResult(size, true));
        });
    }

    /**
     * Zeros over {@code [offset, offset + length)} within the file, its size unchanged (DEALLOCATE), durable with the
     * length committed before the answer. Sent as WRITEs of zeros one after the other, so a large range is held to the
     * same write-behind bounds as a client writing it.
     */
    public Promise<FileAttr> deallocate(long inode, long offset, long length) {
        if (offset < 0 || length < 0 || offset + length < 0) {
            return Promise.failed(new CairnException(Status.BAD_REQUEST, "deallocate " + length + " bytes at " + offset));
        }
        return openFresh(inode).flatMap(f -> f.barrier.flatMap(v -> {
            if (f.base.type() != FileType.FILE) return Promise.failed(notAFile(f));
            if (client.env().planted(dev.cairn.core.env.Plant.DEALLOCATE_NOT_SYNCED)) return zeros(f, offset, offset + length).map(x -> f.attr());
            return zeros(f, offset, offset + length).flatMap(x -> flush(f)).map(x -> f.attr());
        })).onFailure(e -> client.log().debug("DEALLOCATE of inode {} at {}: {}", inode, offset, e.toString()));
    }

    /** Zeros from {@code from} up to {@code end} or the file's end as it is at each step (a shrink meanwhile is not undone). */
    private Promise<Void> zeros(OpenFile f, long from, long end) {
        long to = Math.min(f.size, end);
        if (from >= to) return Promise.completed(null);
        int n = (int) Math.min(ZEROS.length, to - from);
        byte[] z = n == ZEROS.length ? ZEROS : new byte[n];
        Promise<Void> written = f.ec() ? f.meta.submit(() -> writeImage(f, from, z)) : writeStreamed(f, from, z);
        return written.flatMap(v -> zeros(f, from + n, end));
    }

    /** Makes every WRITE this gateway answered for the file durable on every copy, and its length committed. */
    public Promise<FileAttr> commit(long inode) {
        OpenFile f = files.get(inode);
        if (f == null) return client.getAttr(inode).map(this::seen);
        return flush(f).map(v -> f.attr()).onFailure(e -> client.log().debug("COMMIT of inode {}: {}", inode, e.toString()));
    }

    // ---------------------------------------------------------------- replicated: streamed

    /**
     * Sends a WRITE down the chains of the chunks it covers (and zeros where it grows the file past a partly
     * written chunk) in one go, so WRITEs in flight together keep their order; answered once every copy took
     * it, and after a commit when the write-behind is over its bounds.
     */
    private Promise<Void> writeStreamed(OpenFile f, long offset, byte[] data) {
        long end = offset + data.length;
        List<Promise<Void>> taken = new ArrayList<>();
        if (end > f.size) {
            if (offset > f.size) extendOver(f, f.size, offset, taken);
            f.size = end;
        }
        int cs = f.chunkSize();
        for (int from = 0; from < data.length; ) {
            long pos = offset + from;
            int index = (int) (pos / cs);
            int inChunk = (int) (pos - (long) index * cs);
            int n = Math.min(data.length - from, Math.min(cs - inChunk, Codec.MAX_DATA_BYTES));
            byte[] piece = from == 0 && n == data.length ? data : Arrays.copyOfRange(data, from, from + n);
            taken.add(session(f, index).write(inChunk, piece));
            from += n;
        }
        f.localChanges++;
        f.mtimeMillis = clock.wallMillis();
        f.lastWriteNanos = clock.nanoTime();
        if (f.ahead != null) f.ahead.clear(); // read before this write: a READ after it must not see the old bytes
        f.writing++;
        holding.add(f);
        return Promise.all(taken).then((v, e) -> {
            f.writing--;
            f.unstable++;
            if (e != null) {
                if (failedSession(f)) loseWrites(f, e);
                return Promise.failed(e);
            }
            return writeBehind(f);
        });
    }

    /**
     * Extends the copies of the chunk holding {@code from} (if it is partly written) to cover {@code [from, to)}:
     * a copy shorter than that grows with zeros, a longer one is left as it is. Not a write of zeros: this
     * gateway's idea of the file's end may be behind the master's (another writer grew the file since), and zeros
     * sent (or resent under a later lease) over the gap would land on that writer's committed bytes (sim seeds 5386,
     * 5474). Bytes past the committed end from writes never committed are cut by the next lease's bump (the master
     * names the committed length), so a copy longer than the gap holds committed bytes or this writer's own.
     */
    private void extendOver(OpenFile f, long from, long to, List<Promise<Void>> taken) {
        int cs = f.chunkSize();
        if (from % cs == 0) return;
        int index = (int) (from / cs);
        long chunkStart = (long) index * cs;
        taken.add(session(f, index).write(Math.min(to, chunkStart + cs) - chunkStart, EMPTY));
    }

    /**
     * Zeros over {@code [from, to)} where they land in the chunk holding {@code from}, if that chunk is partly
     * written: after a shrink into a chunk, the bytes past the new end are zeros at once (the SETATTR answers after
     * they are durable), so a file grown again reads zeros there. Chunks wholly past the end hold nothing.
     */
    private void zeroFill(OpenFile f, long from, long to, List<Promise<Void>> taken) {
        int cs = f.chunkSize();
        if (from % cs == 0) return;
        int index = (int) (from / cs);
        long chunkEnd = (long) (index + 1) * cs;
        ChunkSession s = session(f, index);
        for (long pos = from; pos < Math.min(to, chunkEnd); ) {
            int n = (int) Math.min(ZEROS.length, Math.min(to, chunkEnd) - pos);
            taken.add(s.write(pos - (long) index * cs, n == ZEROS.length ? ZEROS : Arrays.copyOf(ZEROS, n)));
            pos += n;
        }
    }

    private ChunkSession session(OpenFile f, int index) {
        ChunkSession s = f.sessions.get(index);
        if (s != null) return s;
        s = client.session(f.base, index, f.versions);
        f.sessions.put(index, s);
        long start = (long) index * f.chunkSize();
        if (start < f.size) {
            // a chunk the file already covers holds it up to the file's end or its own: a chunk never written (the
            // file grew over it) gets there by an empty write, which extends a shorter copy with zeros
            long upTo = Math.min(f.size, start + f.chunkSize()) - start;
            s.write(upTo, EMPTY).onFailure(e -> client.log().debug("inode {} chunk {}: extend failed: {}", f.inode, index, e.getMessage()));
        }
        return s;
    }

    /** Starts a commit of a file holding much; waits for one when a bound is reached. */
    private Promise<Void> writeBehind(OpenFile f) {
        long fileHeld = f.heldBytes();
        if (fileHeld >= memory.fileHeldBytes()) return flush(f);
        if (fileHeld >= memory.flushFileBytes() && f.queuedFlush == null && f.meta.idle()) {
            flush(f).onFailure(e -> client.log().debug("inode {}: background commit failed: {}", f.inode, e.getMessage()));
        }
        long total = heldBytes();
        if (total < memory.heldBytes()) return Promise.completed(null);
        // the gateway is over its bound: commit the file holding the most, and wait for it
        OpenFile largest = f;
        for (OpenFile g : holding) if (g.heldBytes() > largest.heldBytes()) largest = g;
        return flush(largest);
    }

    // ---------------------------------------------------------------- durability

    /**
     * Makes every WRITE answered so far durable and commits the size. Flushes run one at a time per file; a
     * flush asked for while one is queued and not yet started joins it (it will cover both callers' writes).
     */
    private Promise<Void> flush(OpenFile f) {
        if (f.queuedFlush != null) return f.queuedFlush;
        Promise<Void> queued = new Promise<>();
        f.queuedFlush = queued;
        f.meta.submit(() -> {
            if (f.queuedFlush == queued) f.queuedFlush = null; // started: a later caller needs a flush of its own
            return f.ec() ? flushImages(f) : flushSessions(f);
        }).onComplete((v, e) -> {
            if (e != null) queued.fail(e);
            else queued.complete(null);
        });
        return queued;
    }

    /**
     * Syncs every session with writes not yet durable (a sync waits for the writes before it to be through their
     * chain, so it covers every WRITE taken before this flush began), commits the size, and lets go of the bytes.
     */
    private Promise<Void> flushSessions(OpenFile f) {
        if (f.lost != null) {
            // the COMMIT that reports the loss covers every write since the last commit, those taken after the loss
            // too: its client is told none is durable, so none is kept for a later commit. Kept, they held the file's
            // length here at their own end while another writer committed it longer, and this gateway's READs stopped
            // short of that writer's bytes (60 s seed 6216)
            dropHeldWrites(f);
            return owedLoss(f);
        }
        List<Promise<Void>> syncs = new ArrayList<>();
        // an extension (an empty write: sim seed 5386) must be durable before the commit too
        for (ChunkSession s : f.sessions.values()) if (s.unsynced()) syncs.add(s.sync());
        long size = f.size;
        long changes = f.unstable;
        if (syncs.isEmpty() && size == f.base.size() && changes == 0 && f.heldBytes() == 0) return Promise.completed(null);
        return Promise.all(syncs).flatMap(v -> {
            long committing = committedSize(f, size);
            if (client.env().planted(dev.cairn.core.env.Plant.RELEASE_BEFORE_COMMIT)) for (ChunkSession s : f.sessions.values()) s.releaseSynced();
            return commitLength(f, committing);
        }).then((v, e) -> {
            if (e != null) {
                if (CairnException.statusOf(e) == Status.IO || failedSession(f)) loseWrites(f, e);
                return Promise.failed(e);
            }
            // only now: a commit the master lost (it crashed before making it durable) leaves the synced writes to be
            // sent again under the next lease, whose bump cuts every copy back to the committed length
            for (ChunkSession s : f.sessions.values()) s.releaseSynced();
            f.unstable -= changes;
            dropIdleSessions(f);
            return Promise.completed(null);
        });
    }

    /**
     * The size a flush commits: the file's when it began, raised over every write synced by now. A WRITE taken while
     * the flush waited for its lease is synced by the flush's sync and let go of after the commit, so the commit must
     * cover it: committed short of it, the next lease's copies were cut back to the committed length and the bytes lost
     * with nothing left to send again (60 s sim seed 466). Never past the file's size now (a truncate since).
     */
    private static long committedSize(OpenFile f, long size) {
        long upTo = size;
        int cs = f.chunkSize();
        for (Map.Entry<Integer, ChunkSession> e : f.sessions.entrySet()) {
            long end = e.getValue().syncedEnd();
            if (end > 0) upTo = Math.max(upTo, (long) e.getKey() * cs + end);
        }
        return Math.min(upTo, f.size);
    }

    /** Writes answered earlier can no longer be made durable: this commit says so, once. */
    private static Promise<Void> owedLoss(OpenFile f) {
        CairnException lost = f.lost;
        f.lost = null;
        return Promise.failed(lost);
    }

    private static boolean failedSession(OpenFile f) {
        for (ChunkSession s : f.sessions.values()) if (s.failed()) return true;
        return false;
    }

    /**
     * Writes held for the file can never be made durable (a chain failed for good, or another writer leased a
     * chunk since): the sessions are dropped, so later writes start afresh, and the next commit fails too, as
     * it would have covered them.
     */
    private void loseWrites(OpenFile f, Throwable e) {
        client.log().warn("inode {}: writes not yet committed are lost: {}", f.inode, e.getMessage());
        dropHeldWrites(f);
        f.lost = new CairnException(Status.IO, "writes to inode " + f.inode + " were lost before a commit: " + CairnException.detailOf(e));
    }

    /** Lets go of every write held for the file and of what they grew it by (a later commit must not cover them). */
    private void dropHeldWrites(OpenFile f) {
        f.sessions.clear();
        f.unstable = 0;
        f.size = f.base.size();
        holding.remove(f);
    }

    /**
     * An erasure-coded file's commit was refused {@code STALE} the first time: the master may have lost the rewrite it
     * was to swap in (pending rewrites live in the leader's memory: a master restart or a leader change between the
     * upload and the commit), or a part's server died since the upload ("write it again"). The images still hold every
     * WRITE answered, so they go up again, each under a new rewrite lease based on the chunk the image was read from:
     * refused if another writer's change replaced that chunk meanwhile, and then the writes are lost as before
     * ({@link #loseImages}). The COMMIT answers DELAY; the client's retry uploads and commits. Losing them at once
     * failed an NFS client's COMMIT with EIO across any master failover during an erasure-coded rewrite.
     */
    private Promise<Void> uploadAgain(OpenFile f, Throwable e) {
        client.log().info("inode {}: commit refused ({}); uploading its erasure-coded chunks again", f.inode, CairnException.detailOf(e));
        f.uploadingAgain = true;
        uploadsAgain++;
        for (OpenFile.Image img : f.images.values()) {
            if (img.dirty) continue;
            img.dirty = true;
            account(f, img);
        }
        return Promise.failed(new CairnException(Status.UNAVAILABLE, "the erasure-coded chunks of inode " + f.inode + " are to be uploaded again: "
                + CairnException.detailOf(e)));
    }

    /**
     * An erasure-coded file's commit was refused for good: a chunk uploaded for it was replaced meanwhile (another
     * writer's rewrite of the same chunk won), or the master lost the pending rewrite (a leader change). What its
     * images held beyond the committed file can no longer be made durable by committing: kept, the next commit would
     * cover a size the chunks do not hold (sim seed 130 at 10 s: after a master restart the refused rewrite's chunk
     * was left out of the next commit, which grew the file past it; the chunk's parts then counted short, and the
     * file could not be read). So the images go, the size is the master's again, and the next COMMIT fails too.
     */
    private void loseImages(OpenFile f, CairnException e) {
        client.log().warn("inode {}: erasure-coded writes not yet committed are lost: {}", f.inode, e.getMessage());
        while (!f.images.isEmpty()) drop(f, f.images.firstKey());
        f.unstable = 0;
        f.size = f.base.size();
        f.lost = e;
        f.uploadingAgain = false;
    }

    /** After a commit: sessions holding nothing are dropped once a file has many (each costs a lease to take again). */
    private void dropIdleSessions(OpenFile f) {
        if (f.sessions.size() > 16) f.sessions.values().removeIf(s -> s.heldBytes() == 0 && !s.unsynced());
        if (f.heldBytes() == 0) holding.remove(f);
    }

    private Promise<Void> commitLength(OpenFile f, long size) {
        return client.commitLength(f.inode, size, f.versions).<FileAttr>then((a, e) -> {
            if (e == null) return Promise.completed(a);
            // another writer leased a chunk after this gateway wrote it: those WRITEs are not durable, and a
            // retried COMMIT must not acknowledge them (STALE would map to DELAY, and the retry would succeed)
            if (CairnException.statusOf(e) == Status.STALE) {
                if (f.ec() && !f.uploadingAgain && !f.images.isEmpty()) return uploadAgain(f, e).<FileAttr>map(v -> null);
                CairnException lost = new CairnException(Status.IO, CairnException.detailOf(e));
                if (f.ec()) loseImages(f, lost);
                return Promise.failed(lost);
            }
            return Promise.failed(e);
        }).flatMap(a -> a.inode() == f.inode ? Promise.completed(a) : client.getAttr(f.inode)).map(a -> {
            f.uploadingAgain = false;
            f.rebase(a);
            return null;
        });
    }

    // ---------------------------------------------------------------- size changes

    private Promise<FileAttr> resize(OpenFile f, AttrChange change) {
        long newSize = change.size();
        long oldSize = f.size;
        if (f.ec()) return resizeImages(f, change);
        if (newSize > oldSize) {
            // grow: zeros over the rest of the old last chunk, made durable (and its version committed) with every
            // write before, then the size at the master, which drops any chunk wholly past the old end
            List<Promise<Void>> taken = new ArrayList<>();
            extendOver(f, oldSize, newSize, taken);
            holding.add(f);
            return Promise.all(taken).flatMap(v -> flushSessions(f)).flatMap(v -> client.setAttr(f.inode, change.fromSize(oldSize))).map(a -> {
                f.size = newSize;
                f.rebase(a);
                return f.attr();
            });
        }
        return flushSessions(f).flatMap(v -> {
            // shrink: sessions past the new end write nothing more (the master drops their chunks)
            int cs = f.chunkSize();
            int keep = (int) ((newSize + cs - 1) / cs);
            f.sessions.tailMap(keep, true).clear();
            return client.setAttr(f.inode, change);
        }).flatMap(a -> {
            f.size = newSize;
            f.rebase(a);
            int cs = f.chunkSize();
            if (newSize == oldSize || newSize % cs == 0) return Promise.completed(f.attr());
            // shrink into a chunk: its bytes past the new end become zeros, so a file grown again reads zeros there
            long upTo = Math.min(oldSize, (newSize / cs + 1) * cs);
            List<Promise<Void>> taken = new ArrayList<>();
            zeroFill(f, newSize, upTo, taken);
            holding.add(f);
            return Promise.all(taken).flatMap(v -> flushSessions(f)).map(v -> f.attr());
        });
    }

    // ---------------------------------------------------------------- internals

    private static CairnException notAFile(OpenFile f) {
        return new CairnException(f.base.type() == FileType.DIR ? Status.IS_DIR : Status.BAD_REQUEST, "not a file");
    }

    private FileAttr seen(FileAttr a) {
        OpenFile f = files.get(a.inode());
        if (f == null) return shifted(a);
        if (!f.cacheOnly()) return f.attr();
        // changed elsewhere (another gateway, the CLI): what is cached of its chunks may be old
        if (a.change() != f.base.change()) {
            f.images.clear();
            f.sessions.clear();
        }
        f.rebase(a);
        return f.attr();
    }

    private ChangeReply forgetGone(ChangeReply r) {
        // a file that lost its last name is gone at the master; idle state is only a cache, so drop it all
        for (Iterator<OpenFile> it = files.values().iterator(); it.hasNext(); ) {
            OpenFile f = it.next();
            if (f.idle()) it.remove();
        }
        return r;
    }

    /**
     * The file's state, its attributes fetched again if nothing of it is held here: another writer may have changed
     * the size since (a WRITE past a stale size would write zeros over its bytes). A state made now is fresh.
     */
    private Promise<OpenFile> openFresh(long inode) {
        // a fetch under way is joined whatever the state is now: a WRITE issued after another is applied after it
        Promise<OpenFile> under = fetching.get(inode);
        if (under != null) return under;
        OpenFile f = files.get(inode);
        if (f != null && !f.cacheOnly()) return Promise.completed(f);
        Promise<OpenFile> fetch = f == null ? open(inode) : client.getAttr(f.inode).map(a -> {
            seen(a);
            return f;
        });
        if (fetch.isDone()) return fetch;
        fetching.put(inode, fetch);
        fetch.onComplete((v, e) -> fetching.remove(inode, fetch));
        return fetch;
    }

    /**
     * Fetches of a file's attributes under way ({@link #openFresh}), by inode: every WRITE needing one while it runs
     * waits for the same answer, and their callbacks run in the order they asked, so WRITEs issued in order are
     * applied in order. Each with a fetch of its own, an earlier WRITE whose answer was lost and asked again landed
     * after a later one over the same bytes, and the COMMIT made the older bytes durable (group sim seed 2312: an
     * erasure-coded image took a write at 47.56 s, then at 48.36 s the write issued before it).
     */
    private final Map<Long, Promise<OpenFile>> fetching = new java.util.HashMap<>();

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
            if (f.idle()) {
                it.remove();
                holding.remove(f);
                if (f.ahead != null) f.ahead.clear();
            }
        }
    }

    // ---------------------------------------------------------------- erasure-coded: whole chunks

    /** Copies a WRITE into the images of the chunks it covers (loading each from the cluster first). */
    private Promise<Void> writeImage(OpenFile f, long offset, byte[] data) {
        if (f.ahead != null) f.ahead.clear(); // read before this write: a READ after it must not see the old bytes
        long end = offset + data.length;
        boolean grows = end > f.size;
        Promise<Void> grown = grows ? extendImages(f, end) : Promise.completed(null);
        return grown.flatMap(v -> apply(f, offset, data, 0)).flatMap(v -> {
            f.localChanges++;
            f.mtimeMillis = clock.wallMillis();
            f.lastWriteNanos = clock.nanoTime();
            f.unstable++;
            if (imageBytes > memory.imageBytes()) return flushImages(f);
            // a writer growing the file has finished the full chunks behind it; one writing inside the file has not
            // (random writes over two chunks uploaded a whole chunk at nearly every WRITE: 5 ops/s in `bench nfs
            // --class ec(2,1)`): its chunks wait for the COMMIT or the memory bound
            return grows ? flushFull(f, (int) ((end - 1) / f.chunkSize())) : Promise.completed(null);
        });
    }

    /** The image of chunk {@code index}, loaded from the cluster (its bytes up to the file's size) on first use. */
    private Promise<OpenFile.Image> image(OpenFile f, int index) {
        OpenFile.Image img = f.images.get(index);
        if (img != null) return Promise.completed(img);
        int cs = f.chunkSize();
        long start = (long) index * cs;
        // the chunk's bytes as the master's committed size has them now, not as this file's state last heard it: an
        // image short of them (a commit whose answer was lost left the state's size behind) would be uploaded with
        // zeros over committed bytes
        return client.getAttr(f.inode).flatMap(now -> {
            OpenFile.Image loaded = f.images.get(index);
            if (loaded != null) return Promise.completed(loaded);
            int existing = (int) Math.max(0, Math.min(now.size(), start + cs) - start);
            byte[] bytes = new byte[Math.min(cs, Math.max(existing, 64 << 10))];
            return loadChunk(f, existing == 0 ? null : client.reader(now), index, bytes, existing).map(base -> {
                OpenFile.Image fresh = new OpenFile.Image(bytes, existing, base);
                f.images.put(index, fresh);
                return fresh;
            });
        });
    }

    /**
     * Reads the first {@code length} bytes of chunk {@code index} into {@code into}; answers the id of the chunk they
     * came from (an upload of the image names it: refused if the chunk was replaced since), or
     * {@link WriteLease#NOTHING_READ}. A read that crossed a replacement of the chunk (its bytes from two chunks) is
     * refused as STALE, which the client retries.
     */
    private Promise<Long> loadChunk(OpenFile f, FileReader reader, int index, byte[] into, int length) {
        if (length == 0) return Promise.completed(WriteLease.NOTHING_READ);
        long start = (long) index * f.chunkSize();
        return reader.chunkId(index).flatMap(before -> load(reader, f.inode, start, into, 0, length).flatMap(v -> reader.chunkId(index)).map(after -> {
            if (!after.equals(before)) {
                throw new CairnException(Status.STALE, "chunk " + index + " of inode " + f.inode + " was replaced while it was read");
            }
            return before;
        }));
    }

    private Promise<Void> load(FileReader reader, long inode, long start, byte[] into, int at, int length) {
        if (at >= length) return Promise.completed(null);
        return reader.read(start + at, length - at).flatMap(b -> {
            if (b.length == 0) return Promise.failed(new CairnException(Status.IO, "short read of inode " + inode + " at " + (start + at)));
            System.arraycopy(b, 0, into, at, b.length);
            return load(reader, inode, start, into, at + b.length, length);
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
            img.dirty = true;
            account(f, img);
            return apply(f, offset, data, from + n);
        });
    }

    private void account(OpenFile f, OpenFile.Image img) {
        int now = img.dirty ? img.length : 0;
        int delta = now - img.counted;
        img.counted = now;
        f.imageBytes += delta;
        imageBytes += delta;
        assert f.imageBytes >= 0 && imageBytes >= 0 : "image bytes " + f.imageBytes + " / " + imageBytes;
    }

    /** The chunk holding the old end is filled with zeros up to the new end or its own end. */
    private Promise<Void> extendImages(OpenFile f, long newSize) {
        int cs = f.chunkSize();
        long oldSize = f.size;
        if (oldSize % cs != 0) {
            int index = (int) (oldSize / cs);
            long chunkEnd = (long) (index + 1) * cs;
            int upTo = (int) (Math.min(newSize, chunkEnd) - (long) index * cs);
            return image(f, index).map(img -> {
                if (img.length < upTo) {
                    img.ensure(upTo, cs);
                    Arrays.fill(img.bytes, img.length, upTo, (byte) 0);
                    img.length = upTo;
                    img.dirty = true;
                    account(f, img);
                }
                f.size = newSize;
                return null;
            });
        }
        f.size = newSize;
        return Promise.completed(null);
    }

    /**
     * Uploads the dirty chunks before {@code current} that are full (a sequential writer has finished them); then
     * commits the length up to the first chunk still dirty, and drops the images it covers. An image uploaded and
     * not yet covered by a commit is kept: a later WRITE to its chunk must start from it (the cluster's reader
     * sees only committed bytes), and an upload of the chunk again must hold every WRITE so far.
     */
    private Promise<Void> flushFull(OpenFile f, int current) {
        for (Map.Entry<Integer, OpenFile.Image> e : f.images.entrySet()) {
            if (e.getKey() < current && e.getValue().dirty && e.getValue().length == f.chunkSize()) {
                return upload(f, e.getKey(), e.getValue()).flatMap(v -> flushFull(f, current));
            }
        }
        long safe = f.size;
        for (Map.Entry<Integer, OpenFile.Image> e : f.images.entrySet()) {
            if (e.getValue().dirty) {
                safe = Math.min(safe, (long) e.getKey() * f.chunkSize());
                break;
            }
        }
        if (safe <= f.base.size()) return Promise.completed(null);
        long upTo = safe;
        return commitLength(f, upTo).map(v -> {
            while (!f.images.isEmpty() && (long) (f.images.firstKey() + 1) * f.chunkSize() <= upTo) drop(f, f.images.firstKey());
            return null;
        });
    }

    /** Uploads every dirty chunk, then commits the length; the images are dropped (they were only the write's). */
    private Promise<Void> flushImages(OpenFile f) {
        if (f.lost != null) return owedLoss(f);
        for (Map.Entry<Integer, OpenFile.Image> e : f.images.entrySet()) {
            if (e.getValue().dirty) return upload(f, e.getKey(), e.getValue()).flatMap(v -> flushImages(f));
        }
        long changes = f.unstable;
        if (f.size == f.base.size() && changes == 0) {
            while (!f.images.isEmpty()) drop(f, f.images.firstKey());
            return Promise.completed(null);
        }
        return commitLength(f, f.size).map(v -> {
            f.unstable -= changes;
            while (!f.images.isEmpty()) drop(f, f.images.firstKey());
            return null;
        });
    }

    private void drop(OpenFile f, int index) {
        OpenFile.Image img = f.images.remove(index);
        if (img == null) return;
        img.dirty = false;
        account(f, img);
    }

    private Promise<Void> upload(OpenFile f, int index, OpenFile.Image img) {
        // the chunk as far as the file reaches into it: past what the image holds, zeros (a hole the file grew over,
        // never written). An image shorter than that, uploaded as it is, left the chunk short of the committed size
        // and unreadable (sim seed 5001: writes at the head of a chunk the file had already grown past)
        long start = (long) index * f.chunkSize();
        int reach = (int) Math.min(f.chunkSize(), Math.max(0, f.size - start));
        byte[] bytes = Arrays.copyOf(img.bytes, Math.max(img.length, reach));
        if (bytes.length > img.length) Arrays.fill(bytes, img.length, bytes.length, (byte) 0);
        int uploaded = img.length;
        return client.writeChunk(f.base, index, bytes, f.versions, img.base).<Void>then((v, e) -> {
            if (e != null && CairnException.statusOf(e) == Status.STALE) {
                // another writer replaced the chunk since the image was read: the image can never be uploaded
                CairnException lost = new CairnException(Status.IO, CairnException.detailOf(e));
                loseImages(f, lost);
                return Promise.failed(lost);
            }
            if (e != null) return Promise.failed(e);
            // a WRITE may have grown the image meanwhile: then it stays dirty for the next flush
            if (img.length == uploaded) img.dirty = false;
            account(f, img);
            return Promise.completed(null);
        });
    }

    private Promise<FileAttr> resizeImages(OpenFile f, AttrChange change) {
        long newSize = change.size();
        long oldSize = f.size;
        if (newSize > oldSize) {
            // as for a replicated file: the old last chunk's zeros first (the chunk written afresh and committed), then
            // the size, which drops any chunk wholly past the old end
            long zerosTo = Math.min(newSize, (oldSize / f.chunkSize() + 1) * f.chunkSize());
            return flushImages(f)
                    .flatMap(v -> oldSize % f.chunkSize() == 0 ? Promise.<Void>completed(null) : extendImages(f, zerosTo).flatMap(x -> flushImages(f)))
                    .flatMap(v -> client.setAttr(f.inode, change.fromSize(f.size))).map(a -> {
                f.size = newSize;
                f.rebase(a);
                return f.attr();
            });
        }
        return flushImages(f).flatMap(v -> client.setAttr(f.inode, change)).flatMap(a -> {
            f.size = newSize;
            f.rebase(a);
            int cs = f.chunkSize();
            if (newSize % cs == 0) return Promise.completed(f.attr());
            // shrink into a chunk: its bytes past the new end become zeros, so growing the file again shows zeros (and
            // its parity covers them as zeros): the chunk is written afresh and swapped in by a commit before the
            // truncate is answered, as a replicated file's zeros are synced and committed. At the size the file has
            // already too: the same SETATTR sent again after the first one failed past the master's size change (sim
            // seed 89: its rewrite had failed, the retry found nothing to shrink, and the chunk kept the bytes of
            // WRITEs the truncate had cut off, under parity that covered them)
            int index = (int) (newSize / cs);
            int keep = (int) (newSize - (long) index * cs);
            int upTo = (int) (Math.min(oldSize, (long) (index + 1) * cs) - (long) index * cs);
            byte[] img = new byte[upTo];
            FileAttr shortFile = a;
            return loadChunk(f, client.reader(a), index, img, keep).flatMap(base -> client.writeChunk(shortFile, index, img, f.versions, base))
                    .flatMap(v -> commitLength(f, newSize)).map(v -> f.attr());
        });
    }
}
