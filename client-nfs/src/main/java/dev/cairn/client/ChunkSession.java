package dev.cairn.client;

import dev.cairn.core.async.Promise;
import dev.cairn.core.proto.CairnException;
import dev.cairn.core.proto.ChunkProtocol.ChainReply;
import dev.cairn.core.proto.MasterProtocol.LeaseReply;
import dev.cairn.core.proto.Status;
import dev.cairn.core.proto.Types.FileAttr;
import dev.cairn.core.proto.Types.ServerRef;
import java.util.ArrayList;
import java.util.List;

/**
 * Writes to one chunk of a replicated file at any offsets, and makes them durable. The first write takes a
 * write lease (a new version; the master fills a fresh copy from a holder when the chain is short); each write
 * goes down the chain at once, a bounded number in flight; {@link #sync()} makes everything written so far
 * durable on every copy of the chain, after which the chunk's version goes with the file's next commit.
 *
 * <p>Writes are kept until the file's length is committed over them ({@link #release}), not merely synced: when a
 * copy fails, or the lease's write window closes, the session takes a new lease (a new version, leaving the
 * failed server out) and sends them all again in their order, and a lease that had to place the chunk afresh
 * (every holder gone) gets fresh copies that lack whatever was synced but not committed before. Copies that
 * took some of the writes end up the same as the others, and a copy that restarted in between, and lost
 * some, is caught by the sync (it counts the writes it took). A write is answered once the
 * whole chain took it, durable or not; a session that cannot get its writes through after
 * {@link #MAX_ATTEMPTS} leases fails, and every write and sync waiting on it with it.
 *
 * <p>A session is for one writer on the client's scheduler; calls may overlap (writes queue behind a sync).
 */
public final class ChunkSession {
    /** Writes in flight down the chain at once. */
    static final int WINDOW = 8;
    static final int MAX_ATTEMPTS = 8;
    static final long BACKOFF_NANOS = 200_000_000L;
    static final long MAX_BACKOFF_NANOS = 5_000_000_000L;
    /**
     * A lease this old is renewed before the next write: the chunkservers' write window is 30 s on their own
     * clocks, and a write arriving after it is refused, which costs a new lease and a resend of every
     * unsynced write anyway.
     */
    static final long LEASE_REFRESH_NANOS = 20_000_000_000L;
    /** Reads of the chunk start at a different copy of the chain every this many bytes. */
    static final long READ_SPREAD_BYTES = 1 << 20;

    /**
     * One write: where in the chunk, the bytes, and who waits for the chain to take it; {@code takenUnder} is the
     * lease generation the chain last took it under (0: not yet).
     */
    private static final class Piece {
        final long offset;
        byte[] data;
        Promise<Void> taken;
        long takenUnder;
        /** Dropped from the session by a commit over it (a reply still on its way changes no count). */
        boolean released;
        /** Counted in {@code retaking}: taken under an earlier lease, not yet again under this one. */
        boolean owed;

        Piece(long offset, byte[] data, Promise<Void> taken) {
            this.offset = offset;
            this.data = data;
            this.taken = taken;
        }

        long end() { return offset + data.length; }
    }

    /** Adjacent writes not yet sent are merged up to this size (a sequential writer's 4 KiB pages go as large pieces). */
    static final int COALESCE_BYTES = dev.cairn.core.proto.Codec.MAX_DATA_BYTES;

    private final CairnClient client;
    private final FileAttr file;
    private final int index;
    private final List<String> exclude = new ArrayList<>();
    /**
     * Writes since the last commit the owner told of ({@link #release}), in order: sent again under each new lease.
     * {@code pending[0, synced)} are durable on the chain that took them.
     */
    private final List<Piece> pending = new ArrayList<>();
    private int synced;
    /** Bytes of {@code pending[synced, ...)}: written, not yet durable. */
    private long pendingBytes;
    /** Bytes of all of {@code pending}: what the session holds in memory. */
    private long heldBytes;
    private LeaseReply lease;
    /** A commit covered writes made under {@link #lease}: the next write takes a new one. */
    private boolean leaseCommitted;
    private long leaseAtNanos;
    /** Counts leases: answers to requests sent under an earlier one are ignored. */
    private long generation;
    private boolean leasing;
    /** {@code pending[0, sent)} went down the chain under the current lease. */
    private int sent;
    private int inFlight;
    /** Writes sent under the current lease since its last sync: what the sync asks each copy to have taken. */
    private long piecesSinceSync;
    /** The furthest end of the writes since the last sync: each copy must hold at least this many bytes. */
    private long writtenTo;
    private int attempts;
    private Throwable failure;
    /** Writes the chain had taken under an earlier lease and has not yet taken again under this one. */
    private int retaking;
    /** Reads waiting for a lease whose chain holds every write taken so far. */
    private final List<Promise<LeaseReply>> readWaiters = new ArrayList<>();
    /** Syncs asked for, in order; the head runs once every write before it is taken. */
    private final List<Promise<Void>> syncs = new ArrayList<>();
    private boolean syncing;

