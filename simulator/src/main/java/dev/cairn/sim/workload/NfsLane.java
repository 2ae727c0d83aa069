package dev.cairn.sim.workload;

import dev.cairn.core.async.Promise;
import dev.cairn.core.env.Scheduler;
import dev.cairn.core.proto.StorageClass;
import dev.cairn.nfs.client.Nfs4Client;
import dev.cairn.nfs.client.Nfs4Client.NfsException;
import dev.cairn.nfs.client.Nfs4Client.OpenFile;
import dev.cairn.nfs.v4.Nfs4Status;
import dev.cairn.sim.runtime.Simulation;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.SplittableRandom;

/**
 * NFS clients in the sweep: one worker drives the gateway host over NFSv4.1 ({@link Nfs4Client}), the way a
 * hard-mounted kernel client does. It creates files over NFS (in directories of three classes), changes
 * acknowledged files in place (the native client's files of small chunks too: UNSTABLE writes several in flight,
 * size changes, FILE_SYNC writes, COMMIT), reads files back and removes them.
 *
 * <p>A COMMIT acknowledges the writes before it only if its verifier is the one every one of them was answered
 * with; otherwise the gateway restarted in between and lost what it held, and the client sends every write and
 * size change since the last good COMMIT again, in order, and commits again (RFC 8881 §18.3.4). Broken
 * connections, lost sessions and stateids, a gateway in its grace period and DELAY are retried (reconnecting
 * as a rebooted client and reopening) until {@link #HARD_MOUNT_NANOS} after the faults end; an NFS error status
 * abandons the change (its writes may or may not have landed). Every acknowledgement goes to the same oracle and
 * ack-time witness as the native client's, and every acknowledged file is read back at the end with the rest.
 * Writes in flight together never overlap: NFS orders nothing between concurrent requests.
 *
 * <p>It also sets and removes extended attributes of acknowledged files (RFC 8276; every option, values up to the
 * 64 KiB limit) and holds the gateway to them: an acknowledged change is what LISTXATTRS and GETXATTR answer from then
 * on, through every fault, checked after each change and at each read of the file; a refusal must follow from the
 * acknowledged state (EXIST only for a set name, NOXATTR only for an unset one). A change whose outcome is unknown (given
 * up, or a refusal that a retried call may have caused itself) leaves its name unchecked until a later one is acknowledged.
 */
public final class NfsLane {
    /** The lane's directories and the class each gives the files created in it. */
    static final String[] DIRS = {"/n0", "/n1", "/n2"};
    /** The index of the erasure-coded one of {@link #DIR_CLASSES}. */
    static final int EC_DIR = 2;
    static final StorageClass[] DIR_CLASSES = {StorageClass.DEFAULT, StorageClass.replicated(2), StorageClass.ec(2, 1)};
    static {
        assert DIR_CLASSES[EC_DIR].isEc() : "the directory counted as erasure-coded is not";
    }
    /** Files created over NFS get the master's chunk size. */
    static final int NFS_CHUNK_SIZE = dev.cairn.master.namespace.Namespace.DEFAULT_CHUNK_SIZE;
    /** A client's largest WRITE (a common wsize), and writes in flight at once at most. */
    static final int WSIZE = 64 << 10, MAX_IN_FLIGHT = 8;
    /** Largest file created over NFS. */
    static final int MAX_NEW_FILE = 600 << 10;
    static final int READ_PIECE = 256 << 10;
    /** The pieces of a read that stops early (two of them). */
    static final int PREFIX_READ_PIECE = 64 << 10;
    /**
     * How far past its end a change may write or extend a file: within the next chunk of the native workload's
     * files, but not a whole 64 MiB chunk of the lane's own (each check reads the files whole).
     */
    static final int MAX_GROWTH = 256 << 10;
    static final long MAX_THINK_NANOS = 100_000_000L;
    /** Wait before retrying a call that failed for a reason a hard mount retries. */
    static final long RETRY_NANOS = 200_000_000L;
    /** A hard mount gives up on the gateway only this long after the faults end (then something is stuck: judged). */
    public static final long HARD_MOUNT_NANOS = 120_000_000_000L;
    /** Times a change is resent after a COMMIT showed the gateway lost it, before the change is abandoned. */
    static final int MAX_RESENDS = 3;
    static final int MAX_UPDATE_STEPS = 6;

    /** The gateway took fewer bytes than sent (allowed by the protocol; this client gives the change up). */
    static final class ShortWrite extends RuntimeException implements dev.cairn.core.async.Unexpected.Expected {
        ShortWrite(int took, int sent) { super("short write: " + took + " of " + sent + " bytes"); }
    }

