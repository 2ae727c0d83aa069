package dev.cairn.master;

import dev.cairn.core.async.Promise;
import dev.cairn.core.env.Env;
import dev.cairn.core.env.Log;
import dev.cairn.core.proto.Ack;
import dev.cairn.core.proto.CairnException;
import dev.cairn.core.proto.MasterProtocol.ConvertChunk;
import dev.cairn.core.proto.MasterProtocol.CreateChunk;
import dev.cairn.core.proto.MasterProtocol.DeleteChunk;
import dev.cairn.core.proto.Status;
import dev.cairn.core.proto.StorageClass;
import dev.cairn.core.proto.Types.FileType;
import dev.cairn.core.proto.Types.ServerRef;
import dev.cairn.core.rpc.Rpc;
import dev.cairn.master.ChunkRegistry.Holder;
import dev.cairn.master.ChunkRegistry.Server;
import dev.cairn.master.meta.ChunkRecord;
import dev.cairn.master.meta.MetaCommand;
import dev.cairn.master.meta.MetaLog;
import dev.cairn.master.namespace.InodeRecord;
import dev.cairn.master.namespace.Namespace;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The planner's archive step: a file whose class has an archive rule and that has not been modified for
 * the rule's time is rewritten in the archive class (hot replicas to cold EC). Chunk by chunk, a
 * chunkserver holding a current replica reads it and writes it under a fresh chunk id to servers chosen
 * for the new class ({@link dev.cairn.core.proto.MasterProtocol.ConvertChunk}); then one metadata command
 * swaps the file's chunks and class at once, refused if the file changed meanwhile (its mtime, size, or
 * any chunk version: a write lease bumps the version before any byte is written). The old copies are
 * deleted only after the swap is committed, so at every instant the file reads whole from one class.
 */
final class Archiver {
    /** Files rewritten at once (each holds one chunk in a chunkserver's memory at a time). */
    static final int MAX_FILES_AT_ONCE = 1;
    /** A file whose rewrite failed is left alone this long. */
    static final long RETRY_NANOS = 60_000_000_000L;
    /** Time a chunkserver gets to rewrite one chunk (64 MiB read, encoded, written and synced). */
    static final long CONVERT_CALL_NANOS = 300_000_000_000L;
    static final long CALL_NANOS = 5_000_000_000L;
    /** The version rewritten chunks start at (1 means "allocated, never written"). */
    static final long NEW_VERSION = 2;

    /** Chooses servers for a new chunk of a class: {@code Master.choose}. */
    interface Placement {
        List<Server> choose(StorageClass cls, Set<String> exclude, int n);
    }

    private record Rewrite(MetaCommand.Rewritten chunk, List<Server> targets) {}

    private final Env env;
    private final Rpc rpc;
    private final ChunkRegistry registry;
    private final Log log;
    private final Placement placement;
    private final Namespace namespace;
    private final MetaLog metaLog;
    /** Chunk ids being written by a rewrite: not yet in the namespace, so registrations must not delete them. */
    private final Set<Long> rewriting = new HashSet<>();
    private final Set<Long> running = new HashSet<>();
    private final Map<Long, Long> retryAfter = new HashMap<>();
    /** Files with an archive rule -> when (wall-clock millis) they are old enough to rewrite. */
    private final Map<Long, Long> due = new java.util.TreeMap<>();
    /** Inodes written since the last pass: their rule and age are read again. */
    private final Set<Long> recheck = new java.util.TreeSet<>();
    private long filesArchived;

    /** The leader term of the master this archiver works for (see {@link dev.cairn.core.proto.MasterProtocol.Fenced}). */
    private final long term;

    Archiver(Env env, Rpc rpc, ChunkRegistry registry, Log log, Placement placement, Namespace namespace, MetaLog metaLog, long term) {
        this.env = env;
        this.rpc = rpc;
        this.registry = registry;
        this.log = log;
        this.placement = placement;
        this.namespace = namespace;
        this.metaLog = metaLog;
        this.term = term;
    }

    boolean isRewriting(long chunkId) { return rewriting.contains(chunkId); }

    boolean isRunning(long inode) { return running.contains(inode); }

    long filesArchived() { return filesArchived; }

    /**
     * Files seen by a full planner pass: those with an archive rule become candidates (and the planner's full
     * pass is the safety net for {@link #inodeChanged}).
     */
    void consider(Iterable<InodeRecord> files) {
        for (InodeRecord f : files) track(f);
    }