    /** The writer's versions to commit: each sync adds the lease's. */
    private final Uncommitted versions;

    ChunkSession(CairnClient client, FileAttr file, int index, Uncommitted versions) {
        this.client = client;
        this.file = file;
        this.index = index;
        this.versions = versions;
    }

    public int index() { return index; }

    /** Bytes written and not yet durable. */
    public long pendingBytes() { return pendingBytes; }

    /** Whether writes were taken since the last sync: an empty write extending the copies counts, though it holds no bytes. */
    public boolean unsynced() { return synced < pending.size(); }

    /** Bytes held in memory: written since the last commit the owner told of (synced or not). */
    public long heldBytes() { return heldBytes; }

    /**
     * The file's length is committed over every synced write ending at or before {@code upTo} (chunk offset):
     * those are no longer kept (a lease placing the chunk afresh will not need them: a commit raised the
     * chunk's data version, so holders of it are never all gone without a fault the contract allows).
     */
    public void release(long upTo) {
        int n = 0;
        while (n < synced && pending.get(n).offset + pending.get(n).data.length <= upTo) n++;
        release(n);
    }

    /** The end (chunk offset) of the furthest write synced and not yet released; 0 if none. */
    public long syncedEnd() {
        long end = 0;
        for (int i = 0; i < synced; i++) end = Math.max(end, pending.get(i).end());
        return end;
    }

    /** The file's length is committed over every write synced so far. */
    public void releaseSynced() { release(synced); }

    private void release(int n) {
        if (n == 0) return;
        // a commit covered writes of this lease: whatever is written next goes under a new one, so a copy that
        // misses it can never pass for one that has it (both would be at the committed version)
        leaseCommitted = true;
        for (int i = 0; i < n; i++) {
            Piece p = pending.get(i);
            heldBytes -= p.data.length;
            if (p.owed) { // no longer needed again
                p.owed = false;
                retaking--;
            }
            p.released = true;
        }
        pending.subList(0, n).clear();
        synced -= n;
        sent = Math.max(0, sent - n);
        assert retaking >= 0 && heldBytes >= 0 : "session accounting: retaking " + retaking + ", held " + heldBytes;
        settle();
    }

    @Override public String toString() {
        return "session(inode " + file.inode() + " chunk " + index + ": " + pending.size() + " writes, " + synced + " synced, " + sent + " sent, "
                + inFlight + " in flight, held " + heldBytes + ", pending " + pendingBytes + (lease == null ? ", no lease" : ", v" + lease.version())
                + (leasing ? ", leasing" : "") + (syncing ? ", syncing" : "") + (failure != null ? ", failed" : "") + ")";
    }

    /** Whether the session failed for good (every later call fails with the same reason). */
    public boolean failed() { return failure != null; }

    /** The lease version the last sync made durable, or 0 (for tests and the gateway's bookkeeping). */
    public long version() { return lease == null ? 0 : lease.version(); }

    /**
     * Writes {@code data} at {@code offset} of the chunk; the promise completes when every copy of the chain
     * took it (not durable: see {@link #sync()}). The caller must leave {@code data} alone from now on.
     */
    public Promise<Void> write(long offset, byte[] data) {
        if (failure != null) return Promise.failed(failure);
        if (offset < 0 || offset + data.length > file.chunkSize()) {
            return Promise.failed(new CairnException(Status.BAD_REQUEST, "write of " + data.length + " bytes at " + offset + " outside a chunk of "
                    + file.chunkSize()));
        }
        pendingBytes += data.length;
        heldBytes += data.length;
        Piece last = pending.isEmpty() ? null : pending.get(pending.size() - 1);
        if (last != null && pending.size() - 1 >= Math.max(sent, synced) && last.takenUnder == 0 && last.end() == offset && last.data.length + data.length <= COALESCE_BYTES) {
            // the previous write is still waiting for room in the window: this one goes with it
            byte[] merged = java.util.Arrays.copyOf(last.data, last.data.length + data.length);
            System.arraycopy(data, 0, merged, last.data.length, data.length);
            last.data = merged;
            Promise<Void> both = new Promise<>();
            Promise<Void> before = last.taken;
            both.onComplete((v, e) -> {
                if (e == null) before.complete(null);
                else before.fail(e);
            });
            last.taken = both;
            return both;
        }
        Piece p = new Piece(offset, data, new Promise<>());
        pending.add(p);
        pump();
        return p.taken;
    }