    /** What a failed call calls for. */
    enum Remedy { RECONNECT, REOPEN, WAIT, FAIL }

    private final Simulation sim;
    private final Nfs4Client nfs;
    private final Scheduler scheduler;
    private final Oracle oracle;
    private final SplittableRandom rnd;
    private final long endNanos;
    private final Workload.Stats stats;
    private final Workload.AckObserver ackObserver;
    private final Workload.OpObserver observer;
    /** Handles of directories (stable across gateway restarts: they name inodes). */
    private final Map<String, byte[]> dirHandles = new HashMap<>();
    private boolean connected;
    /** Bumped at every new session: state opened before it is gone. */
    private int generation;
    private Promise<Void> connecting;
    /** Extended attributes acknowledged, by file (the model's identity: a path made again starts with none). */
    private final Map<FileModel, Xattrs> xattrs = new java.util.IdentityHashMap<>();
    private int fileCounter;
    private boolean running;
    private String current = "starting";
    private long currentSince;

    public NfsLane(Simulation sim, Nfs4Client nfs, Scheduler scheduler, Oracle oracle, SplittableRandom rnd, long endNanos,
                   Workload.Stats stats, Workload.AckObserver ackObserver, Workload.OpObserver observer) {
        this.sim = sim;
        this.nfs = nfs;
        this.scheduler = scheduler;
        this.oracle = oracle;
        this.rnd = rnd;
        this.endNanos = endNanos;
        this.stats = stats;
        this.ackObserver = ackObserver;
        this.observer = observer;
    }

    /** Makes the lane's directories (through the native client, which can give them classes), then runs the worker. */
    public void start(dev.cairn.client.CairnClient client) {
        running = true;
        makeDirs(client, 0);
    }

    private void makeDirs(dev.cairn.client.CairnClient client, int i) {
        if (i == DIRS.length) { next(); return; }
        client.mkdir(DIRS[i]).then((a, e) -> client.setClass(DIRS[i], DIR_CLASSES[i])).onComplete((a, e) -> {
            if (e != null) scheduler.schedule(RETRY_NANOS, () -> makeDirs(client, i));
            else makeDirs(client, i + 1);
        });
    }

    /** True once the worker has finished its last operation. */
    public boolean quiet() { return !running; }

    /** What the worker is doing, and since when (for a report of a stuck lane). */
    public String current() { return current + " since " + currentSince / 1_000_000 + " ms"; }

    private void next() {
        if (sim.now() >= endNanos) {
            running = false;
            return;
        }
        scheduler.schedule(rnd.nextLong(MAX_THINK_NANOS), () -> {
            int dice = rnd.nextInt(100);
            Promise<Void> op = dice < 35 ? createFile() : dice < 60 ? updateFile() : dice < 85 ? readFile() : dice < 92 ? changeXattrs() : removeFile();
            op.onComplete((v, e) -> {
                if (e != null) sim.violation("exception", "the NFS lane's " + current + " failed unexpectedly: " + e);
                next();
            });
        });
    }

    private void doing(String what) {
        current = what;
        currentSince = sim.now();
    }

    // ---------------------------------------------------------------- connection and retries

    private Promise<Void> ensureConnected() {
        if (connected) return Promise.completed(null);
        if (connecting == null) {
            Promise<Void> p = nfs.connect().then((v, e) -> {
                connecting = null;
                if (e != null) return Promise.failed(e);
                connected = true;
                generation++;
                stats.nfsReconnects++;
                return Promise.completed(null);
            });
            if (!p.isDone()) connecting = p;
            return p;
        }
        return connecting;
    }

    static Remedy remedy(Throwable e) {
        for (Throwable t = e; t != null; t = t.getCause()) {
            if (t instanceof NfsException n) {
                return switch (n.status) {
                    case Nfs4Status.BADSESSION, Nfs4Status.DEADSESSION, Nfs4Status.STALE_CLIENTID, Nfs4Status.SEQ_MISORDERED,
                         Nfs4Status.BADSLOT, Nfs4Status.CONN_NOT_BOUND_TO_SESSION, Nfs4Status.SEQ_FALSE_RETRY -> Remedy.RECONNECT;
                    case Nfs4Status.BAD_STATEID, Nfs4Status.STALE_STATEID, Nfs4Status.EXPIRED, Nfs4Status.OLD_STATEID -> Remedy.REOPEN;
                    case Nfs4Status.DELAY, Nfs4Status.GRACE -> Remedy.WAIT;
                    default -> Remedy.FAIL;
                };
            }
            if (t instanceof dev.cairn.sim.runtime.SimNfsChannel.ChannelBroken) return Remedy.RECONNECT;
        }
        return Remedy.FAIL;
    }

