package dev.cairn.client;

import dev.cairn.core.async.Promise;
import dev.cairn.core.proto.CairnException;
import dev.cairn.core.proto.Codec;
import dev.cairn.core.proto.MasterProtocol.ChunksReply;
import dev.cairn.core.proto.Status;
import dev.cairn.core.ec.ErasureCodec;
import dev.cairn.core.ec.Stripes;
import dev.cairn.core.proto.StorageClass;
import dev.cairn.core.proto.Types.ChunkLocation;
import dev.cairn.core.proto.Types.FileAttr;
import dev.cairn.core.proto.Types.ServerRef;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.TreeMap;

/**
 * Reads a file by ranges. Chunk locations come from the master in batches and are cached; each piece is
 * read from one copy (the chunkserver verifies checksums), the copies on healthy disks taking turns chunk by chunk
 * ({@link #copyToAsk}; the master lists copies on slow disks last and says how many come before them),
 * and, if that copy fails or has not answered within {@link #HEDGE_NANOS}, from the next as well (a
 * hedged read: a stalled disk delays a read by the hedge delay, not by the call timeout). When every copy
 * fails the locations are fetched again once before giving up. An erasure-coded chunk is read from the
 * data part holding the cell; if that part is missing, short, corrupt or slow to answer, the stripe's
 * cells are read from any k other parts and decoded (a degraded read).
 */
public final class FileReader {
    /** How long a read waits on one copy before asking the next one too. */
    static final long HEDGE_NANOS = 500_000_000L;
    /** Chunk locations fetched per master call. */
    static final int LOCATION_BATCH = 64;
    /** Chunk id standing for a chunk never written (chunk ids start at 1). */
    private static final long HOLE = 0;

    private final CairnClient client;
    private final FileAttr file;
    private final TreeMap<Integer, ChunkLocation> cache = new TreeMap<>();
    private long size;
    /** The file's class as of the last answer from the master (an archive rule may change it under a reader). */
    private StorageClass cls;

    FileReader(CairnClient client, FileAttr file) {
        this.client = client;
        this.file = file;
        this.size = file.size();
        this.cls = file.storageClass();
    }

    public long size() { return size; }

    /** Reads up to {@code length} bytes (at most one chunk's worth and {@link Codec#MAX_DATA_BYTES}); empty at EOF. */
    public Promise<byte[]> read(long offset, int length) { return readPiece(offset, length).map(Piece::data); }

    /** What {@link #readPiece} read: the bytes, and whether they are a hole (a chunk never written: zeros, no read). */
    public record Piece(byte[] data, boolean hole) {}

    /** As {@link #read}, saying whether the bytes came from a hole. */
    public Promise<Piece> readPiece(long offset, int length) {
        StorageClass before = cls;
        return readOnce(offset, length).then((piece, e) -> {
            if (e == null) return Promise.completed(piece);
            // the file was rewritten in another class while we read it: once more, with the new layout
            return cls.equals(before) ? Promise.failed(e) : readOnce(offset, length);
        });
    }

    private Promise<Piece> readOnce(long offset, int length) {
        if (offset < 0 || length < 0) return Promise.failed(new CairnException(Status.BAD_REQUEST, "negative offset or length"));
        if (offset >= size || length == 0) return Promise.completed(new Piece(new byte[0], false));
        int index = (int) (offset / file.chunkSize());
        long inChunk = offset - (long) index * file.chunkSize();
        StorageClass cls = this.cls;
        int whole = (int) Math.min(Math.min(length, Codec.MAX_DATA_BYTES), Math.min(size - offset, file.chunkSize() - inChunk));
        // an erasure-coded read stays within one cell
        int n = cls.isEc() ? (int) Math.min(whole, ChunkUpload.EC_CELL - inChunk % ChunkUpload.EC_CELL) : whole;
        return location(index, false).flatMap(loc -> {
            if (loc.chunkId() == HOLE) return Promise.completed(new Piece(new byte[n], true));
            return (cls.isEc() ? readCell(loc, cls, inChunk, n, true) : readFrom(loc, inChunk, n, true)).map(b -> new Piece(b, false));
        });
    }

    /**
     * How many bytes a {@link #read} at {@code offset} returns at most, as this reader knows the file now: up to a
     * piece ({@link Codec#MAX_DATA_BYTES}), never past the chunk or the end, and within one cell of an
     * erasure-coded file. A reader that keeps several reads in flight cuts its requests here, so that none comes
     * back short; one may still (the file shrank, or moved to another class meanwhile) and is then read on from
     * where it stopped.
     */
    public int pieceAt(long offset) {
        if (offset < 0 || offset >= size) return 0;
        long inChunk = offset % file.chunkSize();
        long n = Math.min(Math.min(Codec.MAX_DATA_BYTES, size - offset), file.chunkSize() - inChunk);
        if (cls.isEc()) n = Math.min(n, ChunkUpload.EC_CELL - inChunk % ChunkUpload.EC_CELL);
        return (int) n;
    }