    /** Makes every write so far durable on every copy of the chain (nothing to do if there is none). */
    public Promise<Void> sync() {
        if (failure != null) return Promise.failed(failure);
        Promise<Void> p = new Promise<>();
        syncs.add(p);
        pump();
        return p;
    }

    /** Whether the session has a chain to read from or writes not yet committed (a read of the chunk goes to it). */
    public boolean active() { return lease != null || !pending.isEmpty() || leasing; }

    /**
     * Reads {@code length} bytes at {@code offset} of the chunk as this session wrote it: from the chain of the
     * current lease once every copy in it holds every write taken so far (after a failed copy, the writes are
     * sent again first), from any copy of the chain (hedged). Bytes past what the copies hold come back short.
     */
    public Promise<byte[]> read(long offset, int length) {
        if (failure != null) return Promise.failed(failure);
        return settled().flatMap(l -> HedgedRead.run(client.scheduler(), FileReader.HEDGE_NANOS, l.chain().size(), i -> {
            // spread reads over the chain, starting at a different copy for each 1 MiB of the chunk
            ServerRef s = l.chain().get((int) ((i + offset / READ_SPREAD_BYTES) % l.chain().size()));
            return client.readData(s, l.chunkId(), l.version(), offset, length).map(r -> {
                if (r.status() != Status.OK) throw new CairnException(Status.IO, s.id() + ": " + r.status() + " " + r.detail());
                return r.data();
            });
        }));
    }

    /** The current lease once its chain holds every write taken so far. */
    private Promise<LeaseReply> settled() {
        if (lease != null && !leasing && retaking == 0) return Promise.completed(lease);
        if (lease == null && !leasing && pending.isEmpty()) {
            return Promise.failed(new CairnException(Status.BAD_REQUEST, "chunk " + index + " of inode " + file.inode() + ": nothing written here to read back"));
        }
        Promise<LeaseReply> p = new Promise<>();
        readWaiters.add(p);
        return p;
    }

    private void settle() {
        if (lease == null || leasing || retaking != 0 || readWaiters.isEmpty()) return;
        List<Promise<LeaseReply>> ready = new ArrayList<>(readWaiters);
        readWaiters.clear();
        for (Promise<LeaseReply> r : ready) r.complete(lease);
    }

    /** Sends what may be sent; starts a lease or a sync when it is time. */
    private void pump() {
        if (failure != null || leasing || syncing) return; // writes wait behind a lease being taken, or a sync under way
        if (synced == pending.size() && sent == pending.size()) {
            if (!syncs.isEmpty()) finishSyncs(); // nothing written since the last sync: nothing to make durable
            return;
        }
        if (lease != null && sent == pending.size() && inFlight == 0 && !syncs.isEmpty()) {
            startSync();
            return;
        }
        if (sent == pending.size()) return;
        if (lease == null || (inFlight == 0 && (leaseCommitted || client.env().clock().nanoTime() - leaseAtNanos > LEASE_REFRESH_NANOS))) {
            newLease();
            return;
        }
        while (inFlight < WINDOW && sent < pending.size()) {
            Piece p = pending.get(sent++);
            inFlight++;
            piecesSinceSync++;
            writtenTo = Math.max(writtenTo, p.offset + p.data.length);
            long gen = generation;
            client.writeData(lease.chain(), lease.chunkId(), lease.version(), p.offset, p.data).onSuccess(r -> {
                if (gen != generation) return; // a reply under an earlier lease: its write is sent again
                inFlight--;
                if (r.status() != Status.OK) {
                    recover(r);
                    return;
                }
                if (p.owed) { // a release clears it: a released piece is never counted again
                    assert !p.released : "a released piece still counted as owed";
                    p.owed = false;
                    retaking--;
                }
                p.takenUnder = gen;
                p.taken.complete(null); // a no-op when sent again under a new lease
                settle();
                pump();
            });
        }
    }