    /**
     * Runs {@code op} on a live session, retrying what a hard mount retries; {@code h} (if not null) is the open
     * file {@code op} uses, reopened when its state is gone.
     */
    private <T> Promise<T> retry(Handle h, java.util.function.Function<OpenFile, Promise<T>> op) { return retry(h, op, null); }

    /** As above; {@code between} (if not null) is sent after the first failure, before the first retry. */
    private <T> Promise<T> retry(Handle h, java.util.function.Function<OpenFile, Promise<T>> op, java.util.function.Supplier<Promise<?>> between) {
        int gen = generation;
        // the open file is handed to the call, not read from the handle later: a sibling call's failure may clear it meanwhile
        return ensureConnected().flatMap(v -> h == null ? op.apply(null) : h.open().flatMap(op)).then((r, e) -> {
            if (e == null) return Promise.completed(r);
            Remedy remedy = remedy(e);
            if (remedy == Remedy.FAIL || sim.now() - (endNanos + HARD_MOUNT_NANOS) >= 0) return Promise.failed(e);
            if (remedy == Remedy.RECONNECT && gen == generation) connected = false;
            if (h != null && remedy != Remedy.WAIT) h.file = null;
            stats.nfsRetries++;
            Promise<T> out = new Promise<>();
            if (between != null) {
                between.get().then((x, ex) -> Promise.completed(null)).onComplete((x, ex) -> scheduler.schedule(RETRY_NANOS, () -> retry(h, op).into(out)));
                return out;
            }
            scheduler.schedule(RETRY_NANOS, () -> retry(h, op).into(out));
            return out;
        });
    }

    private Promise<byte[]> dir(String path) {
        byte[] fh = dirHandles.get(path);
        if (fh != null) return Promise.completed(fh);
        return retry(null, f -> nfs.lookup(path)).map(b -> {
            dirHandles.put(path, b);
            return b;
        });
    }

    static String parentOf(String path) { return path.substring(0, path.lastIndexOf('/')); }

    static String nameOf(String path) { return path.substring(path.lastIndexOf('/') + 1); }

    /** An open file of one change or read: reopened (by name in its directory) when its state is gone. */
    private final class Handle {
        final String path;
        final boolean create;
        final int access;
        OpenFile file;
        int openedIn;
        /** Writes and size changes sent since the last good COMMIT, in order, and the verifiers the writes got. */
        final List<FileModel.Op> sent = new ArrayList<>();
        final Set<Long> verifiers = new HashSet<>();

        Handle(String path, boolean create, int access) {
            this.path = path;
            this.create = create;
            this.access = access;
        }

        Promise<OpenFile> open() {
            if (file != null && openedIn == generation) return Promise.completed(file);
            int gen = generation;
            return dir(parentOf(path)).flatMap(d -> nfs.open(d, nameOf(path), create, access, Nfs4Client.SHARE_DENY_NONE, "lane")).map(f -> {
                if (gen == generation) {
                    file = f;
                    openedIn = gen;
                }
                return f;
            });
        }

        /** CLOSE if open on the live session; a failure is no matter (the state goes with its lease). */
        Promise<Void> close() {
            if (file == null || openedIn != generation || !connected) return Promise.completed(null);
            return nfs.close(file).then((v, e) -> Promise.completed(null));
        }
    }

    // ---------------------------------------------------------------- operations

    private Promise<Void> createFile() {
        int n = fileCounter++;
        int d = n % DIRS.length;
        String path = DIRS[d] + "/g" + n;
        doing("create of " + path);
        FileModel model = oracle.created(path, NFS_CHUNK_SIZE);
        oracle.writing(path);
        stats.nfsCreates++;
        Handle h = new Handle(path, true, Nfs4Client.SHARE_ACCESS_BOTH);
        long start = sim.now();
        long[] since = {start};
        int size = rnd.nextInt(5) == 0 ? 0 : 1 + rnd.nextInt(MAX_NEW_FILE);
        long seed = rnd.nextLong();
        return retry(h, f -> Promise.completed(null)).flatMap(v -> appendFrom(h, model, seed, 0, size, since))
                .flatMap(v -> commit(h, model, since, 0))
                .then((v, e) -> finish(h, model, start, "nfs-create", e));
    }