    /** Reads the whole file (small files: tests and the simulator). */
    public Promise<byte[]> readAll() {
        if (size > Integer.MAX_VALUE - 16) return Promise.failed(new CairnException(Status.BAD_REQUEST, "file too large for readAll"));
        if (size == 0) return Promise.completed(new byte[0]);
        // the size as the read starts: a location refresh on the way may show the file shorter or longer since
        // (a concurrent truncate or rewrite; sim seed 474 with three masters: a buffer sized by the new length
        // took the first piece read at the old one)
        int total = (int) size;
        // the first read returns the whole file when it fits in one piece (most files): no second copy
        return read(0, total).flatMap(first -> {
            if (first.length == total) return Promise.completed(first);
            if (first.length == 0) throw new CairnException(Status.IO, "short read at 0");
            byte[] out = new byte[total];
            System.arraycopy(first, 0, out, 0, first.length);
            return readInto(out, first.length).map(v -> out);
        });
    }

    private Promise<Void> readInto(byte[] out, long offset) {
        if (offset >= out.length) return Promise.completed(null);
        return read(offset, out.length - (int) offset).flatMap(b -> {
            if (b.length == 0) throw new CairnException(Status.IO, "short read at " + offset);
            System.arraycopy(b, 0, out, (int) offset, b.length);
            return readInto(out, offset + b.length);
        });
    }

    private Promise<byte[]> readFrom(ChunkLocation loc, long inChunk, int n, boolean mayRefresh) {
        Promise<byte[]> read = loc.servers().isEmpty()
                ? Promise.failed(new CairnException(Status.UNAVAILABLE, "no live copy"))
                : HedgedRead.run(client.scheduler(), HEDGE_NANOS, loc.servers().size(), i -> {
                    ServerRef s = loc.servers().get(copyToAsk(loc, i));
                    return client.readData(s, loc.chunkId(), loc.version(), inChunk, n).map(r -> {
                        // a copy shorter than the committed data missed writes: never fill it in, read another
                        if (r.status() != Status.OK || r.data().length != n) throw new CairnException(Status.IO, s.id() + ": " + r.status() + " " + r.detail());
                        return r.data();
                    });
                });
        return read.then((bytes, e) -> {
            if (e == null) return Promise.completed(bytes);
            if (mayRefresh) {
                StorageClass layout = cls;
                return location(loc.index(), true).flatMap(fresh -> sameLayout(layout).flatMap(v -> readFrom(fresh, inChunk, n, false)));
            }
            return Promise.failed(new CairnException(Status.UNAVAILABLE, "no readable copy of chunk " + loc.chunkId()
                    + " (index " + loc.index() + ", " + loc.servers().size() + " copies known): " + e.getMessage()));
        });
    }

    /**
     * Which copy a read of chunk {@code loc} asks {@code attempt}-th: the copies on healthy disks take turns chunk by
     * chunk, so a file's reads load every copy rather than the one the master lists first, while the reads of one
     * chunk stay on one copy (its page cache and the disk's readahead; turns every MiB read 10-30 % slower on one
     * machine, docs/benchmarks.md); copies on slow disks stay last, asked only when the others fail or stall.
     */
    static int copyToAsk(ChunkLocation loc, int attempt) {
        int fast = loc.fast();
        if (attempt >= fast) return attempt;
        return (attempt + loc.index()) % fast;
    }

    private Promise<byte[]> readCell(ChunkLocation loc, StorageClass cls, long inChunk, int n, boolean mayRefresh) {
        int cell = ChunkUpload.EC_CELL;
        long stripeBytes = (long) cls.k() * cell;
        long stripe = inChunk / stripeBytes;
        int dataPart = (int) (inChunk % stripeBytes / cell);
        int within = (int) (inChunk % cell);
        ServerRef holder = holderOf(loc, dataPart);
        // the direct read first; the degraded read if it fails or is slow to answer
        return HedgedRead.run(client.scheduler(), HEDGE_NANOS, 2, i -> {
            if (i == 1) return degraded(loc, cls, stripe, dataPart, within, n, mayRefresh);
            if (holder == null) return Promise.failed(new CairnException(Status.UNAVAILABLE, "no holder of part " + dataPart));
            return client.readData(holder, loc.chunkId(), loc.version(), dataPart, stripe * cell + within, n).map(r -> {
                if (r.status() != Status.OK || r.data().length != n) throw new CairnException(Status.IO, "part " + dataPart + " unreadable");
                return r.data();
            });
        });
    }

