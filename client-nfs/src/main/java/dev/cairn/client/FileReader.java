package dev.cairn.client;

import dev.cairn.core.async.Promise;
import dev.cairn.core.proto.CairnException;
import dev.cairn.core.proto.Codec;
import dev.cairn.core.proto.MasterProtocol.ChunksReply;
import dev.cairn.core.proto.Status;
import dev.cairn.core.proto.Types.ChunkLocation;
import dev.cairn.core.proto.Types.FileAttr;
import dev.cairn.core.proto.Types.ServerRef;
import java.util.Arrays;
import java.util.List;
import java.util.TreeMap;

/**
 * Reads a file by ranges. Chunk locations come from the master in batches and are cached; each piece is
 * read from one copy (the chunkserver verifies checksums) and, if that copy fails, from the next. When
 * every copy fails the locations are fetched again once before giving up.
 */
public final class FileReader {
    /** Chunk locations fetched per master call. */
    static final int LOCATION_BATCH = 64;
    /** Chunk id standing for a chunk never written (chunk ids start at 1). */
    private static final long HOLE = 0;

    private final CairnClient client;
    private final FileAttr file;
    private final TreeMap<Integer, ChunkLocation> cache = new TreeMap<>();
    private long size;

    FileReader(CairnClient client, FileAttr file) {
        this.client = client;
        this.file = file;
        this.size = file.size();
    }

    public long size() { return size; }

    /** Reads up to {@code length} bytes (at most one chunk's worth and {@link Codec#MAX_DATA_BYTES}); empty at EOF. */
    public Promise<byte[]> read(long offset, int length) {
        if (offset < 0 || length < 0) return Promise.failed(new CairnException(Status.BAD_REQUEST, "negative offset or length"));
        if (offset >= size || length == 0) return Promise.completed(new byte[0]);
        int index = (int) (offset / file.chunkSize());
        long inChunk = offset - (long) index * file.chunkSize();
        int n = (int) Math.min(Math.min(length, Codec.MAX_DATA_BYTES), Math.min(size - offset, file.chunkSize() - inChunk));
        return location(index, false).flatMap(loc -> loc.chunkId() == HOLE
                ? Promise.completed(new byte[n])
                : readFrom(loc, 0, inChunk, n, true));
    }

    /** Reads the whole file (small files: tests and the simulator). */
    public Promise<byte[]> readAll() {
        if (size > Integer.MAX_VALUE - 16) return Promise.failed(new CairnException(Status.BAD_REQUEST, "file too large for readAll"));
        byte[] out = new byte[(int) size];
        return readInto(out, 0).map(v -> out);
    }

    private Promise<Void> readInto(byte[] out, long offset) {
        if (offset >= out.length) return Promise.completed(null);
        return read(offset, out.length - (int) offset).flatMap(b -> {
            if (b.length == 0) throw new CairnException(Status.IO, "short read at " + offset);
            System.arraycopy(b, 0, out, (int) offset, b.length);
            return readInto(out, offset + b.length);
        });
    }

    private Promise<byte[]> readFrom(ChunkLocation loc, int replica, long inChunk, int n, boolean mayRefresh) {
        if (replica >= loc.servers().size()) {
            if (!mayRefresh) {
                return Promise.failed(new CairnException(Status.UNAVAILABLE, "no readable copy of chunk " + loc.chunkId()
                        + " (index " + loc.index() + ", " + loc.servers().size() + " copies known)"));
            }
            return location(loc.index(), true).flatMap(fresh -> readFrom(fresh, 0, inChunk, n, false));
        }
        ServerRef s = loc.servers().get(replica);
        return client.readData(s, loc.chunkId(), loc.version(), inChunk, n).then((r, e) -> {
            if (e != null || r.status() != Status.OK) return readFrom(loc, replica + 1, inChunk, n, mayRefresh);
            // a copy shorter than the file (a hole never written) reads as zeros
            return Promise.completed(r.data().length == n ? r.data() : Arrays.copyOf(r.data(), n));
        });
    }

    private Promise<ChunkLocation> location(int index, boolean refresh) {
        ChunkLocation cached = refresh ? null : cache.get(index);
        if (cached != null) return Promise.completed(cached);
        return client.chunks(file.inode(), index, LOCATION_BATCH).map(r -> {
            absorb(r);
            ChunkLocation loc = cache.get(index);
            if (loc == null) {
                // never written: a hole
                return new ChunkLocation(index, HOLE, 0, List.of());
            }
            return loc;
        });
    }

    private void absorb(ChunksReply r) {
        size = r.attr().size();
        for (ChunkLocation l : r.chunks()) cache.put(l.index(), l);
        while (cache.size() > 4 * LOCATION_BATCH) cache.pollFirstEntry();
    }
}