    /** Sequential UNSTABLE writes of {@code [off, size)} from stream {@code seed}, up to {@link #MAX_IN_FLIGHT} at once; now and then a COMMIT between. */
    private Promise<Void> appendFrom(Handle h, FileModel model, long seed, long off, long size, long[] since) {
        if (off >= size) return Promise.completed(null);
        List<FileModel.Op> batch = new ArrayList<>();
        long at = off;
        for (int i = 0, k = 1 + rnd.nextInt(MAX_IN_FLIGHT); i < k && at < size; i++) {
            int len = (int) Math.min(size - at, 1 + rnd.nextInt(WSIZE));
            batch.add(model.write(at, len, seed));
            at += len;
        }
        long next = at;
        Promise<Void> sent = sendAll(h, batch);
        if (rnd.nextInt(5) == 0) sent = sent.flatMap(v -> commit(h, model, since, 0));
        return sent.flatMap(v -> appendFrom(h, model, seed, next, size, since));
    }

    /** Sends writes (which do not overlap) all at once, UNSTABLE. */
    private Promise<Void> sendAll(Handle h, List<FileModel.Op> writes) {
        List<Promise<Void>> all = new ArrayList<>();
        for (FileModel.Op op : writes) all.add(send(h, op, Nfs4Client.UNSTABLE).map(x -> null));
        return Promise.all(all).map(x -> null);
    }

    /** Sends one write or size change; answers the stability the gateway gave it (FILE_SYNC for a size change). */
    private Promise<Integer> send(Handle h, FileModel.Op op, int stable) {
        h.sent.add(op);
        stats.nfsWrites++;
        if (op.truncate()) return retry(h, f -> nfs.truncate(f, op.offset())).map(v -> Nfs4Client.FILE_SYNC);
        byte[] data = Oracle.content(op.seed(), op.offset(), (int) op.length());
        return retry(h, f -> nfs.write(f, op.offset(), data, stable)).map(w -> {
            if (w.count() != data.length) throw new ShortWrite(w.count(), data.length); // this client does not send the rest
            h.verifiers.add(w.verifier());
            return w.committed();
        });
    }

    /**
     * COMMIT: if every write since the last good one was answered with the verifier the COMMIT returns, all of
     * it is acknowledged; else the gateway lost some of it, and the client sends it all again and commits again.
     */
    private Promise<Void> commit(Handle h, FileModel model, long[] since, int resends) {
        // for about half the files a COMMIT that failed (DELAY while the gateway's master is away, a lost connection) is retried only after the
        // file's last WRITE goes again, as a kernel client's writeback goes on beside a COMMIT it retries: a new lease on
        // the chunk may then come before the commit, and a gateway that let go of the synced writes at the failed
        // commit lost them to the lease's cut (release-before-commit)
        FileModel.Op last = lastWrite(h);
        // chosen without a draw from the lane's stream, so that seeds whose COMMITs never fail run as they did
        boolean writeBetween = last != null && ((h.path.hashCode() ^ Long.hashCode(last.seed()) ^ Long.hashCode(last.offset())) & 1) == 0;
        java.util.function.Supplier<Promise<?>> between = writeBetween ? () -> {
            stats.nfsWritesBesideRetries++;
            return send(h, last, Nfs4Client.UNSTABLE);
        } : null;
        return retry(h, f -> nfs.commit(f.fh()), between).flatMap(verifier -> {
            if (h.verifiers.isEmpty() || h.verifiers.size() == 1 && h.verifiers.contains(verifier)) {
                stats.nfsCommits++;
                acknowledge("NFS COMMIT of " + h.path, h, model, since);
                return Promise.completed(null);
            }
            if (resends == MAX_RESENDS) return Promise.failed(new IllegalStateException("the write verifier kept changing"));
            stats.nfsResends++;
            List<FileModel.Op> again = List.copyOf(h.sent);
            h.sent.clear();
            h.verifiers.clear();
            return resend(h, again, 0).flatMap(v -> commit(h, model, since, resends + 1));
        });
    }

    /**
     * The last change sent since the last good COMMIT if it is a write, else null: sent again it leaves the file as it
     * is (nothing sent after it to undo), which a write before a later size change or write would not.
     */
    private static FileModel.Op lastWrite(Handle h) {
        if (h.sent.isEmpty()) return null;
        FileModel.Op last = h.sent.get(h.sent.size() - 1);
        return last.truncate() ? null : last;
    }

