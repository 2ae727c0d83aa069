package dev.cairn.client;

import dev.cairn.core.async.Promise;
import dev.cairn.core.proto.CairnException;
import dev.cairn.core.proto.ChunkProtocol.ChainReply;
import dev.cairn.core.proto.MasterProtocol.LeaseReply;
import dev.cairn.core.proto.Status;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * Writes one chunk's bytes to a replica chain and syncs them: lease from the master, pieces pipelined
 * down the chain with a bounded window, then a chain-wide sync. Any failure starts a new attempt with a
 * new lease (new version) that leaves out the server that failed; the whole chunk is sent again.
 */
final class ChunkUpload {
    static final int MAX_ATTEMPTS = 8;
    /** Pieces in flight on the chain at once. */
    static final int WINDOW = 8;
    static final long BACKOFF_NANOS = 200_000_000L;
    static final long MAX_BACKOFF_NANOS = 5_000_000_000L;

    private final CairnClient client;
    private final long inode;
    private final int index;
    private final byte[] data;
    private final int pieceSize;
    private final List<String> exclude = new ArrayList<>();
    private final Promise<Void> done = new Promise<>();
    private int attempt;

    ChunkUpload(CairnClient client, long inode, int index, byte[] data, int pieceSize) {
        this.client = client;
        this.inode = inode;
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
        client.lease(inode, index, List.copyOf(exclude)).onComplete((lease, e) -> {
            if (e != null) {
                retry(CairnException.statusOf(e), "", e.getMessage());
                return;
            }
            new Attempt(lease).start();
        });
    }

    private void retry(Status status, String failedServer, String why) {
        if (!failedServer.isEmpty() && !exclude.contains(failedServer)) exclude.add(failedServer);
        boolean retryable = status.retryable() || status == Status.NO_SPACE;
        if (!retryable || attempt >= MAX_ATTEMPTS) {
            done.fail(new CairnException(status, "chunk " + index + " of inode " + inode + " not written after "
                    + attempt + " attempts: " + why));
            return;
        }
        client.log().debug("chunk {} of inode {}: attempt {} failed ({} {}); retrying", index, inode, attempt, status, why);
        long backoff = Math.min(MAX_BACKOFF_NANOS, BACKOFF_NANOS << Math.min(attempt - 1, 5));
        client.env().scheduler().schedule(backoff, this::tryOnce);
    }

    /** One lease's worth of sending. */
    private final class Attempt {
        private final LeaseReply lease;
        private int nextOffset;
        private int inFlight;
        private boolean over;

        Attempt(LeaseReply lease) { this.lease = lease; }

        void start() {
            if (data.length == 0) { sync(); return; }
            pump();
        }

        private void pump() {
            while (!over && inFlight < WINDOW && nextOffset < data.length) {
                int off = nextOffset;
                int len = Math.min(pieceSize, data.length - off);
                nextOffset += len;
                inFlight++;
                client.writeData(lease.chain(), lease.chunkId(), lease.version(), off, Arrays.copyOfRange(data, off, off + len))
                        .onSuccess(this::onPiece);
            }
        }

        private void onPiece(ChainReply r) {
            inFlight--;
            if (over) return;
            if (r.status() != Status.OK) { fail(r); return; }
            if (nextOffset < data.length) pump();
            else if (inFlight == 0) sync();
        }

        private void sync() {
            client.syncChunk(lease.chain(), lease.chunkId(), lease.version()).onSuccess(r -> {
                if (r.status() != Status.OK) { fail(r); return; }
                over = true;
                done.complete(null);
            });
        }

        private void fail(ChainReply r) {
            over = true;
            retry(r.status(), r.failedServer(), r.detail());
        }
    }
}