    /** An inode record was written or deleted: looked at again in the next pass. */
    void inodeChanged(long inode) { recheck.add(inode); }

    private void track(InodeRecord f) {
        StorageClass cls = f.storageClass();
        if (f.type() != FileType.FILE || cls.archiveClass() == null) due.remove(f.inode());
        else due.put(f.inode(), f.mtimeMillis() + cls.archiveAfterSeconds() * 1000);
    }

    /**
     * One planner pass: starts rewriting an idle file whose time has come, if none is being rewritten.
     *
     * @param busyChunks chunks with a lease open or a planner action under way (their file is not idle)
     */
    void pass(Set<Long> busyChunks) {
        for (long ino : recheck) {
            InodeRecord f = namespace.inodeOrNull(ino);
            if (f == null) due.remove(ino);
            else track(f);
        }
        recheck.clear();
        if (running.size() >= MAX_FILES_AT_ONCE) return;
        long nowNanos = env.clock().nanoTime();
        retryAfter.values().removeIf(t -> t - nowNanos <= 0);
        // the master's own wall clock against stamps it wrote itself: a step only moves the rewrite earlier or later
        long wall = env.clock().wallMillis();
        for (var it = due.entrySet().iterator(); it.hasNext(); ) {
            Map.Entry<Long, Long> e = it.next();
            long ino = e.getKey();
            if (e.getValue() > wall || running.contains(ino) || retryAfter.containsKey(ino)) continue;
            InodeRecord f = namespace.inode(ino);
            List<ChunkRecord> chunks = namespace.chunks(ino, 0, Namespace.MAX_CHUNKS_PER_REWRITE + 1);
            if (chunks.isEmpty()) {
                it.remove(); // nothing to rewrite; its first write changes the inode, which brings it back
                continue;
            }
            if (chunks.size() > Namespace.MAX_CHUNKS_PER_REWRITE || !readable(chunks, busyChunks)) continue;
            start(f, chunks);
            return;
        }
    }

    /** Every chunk has a live current replica and nothing under way on it. */
    private boolean readable(List<ChunkRecord> chunks, Set<Long> busyChunks) {
        for (ChunkRecord c : chunks) {
            if (busyChunks.contains(c.chunkId()) || registry.holders(c.chunkId()).isEmpty()) return false;
        }
        return true;
    }

    private void start(InodeRecord f, List<ChunkRecord> chunks) {
        StorageClass to = f.storageClass().archiveClass();
        running.add(f.inode());
        log.info("archive: rewriting inode {} ({} chunks) from {} to {}", f.inode(), chunks.size(), f.storageClass().placement(), to);
        List<Rewrite> done = new ArrayList<>();
        boolean[] proposed = {false};
        Promise<List<Long>> swapped = (chunks.isEmpty() ? Promise.completed(0L) : metaLog.submit(new MetaCommand.ReserveChunkIds(chunks.size())))
                .flatMap(first -> rewriteFrom(f, to, chunks, first, 0, done))
                .flatMap(v -> {
                    List<MetaCommand.Rewritten> list = new ArrayList<>();
                    for (Rewrite r : done) list.add(r.chunk());
                    proposed[0] = true;
                    return metaLog.submit(new MetaCommand.Archive(f.inode(), f.mtimeMillis(), f.size(), to, list));
                });
        swapped.onComplete((old, e) -> {
            running.remove(f.inode());
            for (Rewrite r : done) rewriting.remove(r.chunk().newChunkId());
            if (e != null) {
                log.info("archive: rewrite of inode {} abandoned ({}); retrying in {} s", f.inode(), e.getMessage(), RETRY_NANOS / 1_000_000_000L);
                retryAfter.put(f.inode(), env.clock().nanoTime() + RETRY_NANOS);
                if (proposed[0] && outcomeUnknown(e)) {
                    // the swap may yet commit (a deposed leader's entry can be carried into the next term, as sim seed 969
                    // with three masters showed: the file's only chunks deleted): its new chunks stay, and whichever leader
                    // knows the outcome judges them at their servers' next inventory (gone from its namespace: deleted)
                    log.info("archive: the swap of inode {} may have committed: its rewritten chunks are left to the inventories", f.inode());
                    return;
                }
                for (Rewrite r : done) deleteEverywhere(r.chunk().newChunkId(), r.targets());
                return;
            }
            for (Rewrite r : done) {
                for (int i = 0; i < r.targets().size(); i++) {
                    Server s = r.targets().get(i);
                    if (s.alive) registry.addLocation(r.chunk().newChunkId(), s, to.isEc() ? i : 0, NEW_VERSION);
                }
            }
            for (long id : old) deleteEverywhere(id, registry.forget(id));
            filesArchived++;
            log.info("archive: inode {} is now {}", f.inode(), to);
        });
    }