    /**
     * Half of {@code batch}, then a COMMIT sent together with the other half, as a kernel client's writeback does (a
     * COMMIT for the pages written so far while more WRITEs of the file are under way). The COMMIT covers the writes
     * answered before it was sent, not those beside it: only those are acknowledged (and witnessed) at its reply; the
     * rest wait for a later COMMIT. A gateway that counted the writes beside it as durable, or let go of them with it,
     * is caught at that later COMMIT or by the faults after it.
     */
    private Promise<Void> commitAmid(Handle h, FileModel model, List<FileModel.Op> batch, long[] since) {
        List<FileModel.Op> before = batch.subList(0, batch.size() / 2), beside = batch.subList(batch.size() / 2, batch.size());
        return sendAll(h, before).flatMap(v -> {
            List<FileModel.Op> covered = List.copyOf(h.sent);
            Set<Long> answered = Set.copyOf(h.verifiers);
            long sentAt = sim.now();
            Promise<Long> commit = retry(h, f -> nfs.commit(f.fh()));
            Promise<Void> rest = sendAll(h, beside);
            return commit.flatMap(verifier -> rest.map(x -> {
                if (answered.isEmpty() || answered.size() == 1 && answered.contains(verifier)) {
                    stats.nfsCommitsAmid++;
                    acknowledgeThrough("NFS COMMIT of " + h.path + " amid writes", h, model, covered, since, sentAt);
                }
                return null;
            }));
        });
    }

    /** A COMMIT covered {@code covered}, the writes sent since the last good one up to when it was sent: only those are acknowledged. */
    private void acknowledgeThrough(String what, Handle h, FileModel model, List<FileModel.Op> covered, long[] since, long sentAt) {
        assert h.sent.size() >= covered.size() && h.sent.subList(0, covered.size()).equals(covered) : "writes sent before the COMMIT changed";
        List<FileModel.Op> pending = model.pendingOps();
        List<FileModel.Op> acked = pending.subList(0, pending.indexOf(covered.get(covered.size() - 1)) + 1);
        model.acknowledgeThrough(covered.get(covered.size() - 1));
        h.sent.subList(0, covered.size()).clear();
        // the verifiers of the writes left stay counted: more than one makes the next COMMIT send them again, which is safe
        oracle.changed(h.path);
        ackObserver.acknowledged(what, h.path, model, acked, since[0], null, oracle.chunkSize(h.path));
        since[0] = sentAt;
    }

    private Promise<Void> resend(Handle h, List<FileModel.Op> ops, int i) {
        if (i == ops.size()) return Promise.completed(null);
        return send(h, ops.get(i), Nfs4Client.UNSTABLE).flatMap(s -> resend(h, ops, i + 1));
    }

    private void acknowledge(String what, Handle h, FileModel model, long[] since) {
        List<FileModel.Op> acked = model.pendingOps();
        model.acknowledgeAll();
        h.sent.clear();
        h.verifiers.clear();
        oracle.changed(h.path);
        ackObserver.acknowledged(what, h.path, model, acked, since[0], null, oracle.chunkSize(h.path));
        since[0] = sim.now();
    }

    /** The end of a change: what was not acknowledged may or may not have landed; the file is closed and free again. */
    private Promise<Void> finish(Handle h, FileModel model, long start, String op, Throwable e) {
        observer.operation(start, sim.now(), op, h.path, e == null ? null : String.valueOf(e.getMessage()));
        if (e != null) {
            model.abandonPending();
            stats.nfsFailures++;
        }
        return h.close().then((v, x) -> {
            oracle.written(h.path);
            return Promise.completed(null);
        });
    }

    /**
     * A change in place of an acknowledged file: batches of non-overlapping UNSTABLE writes (over its bytes, past
     * its end), a size change, a FILE_SYNC write, a DEALLOCATE, a COMMIT; then a COMMIT.
     */
    /**
     * The file a read stopped early in last (the gateway may hold bytes of it read ahead), until a whole read of it: half
     * the changes and reads (by the time, not a draw) go to it, so that a change lands between the early stop and a
     * whole read, where a read-ahead that outlived the change would show.
     */
    private String readAheadOf;

    /** A committed file: {@link #readAheadOf} half the time, while it can be picked; else any. */
    private String pickFile() {
        String any = oracle.pick(rnd.nextInt());
        return readAheadOf != null && (sim.now() >>> 11) % 2 == 0 && oracle.pickable(readAheadOf) ? readAheadOf : any;
    }