    private void newLease() {
        leasing = true;
        attempts++;
        long gen = ++generation;
        client.lease(file.inode(), index, List.copyOf(exclude)).onComplete((l, e) -> {
            if (gen != generation) return;
            leasing = false;
            if (e != null) {
                retry(CairnException.statusOf(e), "", CairnException.detailOf(e));
                return;
            }
            if (l.storageClass().isEc()) {
                fail(new CairnException(Status.BAD_REQUEST, "chunk " + index + " of inode " + file.inode() + " is erasure-coded: written whole, not in pieces"));
                return;
            }
            lease = l;
            leaseCommitted = false;
            leaseAtNanos = client.env().clock().nanoTime();
            client.log().debug("chunk {} of inode {}: lease v{} of chunk {} on {}; {} writes to send", index, file.inode(), l.version(), l.chunkId(),
                    l.chain(), pending.size());
            // counted per piece, not by comparing generations: a retry or a refresh moves the generation before this lease
            // comes, and a commit releasing pieces meanwhile must not uncount what was never counted (sim seed 1836)
            retaking = 0;
            for (Piece p : pending) {
                p.owed = p.takenUnder != 0;
                if (p.owed) retaking++;
            }
            sent = 0;
            inFlight = 0;
            piecesSinceSync = 0;
            writtenTo = 0;
            settle();
            pump();
        });
    }

    private void startSync() {
        syncing = true;
        int covered = pending.size();
        long gen = generation;
        LeaseReply l = lease;
        client.syncChunk(l.chain(), l.chunkId(), l.version(), writtenTo, piecesSinceSync).onSuccess(r -> {
            if (gen != generation) return;
            syncing = false;
            if (r.status() != Status.OK) {
                recover(r);
                return;
            }
            // everything up to here is durable on every copy (kept until a commit covers it), and the version goes to
            // the next commit
            int upTo = client.env().planted(dev.cairn.core.env.Plant.SYNC_COVERS_LATER_WRITES) ? pending.size() : covered;
            for (int i = synced; i < upTo; i++) pendingBytes -= pending.get(i).data.length;
            synced = upTo;
            piecesSinceSync = 0;
            writtenTo = 0;
            attempts = 0;
            versions.written(l.chunkId(), (long) index * file.chunkSize(), l.version());
            finishSyncs();
            pump();
        });
    }

    /** Completes every sync asked for so far (they all asked for what is durable now). */
    private void finishSyncs() {
        List<Promise<Void>> done = new ArrayList<>(syncs);
        syncs.clear();
        for (Promise<Void> p : done) p.complete(null);
    }

    /** A copy failed (or the window closed): a new lease leaving it out, then every pending write again. */
    private void recover(ChainReply r) {
        retry(r.status(), r.failedServer(), r.detail());
    }

    private void retry(Status status, String failedServer, String why) {
        if (!failedServer.isEmpty() && !exclude.contains(failedServer)) exclude.add(failedServer);
        generation++;
        lease = null;
        leasing = false;
        syncing = false;
        inFlight = 0;
        sent = 0;
        // a copy that no longer has the chunk (its host lost power before the chunk was ever synced there, or it was
        // replaced there meanwhile) is a failed copy like any other: left out of the next lease, which the writes not
        // yet durable are sent under again (ChainCopyLostSimTest); a NOT_FOUND naming no server is the master's
        boolean lostCopy = status == Status.NOT_FOUND && !failedServer.isEmpty();
        boolean retryable = status.retryable() || status == Status.NO_SPACE || status == Status.EXPIRED || lostCopy;
        if (!retryable || attempts >= MAX_ATTEMPTS) {
            fail(new CairnException(status, "chunk " + index + " of inode " + file.inode() + " not written after " + attempts + " leases: " + why));
            return;
        }
        client.log().debug("chunk {} of inode {}: lease {} failed ({} {}); resending {} writes under a new one", index, file.inode(), attempts,
                status, why, pending.size());
        long backoff = status == Status.EXPIRED ? 0 : Math.min(MAX_BACKOFF_NANOS, BACKOFF_NANOS << Math.min(Math.max(0, attempts - 1), 5));
        leasing = true; // nothing is sent until the new lease
        long gen = generation;
        client.env().scheduler().schedule(backoff, () -> {
            if (gen != generation) return;
            leasing = false;
            pump();
        });
    }

    private void fail(CairnException e) {
        failure = e;
        generation++;
        for (Piece p : pending) p.taken.fail(e);
        List<Promise<LeaseReply>> readers = new ArrayList<>(readWaiters);
        readWaiters.clear();
        for (Promise<LeaseReply> r : readers) r.fail(e);
        List<Promise<Void>> waiting = new ArrayList<>(syncs);
        syncs.clear();
        for (Promise<Void> p : waiting) p.fail(e);
    }
}