    private Promise<Void> rewriteFrom(InodeRecord f, StorageClass to, List<ChunkRecord> chunks, long firstId, int i, List<Rewrite> done) {
        if (i == chunks.size()) return Promise.completed(null);
        ChunkRecord c = chunks.get(i);
        long newId = firstId + i;
        return rewrite(f, to, c, newId, done).flatMap(v -> rewriteFrom(f, to, chunks, firstId, i + 1, done));
    }

    private Promise<Void> rewrite(InodeRecord f, StorageClass to, ChunkRecord c, long newId, List<Rewrite> done) {
        Holder source = null;
        for (Holder h : registry.holders(c.chunkId())) {
            // the newest copy (a copy a version behind is current too, but the newest is as good and never worse), then one off slow disks
            if (source == null || h.version() > source.version()
                    || (h.version() == source.version() && !source.server().slowDisks.isEmpty() && h.server().slowDisks.isEmpty())) source = h;
        }
        if (source == null) return Promise.failed(new CairnException(Status.UNAVAILABLE, "no live copy of chunk " + c.chunkId()));
        List<Server> targets = placement.choose(to, Set.of(), to.parts());
        if (to.isEc() ? targets.size() < to.parts() : targets.isEmpty()) {
            return Promise.failed(new CairnException(Status.NO_SPACE, "not enough servers for " + to));
        }
        long length = Math.max(0, Math.min(f.chunkSize(), f.size() - (long) c.index() * f.chunkSize()));
        rewriting.add(newId);
        done.add(new Rewrite(new MetaCommand.Rewritten(c.index(), c.chunkId(), c.version(), newId), List.copyOf(targets)));
        List<Promise<Ack>> creates = new ArrayList<>();
        List<ServerRef> refs = new ArrayList<>();
        for (int p = 0; p < targets.size(); p++) {
            int part = to.isEc() ? p : 0;
            Server t = targets.get(p);
            refs.add(t.ref());
            creates.add(rpc.call(t.address, rid -> new CreateChunk(rid, newId, NEW_VERSION, part, Master.capacity(f.chunkSize(), to), false, term), Ack.class, CALL_NANOS));
        }
        Server from = source.server();
        long fromVersion = source.version();
        return Promise.all(creates).flatMap(acks -> {
            for (Ack a : acks) if (a.status() != Status.OK) throw new CairnException(a.status(), "creating the rewritten chunk: " + a.detail());
            return rpc.call(from.address, rid -> new ConvertChunk(rid, c.chunkId(), fromVersion, length, newId, NEW_VERSION, to.k(), to.m(), refs, term),
                    Ack.class, CONVERT_CALL_NANOS);
        }).map(ack -> {
            if (ack.status() != Status.OK) throw new CairnException(ack.status(), "rewriting chunk " + c.chunkId() + " on " + from.id + ": " + ack.detail());
            return null;
        });
    }

    /**
     * Whether a failed command may still have been applied: the log lost track of it (UNAVAILABLE: its leader was deposed
     * or the group did not answer; IO: this replica stopped applying) rather than refusing it (the state machine's own
     * refusal, NOT_LEADER or BUSY before it was appended).
     */
    static boolean outcomeUnknown(Throwable e) {
        if (!(e instanceof CairnException c)) return true;
        return c.status() == Status.UNAVAILABLE || c.status() == Status.IO;
    }

    private void deleteEverywhere(long chunkId, List<Server> servers) {
        for (Server s : servers) {
            // best effort: a copy on a server that is down now is deleted when it registers (its id is unknown then)
            rpc.call(s.address, rid -> new DeleteChunk(rid, chunkId, DeleteChunk.ANY_VERSION, term), Ack.class, CALL_NANOS);
        }
    }
}