    private Promise<Void> updateFile() {
        String path = pickFile();
        if (path == null) return createFile();
        doing("update of " + path);
        FileModel model = oracle.model(path);
        oracle.writing(path);
        stats.nfsUpdates++;
        Handle h = new Handle(path, false, Nfs4Client.SHARE_ACCESS_BOTH);
        long start = sim.now();
        long[] since = {start};
        int chunk = oracle.chunkSize(path);
        return updateSteps(h, model, chunk, 1 + rnd.nextInt(MAX_UPDATE_STEPS), since)
                .flatMap(v -> commit(h, model, since, 0))
                .map(v -> {
                    // a change of a file its erasure-coded directory made: its chunks were rewritten under new ids
                    if (path.startsWith(DIRS[EC_DIR] + "/")) stats.nfsEcUpdates++;
                    return v;
                })
                .then((v, e) -> finish(h, model, start, "nfs-update", e));
    }

    private Promise<Void> updateSteps(Handle h, FileModel model, int chunk, int steps, long[] since) {
        if (steps == 0) return Promise.completed(null);
        int dice = rnd.nextInt(100);
        Promise<Void> step;
        if (dice < 65) {
            List<FileModel.Op> batch = new ArrayList<>();
            List<long[]> spans = new ArrayList<>();
            for (int i = 0, n = 1 + rnd.nextInt(MAX_IN_FLIGHT); i < n; i++) {
                long size = Math.max(model.maxLength(), 1);
                long off = rnd.nextInt(5) == 0 ? size + rnd.nextInt(Math.min(chunk, MAX_GROWTH)) : rnd.nextLong(size);
                int len = rnd.nextInt(4) == 0 ? 1 + rnd.nextInt(WSIZE) : 1 + rnd.nextInt(8192);
                if (overlaps(spans, off, off + len)) continue;
                spans.add(new long[] {off, off + len});
                batch.add(model.write(off, len, rnd.nextLong()));
            }
            step = batch.size() >= 2 && rnd.nextInt(4) == 0 ? commitAmid(h, model, batch, since) : sendAll(h, batch);
        } else if (dice < 75) {
            step = send(h, model.truncate(rnd.nextLong(model.maxLength() + Math.min(chunk, MAX_GROWTH))), Nfs4Client.UNSTABLE).map(s -> null);
        } else if (dice < 88 && h.sent.isEmpty()) {
            // one FILE_SYNC write with nothing else unacknowledged: its reply alone acknowledges it
            long off = rnd.nextLong(Math.max(model.maxLength(), 1));
            FileModel.Op op = model.write(off, 1 + rnd.nextInt(WSIZE), rnd.nextLong());
            step = send(h, op, Nfs4Client.FILE_SYNC).map(stable -> {
                if (stable == Nfs4Client.FILE_SYNC) {
                    stats.nfsSyncWrites++;
                    acknowledge("NFS FILE_SYNC write to " + h.path, h, model, since);
                }
                return null;
            });
        } else if (dice < 93 && h.sent.isEmpty() && !model.hasPending() && model.ackedLength() > 0) {
            // DEALLOCATE (4.2) inside the file, with nothing else unacknowledged: its reply alone acknowledges zeros
            // there, durably, as a FILE_SYNC write's does (the ack-time witness checks every copy then)
            long size = model.ackedLength();
            long off = rnd.nextLong(size);
            long len = 1 + rnd.nextLong(Math.min(size - off, 4L * WSIZE));
            model.write(off, len, FileModel.ZEROS);
            step = retry(h, f -> nfs.deallocate(f, off, len)).map(v -> {
                stats.nfsDeallocates++;
                acknowledge("NFS DEALLOCATE in " + h.path, h, model, since);
                return null;
            });
        } else {
            step = commit(h, model, since, 0);
        }
        return step.flatMap(v -> updateSteps(h, model, chunk, steps - 1, since));
    }

    static boolean overlaps(List<long[]> spans, long from, long to) {
        for (long[] s : spans) if (from < s[1] && s[0] < to) return true;
        return false;
    }

