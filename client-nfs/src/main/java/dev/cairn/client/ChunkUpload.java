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
 * server i. Any failure starts a new attempt with a new lease (new version) that leaves out the server
 * that failed; everything is sent again.
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
    private byte[][] ecParts;
    private StorageClass ecClass;
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
                new Attempt(lease, targets(lease)).start();
            } catch (RuntimeException | Error t) {
                // a callback's exception would unwind into whoever completed the lease (the transport), leaving this
                // upload, and the WRITE waiting on it, unanswered for good (an erasure-coded upload out of memory did)
                done.fail(dev.cairn.core.async.Unexpected.report(t));
            }
        });
    }

    /** What to send where: one chain for a replicated chunk, k+m single-server targets for an EC chunk. */
    private List<Target> targets(LeaseReply lease) {
        StorageClass cls = lease.storageClass();
        if (!cls.isEc()) return List.of(new Target(lease.chain(), data));
        if (lease.chain().size() != cls.parts()) {
            throw new CairnException(Status.BAD_REQUEST, "lease for " + cls + " has " + lease.chain().size() + " servers");
        }
        if (ecParts == null || !cls.equals(ecClass)) {
            ecParts = Stripes.encode(client.codec(cls), data);
            ecClass = cls;
        }
        List<Target> out = new ArrayList<>();
        for (int p = 0; p < ecParts.length; p++) out.add(new Target(List.of(lease.chain().get(p)), ecParts[p]));
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

    /** Bytes for one chain (its head forwards them to the rest). */
    private record Target(List<ServerRef> chain, byte[] bytes) {}

    /** One lease's worth of sending. */
    private final class Attempt {
        private final LeaseReply lease;
        private final List<Target> targets;
        private int target;
        private int nextOffset;
        private int inFlight;
        private int syncsLeft;
        private boolean over;

        Attempt(LeaseReply lease, List<Target> targets) {
            this.lease = lease;
            this.targets = targets;
        }

        void start() { pump(); }

        private boolean allSent() { return target >= targets.size(); }

        private void pump() {
            while (!over && inFlight < WINDOW && !allSent()) {
                Target t = targets.get(target);
                if (nextOffset >= t.bytes.length) {
                    target++;
                    nextOffset = 0;
                    continue;
                }
                int off = nextOffset;
                int len = Math.min(pieceSize, t.bytes.length - off);
                nextOffset += len;
                inFlight++;
                // a chunk sent in one piece goes as it is: its bytes are never changed (the writer hands over
                // a chunk it no longer writes to), so the message may carry the array itself
                byte[] piece = off == 0 && len == t.bytes.length ? t.bytes : Arrays.copyOfRange(t.bytes, off, off + len);
                client.writeData(t.chain, lease.chunkId(), lease.version(), off, piece)
                        .onSuccess(this::onPiece);
            }
            if (!over && allSent() && inFlight == 0) sync();
        }

        private void onPiece(ChainReply r) {
            inFlight--;
            if (over) return;
            if (r.status() != Status.OK) { fail(r); return; }
            pump();
        }

        private void sync() {
            over = true; // no more pieces; the syncs decide
            syncsLeft = targets.size();
            boolean[] failed = {false};
            for (Target t : targets) {
                client.syncChunk(t.chain, lease.chunkId(), lease.version(), t.bytes.length).onSuccess(r -> {
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
