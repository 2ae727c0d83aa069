package dev.cairn.client;

import dev.cairn.core.async.Promise;
import dev.cairn.core.ec.Stripes;
import dev.cairn.core.proto.CairnException;
import dev.cairn.core.proto.ChunkProtocol.ChainReply;
import dev.cairn.core.proto.MasterProtocol.LeaseReply;
import dev.cairn.core.proto.Status;
import dev.cairn.core.proto.StorageClass;
import dev.cairn.core.proto.Types.FileAttr;
import dev.cairn.core.proto.Types.ServerRef;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * Writes one chunk's bytes and makes them durable: a lease from the master, then the bytes pipelined in
 * pieces with a bounded window, then a sync of every copy. A replicated chunk goes down its chain (each
 * server forwards to the next); an erasure-coded chunk is encoded here into k+m parts, part i sent to
 * server i, a range of stripes at a time: the range's piece of every part in turn (every server busy at
 * once), each range coded as the window reaches it, so an upload holds the chunk and its window, never
 * the parts whole (they were 1 + m/k times the chunk). Any failure starts a new attempt with a new lease
 * (new version) that leaves out the server that failed; everything is sent (and coded) again.
 */
final class ChunkUpload {
    static final int MAX_ATTEMPTS = 8;
    /** Pieces in flight at once. */
    static final int WINDOW = 8;
    static final long BACKOFF_NANOS = 200_000_000L;
    static final long MAX_BACKOFF_NANOS = 5_000_000_000L;
    /** Bytes per cell of an erasure-coded stripe (see {@link Stripes}). */
    static final int EC_CELL = Stripes.CELL;

    private final CairnClient client;
    private final FileAttr file;
    private final int index;
    private final byte[] data;
    private final int pieceSize;
    private final List<String> exclude = new ArrayList<>();
    private final Promise<Void> done = new Promise<>();
    private int attempt;

    /** The writer's versions to commit: the upload adds its lease's once durable. */
    private final Uncommitted versions;

    /** The chunk the data was read from, for a rewrite ({@link dev.cairn.core.proto.MasterProtocol.WriteLease#basedOn}). */
    private final long basedOn;

    ChunkUpload(CairnClient client, FileAttr file, int index, byte[] data, int pieceSize, Uncommitted versions) {
        this(client, file, index, data, pieceSize, versions, dev.cairn.core.proto.MasterProtocol.WriteLease.ANY_BASE);
    }

    ChunkUpload(CairnClient client, FileAttr file, int index, byte[] data, int pieceSize, Uncommitted versions, long basedOn) {
        this.basedOn = basedOn;
        this.versions = versions;
        this.client = client;
        this.file = file;
        this.index = index;
        this.data = data;
        this.pieceSize = pieceSize;
    }

    Promise<Void> run() {
        tryOnce();
        return done;
    }

    private void tryOnce() {
        attempt++;
        client.lease(file.inode(), index, List.copyOf(exclude), basedOn).onComplete((lease, e) -> {
            if (e != null && basedOn != dev.cairn.core.proto.MasterProtocol.WriteLease.ANY_BASE && CairnException.statusOf(e) == Status.STALE) {
                done.fail(e); // the chunk the data was read from was replaced: no retry makes this upload right
                return;
            }
            if (e != null) {
                retry(CairnException.statusOf(e), "", CairnException.detailOf(e));
                return;
            }
            try {
                new Attempt(lease, chains(lease)).start();
            } catch (RuntimeException | Error t) {
                // a callback's exception would unwind into whoever completed the lease (the transport), leaving this
                // upload, and the WRITE waiting on it, unanswered for good (an erasure-coded upload out of memory did)
                done.fail(dev.cairn.core.async.Unexpected.report(t));
            }
        });
    }

    /** Where one attempt sends: one chain for a replicated chunk, k+m single-server chains for an EC chunk (part i to the i-th). */
    private List<List<ServerRef>> chains(LeaseReply lease) {
        StorageClass cls = lease.storageClass();
        if (!cls.isEc()) return List.of(lease.chain());
        if (lease.chain().size() != cls.parts()) {
            throw new CairnException(Status.BAD_REQUEST, "lease for " + cls + " has " + lease.chain().size() + " servers");
        }
        List<List<ServerRef>> out = new ArrayList<>();
        for (ServerRef s : lease.chain()) out.add(List.of(s));
        return out;
    }