    /** Reads an acknowledged file whole over NFS (its size from GETATTR, then READs) and checks it against the model. */
    private Promise<Void> readFile() {
        String path = pickFile();
        if (path == null) return createFile();
        doing("read of " + path);
        stats.nfsReads++;
        long start = sim.now();
        FileModel model = oracle.model(path);
        FileModel.Read window = model.beginRead();
        Handle h = new Handle(path, false, Nfs4Client.SHARE_ACCESS_READ);
        // a quarter of the reads (by the time, not a draw) stop after two small pieces, as a reader that found what it
        // wanted: the gateway has begun reading the rest ahead by then, and what it read must never be served once the
        // file changed (a later whole read's second READ lies inside it)
        boolean prefix = (sim.now() >>> 12) % 4 == 0;
        if (prefix) stats.nfsPrefixReads++;
        int piece = prefix ? PREFIX_READ_PIECE : READ_PIECE;
        if (prefix) readAheadOf = path;
        else if (path.equals(readAheadOf)) readAheadOf = null;
        return retry(h, f -> nfs.size(f.fh()).flatMap(size -> readRange(f, new byte[Math.toIntExact(prefix ? Math.min(size, 2L * piece) : size)], 0, piece))).then((bytes, e) -> {
            observer.operation(start, sim.now(), "nfs-read", path, e == null ? null : String.valueOf(e.getMessage()));
            if (!oracle.isCommitted(path) || oracle.model(path) != model) { // removed meanwhile
                model.endRead(window);
            } else if (e != null) {
                model.endRead(window);
                stats.nfsFailures++;
                if (remedy(e) == Remedy.FAIL && e instanceof NfsException n && n.status == Nfs4Status.NOENT) {
                    sim.violation("metadata", "committed file " + path + " vanished (NFS read): " + e.getMessage());
                }
            } else {
                String wrong = prefix ? model.checkPrefix(bytes, window) : model.check(bytes, window);
                if (wrong != null) sim.violation("corrupt-read", "NFS read of " + path + " returned " + wrong + "; " + model);
                Xattrs x = xattrs.get(model);
                if (x != null) return checkXattrs(h, path, x).then((v, e2) -> h.close());
            }
            return h.close();
        });
    }

    // ---------------------------------------------------------------- extended attributes

    /** The names the lane uses (few, so that options meet set and unset names alike). */
    static final String[] XATTR_NAMES = {"user.a", "user.b", "user.c"};
    static final int XATTR_EITHER = 0, XATTR_CREATE = 1, XATTR_REPLACE = 2, XATTR_REMOVE = 3;

    /** One file's extended attributes as acknowledged; a name in {@code unknown} had a change of unknown outcome since. */
    static final class Xattrs {
        final java.util.TreeMap<String, byte[]> values = new java.util.TreeMap<>();
        final Set<String> unknown = new HashSet<>();
    }

    /** One to four changes of one file's extended attributes, each checked against the model after it. */
    private Promise<Void> changeXattrs() {
        String path = oracle.pick(rnd.nextInt());
        if (path == null) return createFile();
        FileModel model = oracle.model(path);
        Xattrs x = xattrs.computeIfAbsent(model, m -> new Xattrs());
        oracle.writing(path);
        Handle h = new Handle(path, false, Nfs4Client.SHARE_ACCESS_READ);
        return changeXattr(h, path, x, 1 + rnd.nextInt(4)).then((v, e) -> h.close()).then((v, e) -> {
            oracle.written(path);
            return Promise.completed(null);
        });
    }

    private Promise<Void> changeXattr(Handle h, String path, Xattrs x, int left) {
        if (left == 0) return Promise.completed(null);
        String name = XATTR_NAMES[rnd.nextInt(XATTR_NAMES.length)];
        int how = rnd.nextInt(4);
        byte[] value = new byte[how == XATTR_REMOVE ? 0 : rnd.nextInt(10) == 0 ? rnd.nextInt(64 * 1024 + 1) : rnd.nextInt(300)];
        rnd.nextBytes(value);
        doing("xattr " + how + " of " + name + " on " + path);
        stats.nfsXattrChanges++;
        long start = sim.now();
        int[] attempts = {0};
        return retry(h, f -> {
            attempts[0]++;
            return how == XATTR_REMOVE ? nfs.removeXattr(f.fh(), name) : nfs.setXattr(f.fh(), name, value, how);
        }).then((info, e) -> {
            observer.operation(start, sim.now(), "nfs-xattr", path, e == null ? null : String.valueOf(e.getMessage()));
            judgeXattrChange(path, x, name, how, value, attempts[0], e);
            return checkXattrs(h, path, x);
        }).flatMap(v -> changeXattr(h, path, x, left - 1));
    }