    /** Reads stripe {@code stripe} from any k parts other than the lost one and decodes the lost cell. */
    private Promise<byte[]> degraded(ChunkLocation loc, StorageClass cls, long stripe, int lost, int within, int n, boolean mayRefresh) {
        int k = cls.k(), total = cls.parts(), cell = ChunkUpload.EC_CELL;
        ErasureCodec codec = client.codec(cls);
        boolean direct = codec.engine().needsDirectBuffers();
        ByteBuffer[] parts = new ByteBuffer[total];
        for (int p = 0; p < total; p++) parts[p] = direct ? ByteBuffer.allocateDirect(cell) : ByteBuffer.allocate(cell);
        boolean[] present = new boolean[total];
        List<Integer> candidates = new ArrayList<>();
        for (int p = 0; p < total; p++) if (p != lost && holderOf(loc, p) != null) candidates.add(p);
        // how much of this stripe each part must hold follows from the chunk's bytes (the last stripe is stored trimmed)
        long chunkBytes = Math.max(0, Math.min(file.chunkSize(), size - (long) loc.index() * file.chunkSize()));
        int[] holds = new int[total];
        for (int p = 0; p < total; p++) holds[p] = Stripes.cellLength(chunkBytes, k, p, stripe);
        return gather(loc, candidates, 0, stripe * cell, holds, parts, present, 0, k).then((have, e) -> {
            if (have < k) {
                if (mayRefresh) {
                    return location(loc.index(), true).flatMap(fresh -> sameLayout(cls)
                            .flatMap(v -> readCell(fresh, cls, stripe * k * cell + (long) lost * cell + within, n, false)));
                }
                return Promise.failed(new CairnException(Status.UNAVAILABLE, "only " + have + " of the " + total + " parts of chunk "
                        + loc.chunkId() + " are readable; " + cls + " needs " + k));
            }
            codec.decode(parts, present);
            byte[] out = new byte[n];
            parts[lost].get(within, out);
            return Promise.completed(out);
        });
    }

    /**
     * Reads one cell from each candidate part in turn until {@code need} are in; returns how many were. A
     * cell shorter than the part must hold ({@code holds}) missed writes and is not used; what a cell holds
     * past that is of the same coded image (a part written padded), and past what it holds it is zeros.
     */
    private Promise<Integer> gather(ChunkLocation loc, List<Integer> candidates, int i, long partOffset, int[] holds,
                                    ByteBuffer[] parts, boolean[] present, int have, int need) {
        if (have == need || i == candidates.size()) return Promise.completed(have);
        int p = candidates.get(i);
        return client.readData(holderOf(loc, p), loc.chunkId(), loc.version(), p, partOffset, ChunkUpload.EC_CELL).then((r, e) -> {
            boolean ok = e == null && r.status() == Status.OK && r.data().length >= holds[p] && r.data().length <= ChunkUpload.EC_CELL;
            if (ok) {
                parts[p].put(0, r.data());
                present[p] = true;
            }
            return gather(loc, candidates, i + 1, partOffset, holds, parts, present, ok ? have + 1 : have, need);
        });
    }

    /**
     * Fails if the file's class is no longer {@code layout}: bytes at an offset of a chunk in one class
     * are not the same bytes in another, so a read must never mix the two ({@link #read} starts over).
     */
    private Promise<Void> sameLayout(StorageClass layout) {
        return cls.equals(layout) ? Promise.completed(null)
                : Promise.failed(new CairnException(Status.STALE, "the file moved from " + layout + " to " + cls + " during the read"));
    }

    private static ServerRef holderOf(ChunkLocation loc, int part) {
        for (int i = 0; i < loc.servers().size(); i++) if (loc.parts().get(i) == part) return loc.servers().get(i);
        return null;
    }

    /** The id of the chunk at {@code index} as this reader last located it (0: a hole, never written). */
    public Promise<Long> chunkId(int index) { return location(index, false).map(ChunkLocation::chunkId); }

    private Promise<ChunkLocation> location(int index, boolean refresh) {
        ChunkLocation cached = refresh ? null : cache.get(index);
        if (cached != null) return Promise.completed(cached);
        return client.chunks(file.inode(), index, LOCATION_BATCH).map(r -> {
            absorb(r);
            ChunkLocation loc = cache.get(index);
            if (loc == null) {
                // never written: a hole
                return new ChunkLocation(index, HOLE, 0, List.of(), List.of(), 0);
            }
            return loc;
        });
    }

    private void absorb(ChunksReply r) {
        size = r.attr().size();
        if (!r.attr().storageClass().equals(cls)) {
            cache.clear(); // locations of the old chunks mean nothing in the new class
            cls = r.attr().storageClass();
        }
        for (ChunkLocation l : r.chunks()) cache.put(l.index(), l);
        while (cache.size() > 4 * LOCATION_BATCH) cache.pollFirstEntry();
    }
}