    private void retry(Status status, String failedServer, String why) {
        if (!failedServer.isEmpty() && !exclude.contains(failedServer)) exclude.add(failedServer);
        boolean retryable = status.retryable() || status == Status.NO_SPACE;
        if (!retryable || attempt >= MAX_ATTEMPTS) {
            done.fail(new CairnException(status, "chunk " + index + " of inode " + file.inode() + " not written after "
                    + attempt + " attempts: " + why));
            return;
        }
        client.log().debug("chunk {} of inode {}: attempt {} failed ({} {}); retrying", index, file.inode(), attempt, status, why);
        long backoff = Math.min(MAX_BACKOFF_NANOS, BACKOFF_NANOS << Math.min(attempt - 1, 5));
        client.env().scheduler().schedule(backoff, this::tryOnce);
    }

    /** Bytes for one chain (its head forwards them to the rest) at {@code offset} of its copy. */
    private record Piece(List<ServerRef> chain, int offset, byte[] bytes) {}

    /** One lease's worth of sending. */
    private final class Attempt {
        private final LeaseReply lease;
        private final List<List<ServerRef>> chains;
        /** Replicated: where the next piece starts. */
        private int nextOffset;
        /** Erasure-coded: the range of stripes coded last, its parts' pieces, and the next part to send of it. */
        private long range = -1;
        private byte[][] coded;
        private int part;
        private final int stripesPerPiece = Math.max(1, pieceSize / EC_CELL);
        private boolean allSent;
        private int inFlight;
        private int syncsLeft;
        private boolean over;

        Attempt(LeaseReply lease, List<List<ServerRef>> chains) {
            this.lease = lease;
            this.chains = chains;
        }

        void start() { pump(); }

        private boolean ec() { return lease.storageClass().isEc(); }

        /** How long chain {@code i}'s copy is once everything is sent. */
        private long length(int i) {
            return ec() ? Stripes.partLength(data.length, lease.storageClass().k(), i) : data.length;
        }

        /** The next piece to send, null once all are sent. */
        private Piece nextPiece() {
            if (!ec()) {
                if (nextOffset >= data.length) return null;
                int off = nextOffset;
                int len = Math.min(pieceSize, data.length - off);
                nextOffset += len;
                // a chunk sent in one piece goes as it is: its bytes are never changed (the writer hands over
                // a chunk it no longer writes to), so the message may carry the array itself
                return new Piece(chains.get(0), off, off == 0 && len == data.length ? data : Arrays.copyOfRange(data, off, off + len));
            }
            while (true) {
                if (coded == null || part == coded.length) {
                    long first = (range + 1) * stripesPerPiece;
                    if (first * EC_CELL >= length(0)) return null; // part 0 is the longest
                    range++;
                    coded = Stripes.encode(client.codec(lease.storageClass()), data, first, stripesPerPiece);
                    part = 0;
                }
                int p = part++;
                byte[] b = coded[p];
                coded[p] = null; // the message holds it now
                if (b.length > 0) return new Piece(chains.get(p), (int) (range * stripesPerPiece * EC_CELL), b);
            }
        }

        private void pump() {
            while (!over && !allSent && inFlight < WINDOW) {
                Piece piece = nextPiece();
                if (piece == null) {
                    allSent = true;
                    break;
                }
                inFlight++;
                client.writeData(piece.chain, lease.chunkId(), lease.version(), piece.offset, piece.bytes).onSuccess(this::onPiece);
            }
            if (!over && allSent && inFlight == 0) sync();
        }

        private void onPiece(ChainReply r) {
            inFlight--;
            if (over) return;
            if (r.status() != Status.OK) { fail(r); return; }
            pump();
        }

        private void sync() {
            over = true; // no more pieces; the syncs decide
            syncsLeft = chains.size();
            boolean[] failed = {false};
            for (int i = 0; i < chains.size(); i++) {
                client.syncChunk(chains.get(i), lease.chunkId(), lease.version(), length(i)).onSuccess(r -> {
                    if (failed[0]) return;
                    if (r.status() != Status.OK) {
                        failed[0] = true;
                        retry(r.status(), r.failedServer(), r.detail());
                        return;
                    }
                    if (--syncsLeft == 0) {
                        versions.written(lease.chunkId(), (long) index * file.chunkSize(), lease.version());
                        done.complete(null);
                    }
                });
            }
        }

        private void fail(ChainReply r) {
            over = true;
            retry(r.status(), r.failedServer(), r.detail());
        }
    }
}