    /** Folds a change's outcome into the model, and judges a refusal against what was acknowledged before it. */
    private void judgeXattrChange(String path, Xattrs x, String name, int how, byte[] value, int attempts, Throwable e) {
        boolean known = !x.unknown.contains(name);
        boolean set = x.values.containsKey(name);
        String what = "xattr " + name + " of " + path + " (option " + how + ")";
        if (e == null) {
            stats.nfsXattrsAcknowledged++;
            if (known && (how == XATTR_CREATE && set || (how == XATTR_REPLACE || how == XATTR_REMOVE) && !set)) {
                sim.violation("metadata", what + " succeeded though the name was " + (set ? "set" : "unset"));
            }
            if (how == XATTR_REMOVE) x.values.remove(name); else x.values.put(name, value);
            x.unknown.remove(name);
            return;
        }
        int status = e instanceof NfsException n ? n.status : -1;
        boolean exist = status == Nfs4Status.EXIST && how == XATTR_CREATE;
        boolean unset = status == Nfs4Status.NOXATTR && (how == XATTR_REPLACE || how == XATTR_REMOVE);
        if (exist || unset) {
            // a refusal the acknowledged state explains; after a retry it may be the first try's own effect
            if (known && attempts == 1 && (exist != set)) sim.violation("metadata", what + " refused with " + status + " though the name was " + (set ? "set" : "unset"));
            if (attempts > 1 || !known) x.unknown.add(name);
            return;
        }
        stats.nfsFailures++;
        x.unknown.add(name); // given up: it may or may not have landed
    }

    /** LISTXATTRS and GETXATTR agree with every acknowledged change; nothing the lane never set is listed. */
    private Promise<Void> checkXattrs(Handle h, String path, Xattrs x) {
        return retry(h, f -> nfs.listXattrs(f.fh(), 0, 65536).flatMap(list -> readValues(f, list.names(), 0, new java.util.TreeMap<>())))
                .then((found, e) -> {
                    if (e != null) return Promise.completed(null); // faults outlasted the mount: judged elsewhere
                    for (String name : XATTR_NAMES) {
                        if (x.unknown.contains(name)) continue;
                        byte[] want = x.values.get(name), got = found.get(name);
                        if (want == null && got != null) sim.violation("metadata", "xattr " + name + " of " + path + " is listed but was never set or was removed");
                        if (want != null && got == null) sim.violation("metadata", "xattr " + name + " of " + path + " was acknowledged (" + want.length + " bytes) and is gone");
                        if (want != null && got != null && !java.util.Arrays.equals(want, got)) {
                            sim.violation("metadata", "xattr " + name + " of " + path + " reads " + got.length + " bytes unlike the " + want.length + " acknowledged");
                        }
                    }
                    for (String name : found.keySet()) {
                        if (!java.util.Arrays.asList(XATTR_NAMES).contains(name)) sim.violation("metadata", "xattr " + name + " of " + path + " was never set");
                    }
                    return Promise.completed(null);
                });
    }

    private Promise<Map<String, byte[]>> readValues(OpenFile f, List<String> names, int i, Map<String, byte[]> out) {
        if (i == names.size()) return Promise.completed(out);
        return nfs.getXattr(f.fh(), names.get(i)).flatMap(v -> {
            out.put(names.get(i), v);
            return readValues(f, names, i + 1, out);
        });
    }

    private Promise<byte[]> readRange(OpenFile f, byte[] into, int at, int piece) {
        if (at >= into.length) return Promise.completed(into);
        return nfs.read(f, at, Math.min(piece, into.length - at)).flatMap(b -> {
            if (b.length == 0) return Promise.completed(java.util.Arrays.copyOf(into, at)); // shorter than GETATTR said
            System.arraycopy(b, 0, into, at, Math.min(b.length, into.length - at));
            return readRange(f, into, at + b.length, piece);
        });
    }

    private Promise<Void> removeFile() {
        String path = oracle.pick(rnd.nextInt());
        if (path == null) return createFile();
        doing("remove of " + path);
        oracle.removing(path);
        stats.nfsRemoves++;
        long start = sim.now();
        int[] attempts = {0};
        return retry(null, f -> {
            attempts[0]++;
            return dir(parentOf(path)).flatMap(d -> nfs.remove(d, nameOf(path)));
        }).then((v, e) -> {
            observer.operation(start, sim.now(), "nfs-remove", path, e == null ? null : String.valueOf(e.getMessage()));
            boolean noent = e instanceof NfsException n && n.status == Nfs4Status.NOENT;
            if (e == null || noent && attempts[0] > 1) { // NOENT after a retry: the first try removed it, its reply lost
                oracle.removed(path);
            } else {
                stats.nfsFailures++;
                if (noent) sim.violation("metadata", "committed file " + path + " vanished before its NFS remove");
                oracle.uncertain(path);
            }
            return Promise.completed(null);
        });
    }
}
