package dev.cairn.sim.workload;

import dev.cairn.client.CairnClient;
import dev.cairn.client.FileWriter;
import dev.cairn.core.async.Promise;
import dev.cairn.core.env.Scheduler;
import dev.cairn.core.proto.CairnException;
import dev.cairn.core.proto.Status;
import dev.cairn.core.proto.StorageClass;
import dev.cairn.core.proto.Types.AttrChange;
import dev.cairn.core.proto.Types.FileAttr;
import dev.cairn.nfs.fs.ClusterFs;
import dev.cairn.sim.runtime.Simulation;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.SplittableRandom;

/**
 * The client workload: a few workers that create, write (in uneven pieces), close, read back and remove
 * files, checking every read against the oracle; then a final pass that reads back every file whose
 * close was acknowledged. A mismatch is a violation; an error is one too once the faults have stopped.
 */
public final class Workload {
    /** Small chunks so that files of a few hundred KiB span several chunks. */
    public static final int CHUNK_SIZE = 128 << 10;
    static final int DIRS = 4;
    static final int MAX_PIECE = 200 << 10;
    /** Tries per file in the final read-back (2 s apart): hosts restarted at the end of the faults need a moment. */
    static final int VERIFY_ATTEMPTS = 15;
    static final long VERIFY_RETRY_NANOS = 2_000_000_000L;
    /** Chance (percent) that the writer syncs after a piece, acknowledging a prefix of a file still being written. */
    static final int SYNC_PERCENT = 20;
    /** Steps (a few writes in flight, a truncate, or a commit) of one in-place update at most. */
    static final int MAX_UPDATE_STEPS = 6;
    /** Storage classes files are written with, drawn uniformly (replicated(3) twice as often). */
    static final StorageClass[] CLASSES = {
        StorageClass.DEFAULT, StorageClass.DEFAULT, StorageClass.replicated(2), StorageClass.ec(2, 1), StorageClass.ec(2, 2), StorageClass.ec(3, 1),
        // on the servers labelled ssd, spilling onto others when they are full or down (moved back later)
        StorageClass.parse("replicated(2,disk=ssd,full=overflow)"),
        // hot replicas rewritten as cold erasure-coded parts once idle five seconds
        StorageClass.parse("replicated(2,archive=ec(2,1),after=5s)"),
    };

    /**
     * How hard the client pushes. SWEEP: a few workers back to back, files up to 4.5 chunks (the data
     * path under load). STEADY: one worker, a file of up to 64 KiB every 100 ms on average (a cluster's
     * ordinary background traffic; the speed benchmark's load).
     */
    public enum Profile {
        SWEEP(2, 50_000_000L, Integer.MAX_VALUE),
        STEADY(1, 200_000_000L, 64 << 10);

        final int workers;
        final long maxThinkNanos;
        final int maxFileBytes;

        Profile(int workers, long maxThinkNanos, int maxFileBytes) {
            this.workers = workers;
            this.maxThinkNanos = maxThinkNanos;
            this.maxFileBytes = maxFileBytes;
        }
    }

    /** Counters for the run summary. */
    public static final class Stats {
        public long writesStarted, commits, ecCommits, midSyncs, writeFailures, bytesCommitted;
        public long reads, readErrors, removes, removeFailures;
        /** In-place changes through the gateway's file system: started, committed, failed. */
        public long updates, updateCommits, updateFailures;
        public long verified;
        /** Acknowledged files unreadable at the end with an excuse: faults destroyed more copies than their class tolerates. */
        public long excusedLosses;
        /** Chunks unreadable at the end that hold only writes never acknowledged. */
        public long unacknowledgedLosses;
        /** Files written and read back by the liveness probe once the faults had stopped. */
        public long probed;
        /** The operator's actions: drains and their reversals, class changes of files holding data, servers retired. */
        public long drains, undrains, classChanges, retired;
        /**
         * The NFS lane ({@link NfsLane}): files created, changes in place, writes and size changes sent, COMMITs that
         * acknowledged, FILE_SYNC writes that did, changes resent after a verifier change, reads, removes, operations
         * given up, calls retried, sessions made.
         */
        public long nfsCreates, nfsUpdates, nfsEcUpdates, nfsWrites, nfsCommits, nfsCommitsAmid, nfsSyncWrites, nfsDeallocates, nfsResends, nfsReads, nfsRemoves, nfsFailures, nfsRetries, nfsReconnects,
                nfsXattrChanges, nfsXattrsAcknowledged;
        /** WRITEs the NFS lane sent again between a failed COMMIT and its retry. */
        public long nfsWritesBesideRetries;
        /** NFS reads that stopped after two pieces (the gateway's read-ahead left with bytes nobody asked for). */
        public long nfsPrefixReads;
        /** Aimed faults fired as a message arrived (the host went down before handling it). */
        public long aimedAtArrivals;
    }

    private final Profile profile;
    private final Simulation sim;
    private final CairnClient client;
    /** The NFS gateway's file system over the same client: the in-place changes go through it. */
    private final ClusterFs fs;
    private final Scheduler scheduler;
    private final Oracle oracle;
    private final SplittableRandom rnd;
    private final long endNanos;
    private final Stats stats = new Stats();
    /** Each file's storage class, for violation reports. */
    private final java.util.HashMap<String, StorageClass> classes = new java.util.HashMap<>();
    private int fileCounter;
    private int activeWorkers = -1;
    private Runnable onQuiet;
    private LossJudge lossJudge = (path, index) -> null;
    private AckObserver ackObserver = (what, path, model, ops, issuedAt, cls, chunkSize) -> { };
    /** Why each excused lost chunk was excused (the loss model's words). */
    private final List<String> excuses = new ArrayList<>();
    private OpObserver observer = (start, end, op, path, error) -> { };

    /** Sees every client operation as it completes (for the timeline page). */
    public interface OpObserver { void operation(long startNanos, long endNanos, String op, String path, String error); }

    public Workload(Simulation sim, CairnClient client, Scheduler scheduler, Oracle oracle, SplittableRandom rnd, long endNanos) {
        this(sim, client, scheduler, oracle, rnd, endNanos, Profile.SWEEP);
    }

    public Workload(Simulation sim, CairnClient client, Scheduler scheduler, Oracle oracle, SplittableRandom rnd, long endNanos, Profile profile) {
        this.profile = profile;
        this.sim = sim;
        this.client = client;
        this.fs = new ClusterFs(client, client.env().clock());
        this.scheduler = scheduler;
        this.oracle = oracle;
        this.rnd = rnd;
        this.endNanos = endNanos;
    }

    public Stats stats() { return stats; }

    public void observe(OpObserver o) { this.observer = o; }

    private void observed(long start, String op, String path, Throwable e) {
        observer.operation(start, sim.now(), op, path, e == null ? null : String.valueOf(e.getMessage()));
    }

    /** Judges an unreadable chunk of an acknowledged file: why its loss is excused, or null if it is not. */
    public interface LossJudge { String excuse(String path, int chunkIndex); }

    /** Told of every acknowledgement the moment it arrives (the ack-time durability witness). */
    public interface AckObserver {
        void acknowledged(String what, String path, FileModel model, List<FileModel.Op> acked, long issuedAt, StorageClass cls, int chunkSize);
    }

    public void lossJudge(LossJudge judge) { this.lossJudge = judge; }

    public void ackObserver(AckObserver o) { this.ackObserver = o; }

    /** Why each excused loss was excused. */
    public List<String> excuses() { return excuses; }

    /** Makes the directories, then runs the workers until the end time; {@code onQuiet} runs when the last one stops. */
    public void start(Runnable whenWorkersStop) {
        this.onQuiet = whenWorkersStop;
        mkdirs(0);
    }

    private void mkdirs(int i) {
        if (i == DIRS) {
            activeWorkers = profile.workers;
            for (int w = 0; w < profile.workers; w++) next();
            return;
        }
        client.mkdir("/d" + i).onComplete((a, e) -> {
            if (e != null && CairnException.statusOf(e) != Status.EXISTS) {
                scheduler.schedule(VERIFY_RETRY_NANOS, () -> mkdirs(i));
                return;
            }
            mkdirs(i + 1);
        });
    }

    private void next() {
        if (sim.now() >= endNanos) {
            if (--activeWorkers == 0 && onQuiet != null) onQuiet.run();
            return;
        }
        scheduler.schedule(rnd.nextLong(profile.maxThinkNanos), () -> {
            int dice = rnd.nextInt(100);
            Promise<Void> op;
            if (profile == Profile.STEADY) {
                // the speed benchmark's trickle stays what it measured since it began (new files, reads, removes), so
                // its figures compare across versions; in-place updates are the sweep's
                op = dice < 50 ? writeFile() : dice < 85 ? readFile() : removeFile();
            } else if (dice < 40) op = writeFile();
            else if (dice < 55) op = updateFile();
            else if (dice < 85) op = readFile();
            else op = removeFile();
            op.onComplete((v, e) -> next());
        });
    }

    /**
     * Changes an acknowledged file in place through the NFS gateway's file system ({@link ClusterFs}, the code
     * behind WRITE, SETATTR and COMMIT): writes at random offsets (over its bytes, past its end, over holes),
     * several in flight at once, now and then a truncate or a commit in the middle, then a commit. Each
     * acknowledgement folds what was pending into the model; a failure leaves it maybe-landed for good.
     */
    private Promise<Void> updateFile() {
        String path = oracle.pick(rnd.nextInt());
        if (path == null) return writeFile();
        FileModel model = oracle.model(path);
        StorageClass cls = classes.get(path);
        oracle.writing(path);
        stats.updates++;
        long start = sim.now();
        long[] since = {start};
        int steps = 1 + rnd.nextInt(MAX_UPDATE_STEPS);
        return client.lookup(path).flatMap(attr -> updateSteps(attr.inode(), path, model, cls, steps, since).flatMap(v -> fs.commit(attr.inode())))
                .then((a, e) -> {
                    observed(start, "update", path, e);
                    if (e == null) {
                        acknowledge("commit of " + path, path, model, since[0], null);
                        stats.updateCommits++;
                    } else {
                        model.abandonPending();
                        stats.updateFailures++;
                    }
                    oracle.written(path);
                    return Promise.completed(null);
                });
    }

    private Promise<Void> updateSteps(long inode, String path, FileModel model, StorageClass cls, int steps, long[] since) {
        if (steps == 0) return Promise.completed(null);
        int dice = rnd.nextInt(100);
        Promise<Void> step;
        if (dice < 75) {
            // up to four writes in flight at once, as an NFS client keeps them
            List<Promise<FileAttr>> writes = new ArrayList<>();
            for (int i = 0, n = 1 + rnd.nextInt(4); i < n; i++) {
                long size = Math.max(model.maxLength(), 1);
                long off = rnd.nextInt(5) == 0 ? size + rnd.nextInt(CHUNK_SIZE) : rnd.nextLong(size);
                int len = rnd.nextInt(4) == 0 ? 1 + rnd.nextInt(MAX_PIECE) : 1 + rnd.nextInt(8192);
                long seed = rnd.nextLong();
                model.write(off, len, seed);
                writes.add(fs.write(inode, off, Oracle.content(seed, off, len), false));
            }
            step = Promise.all(writes).map(v -> null);
        } else if (dice < 88) {
            long newSize = rnd.nextLong(model.maxLength() + CHUNK_SIZE);
            model.truncate(newSize);
            // a size change first commits every write before it, then changes the size durably: all acknowledged
            step = fs.setAttr(inode, AttrChange.NONE.withSize(newSize)).map(a -> {
                acknowledge("truncate of " + path, path, model, since[0], null);
                since[0] = sim.now();
                return null;
            });
        } else {
            step = fs.commit(inode).map(a -> {
                acknowledge("commit of " + path, path, model, since[0], null);
                since[0] = sim.now();
                stats.midSyncs++;
                return null;
            });
        }
        return step.flatMap(v -> updateSteps(inode, path, model, cls, steps - 1, since));
    }

    private int pickSize() {
        int dice = rnd.nextInt(100);
        if (dice < 5) return 0;
        if (dice < 20) return 1 + rnd.nextInt(4096);
        if (dice < 75) return 1 + rnd.nextInt(Math.min(profile.maxFileBytes, CHUNK_SIZE));
        return 1 + rnd.nextInt(Math.min(profile.maxFileBytes, 4 * CHUNK_SIZE + CHUNK_SIZE / 2));
    }

    private Promise<Void> writeFile() {
        int n = fileCounter++;
        String path = "/d" + (n % DIRS) + "/f" + n;
        long seed = rnd.nextLong();
        int size = pickSize();
        StorageClass cls = CLASSES[rnd.nextInt(CLASSES.length)];
        byte[] data = Oracle.content(seed, size);
        classes.put(path, cls);
        stats.writesStarted++;
        FileModel model = oracle.created(path);
        oracle.writing(path);
        long start = sim.now();
        long[] since = {start}; // when the writes not yet acknowledged began
        return client.create(path, CHUNK_SIZE, cls).flatMap(attr -> {
            FileWriter w = client.writer(attr);
            return writePieces(w, path, model, seed, data, 0, !cls.isEc(), since).flatMap(v -> w.close());
        }).then((v, e) -> {
            observed(start, "write", path, e);
            if (e == null) {
                acknowledge("close of " + path, path, model, since[0], cls);
                stats.commits++;
                if (cls.isEc()) stats.ecCommits++;
                stats.bytesCommitted += size;
            } else {
                model.abandonPending();
                stats.writeFailures++;
            }
            oracle.written(path);
            return Promise.completed(null);
        });
    }

    /** Writes uneven pieces; now and then syncs, which acknowledges what was written so far. */
    private Promise<Void> writePieces(FileWriter w, String path, FileModel model, long seed, byte[] data, int off, boolean midSyncs, long[] since) {
        if (off >= data.length) return Promise.completed(null);
        int len = Math.min(data.length - off, 1 + rnd.nextInt(MAX_PIECE));
        model.write(off, len, seed);
        Promise<Void> written = w.write(data, off, len);
        if (midSyncs && rnd.nextInt(100) < SYNC_PERCENT) {
            written = written.flatMap(v -> w.sync()).map(v -> {
                acknowledge("sync of " + path, path, model, since[0], classes.get(path));
                since[0] = sim.now();
                stats.midSyncs++;
                return null;
            });
        }
        return written.flatMap(v -> writePieces(w, path, model, seed, data, off + len, midSyncs, since));
    }

    /** The cluster acknowledged everything pending on {@code path}: the model folds it in, and the witness looks at the disks now. */
    private void acknowledge(String what, String path, FileModel model, long issuedAt, StorageClass cls) {
        List<FileModel.Op> acked = model.pendingOps();
        model.acknowledgeAll();
        oracle.changed(path);
        ackObserver.acknowledged(what, path, model, acked, issuedAt, cls, oracle.chunkSize(path));
    }

    private Promise<Void> readFile() {
        String path = oracle.pick(rnd.nextInt());
        if (path == null) return writeFile();
        stats.reads++;
        long start = sim.now();
        // an update of the file may start while this read runs (reads do not hold it): each byte may be as the
        // file was at any moment of the read (seed 12200: bytes read before an overwrite acknowledged meanwhile)
        FileModel model = oracle.model(path);
        FileModel.Read window = model.beginRead();
        return read(path).then((bytes, e) -> {
            observed(start, "read", path, e);
            if (!oracle.isCommitted(path) || oracle.model(path) != model) { // removed meanwhile
                model.endRead(window);
                return Promise.completed(null);
            }
            if (e != null) {
                model.endRead(window);
                stats.readErrors++;
                if (CairnException.statusOf(e) == Status.NOT_FOUND) sim.violation("metadata", "committed file " + path + " vanished: " + e.getMessage());
            } else {
                checkContent(path, bytes, window);
            }
            return Promise.completed(null);
        });
    }

    private Promise<Void> removeFile() {
        String path = oracle.pick(rnd.nextInt());
        if (path == null) return writeFile();
        oracle.removing(path);
        stats.removes++;
        long start = sim.now();
        return client.remove(path).then((v, e) -> {
            observed(start, "remove", path, e);
            if (e == null) {
                oracle.removed(path);
            } else {
                stats.removeFailures++;
                if (CairnException.statusOf(e) == Status.NOT_FOUND) sim.violation("metadata", "committed file " + path + " vanished before its remove");
                oracle.uncertain(path);
            }
            return Promise.completed(null);
        });
    }

    private Promise<byte[]> read(String path) {
        return client.lookup(path).flatMap(attr -> client.reader(attr).readAll());
    }

    /**
     * Every byte read must be one the model explains, and the length one the file can have (a commit the
     * writer saw fail, its reply lost, may still have reached the master: then more of the written bytes
     * are the file's).
     */
    private boolean checkContent(String path, byte[] got) { return checkContent(path, got, null); }

    /** As above, for a read begun with {@code window} ({@link FileModel#beginRead}; null: one nothing overlapped). */
    private boolean checkContent(String path, byte[] got, FileModel.Read window) {
        FileModel want = oracle.model(path);
        String wrong = want.check(got, window);
        if (wrong != null) {
            sim.violation("corrupt-read", "read of " + path + " (" + classes.get(path) + ") returned " + wrong + "; " + want);
            return false;
        }
        return true;
    }

    /** True once every worker has finished its last operation. */
    public boolean quiet() { return activeWorkers == 0; }

    /** Reads back every acknowledged file and checks removed ones stay removed; then runs {@code done}. */
    public void verifyAll(Runnable done) {
        if (!quiet()) {
            // a write may still be retrying; judge only what is settled
            scheduler.schedule(VERIFY_RETRY_NANOS, () -> verifyAll(done));
            return;
        }
        List<String> paths = oracle.committedPaths();
        verify(paths, 1, () -> verifyRemoved(oracle.removedPaths(), 0, done));
    }

    /**
     * One round of the read-back over {@code paths}: files that cannot be read are tried again in the next
     * round, 2 s later, up to {@link #VERIFY_ATTEMPTS} rounds (so a run with many lost files still ends).
     */
    private void verify(List<String> paths, int round, Runnable done) {
        List<String> failed = new ArrayList<>();
        java.util.Map<String, String> errors = new java.util.TreeMap<>();
        verifyEach(paths, 0, round, failed, errors, () -> {
            if (failed.isEmpty()) { done.run(); return; }
            if (round < VERIFY_ATTEMPTS) {
                scheduler.schedule(VERIFY_RETRY_NANOS, () -> verify(failed, round + 1, done));
                return;
            }
            judgeLost(failed, 0, errors, done);
        });
    }

    /**
     * Files still unreadable after every round, read chunk by chunk: each chunk that cannot be read must have
     * an excuse of its own ({@link LossJudge}); the chunks that can be read must be right.
     */
    private void judgeLost(List<String> paths, int i, java.util.Map<String, String> errors, Runnable done) {
        if (i == paths.size()) { done.run(); return; }
        String path = paths.get(i);
        client.lookup(path).onComplete((attr, e) -> {
            if (e != null) {
                sim.violation("durability", "acknowledged file " + path + " (" + classes.get(path) + ") cannot be read back: " + errors.get(path)
                        + "; its metadata cannot be looked up: " + e.getMessage());
                judgeLost(paths, i + 1, errors, done);
                return;
            }
            dev.cairn.client.FileReader reader = client.reader(attr);
            int chunks = (int) ((attr.size() + attr.chunkSize() - 1) / attr.chunkSize());
            judgeChunks(path, reader, attr.chunkSize(), attr.size(), 0, chunks, () -> judgeLost(paths, i + 1, errors, done));
        });
    }

    private void judgeChunks(String path, dev.cairn.client.FileReader reader, int chunkSize, long size, int index, int chunks, Runnable done) {
        if (index == chunks) { done.run(); return; }
        long from = (long) index * chunkSize;
        int n = (int) Math.min(chunkSize, size - from);
        readRange(reader, from, new byte[n], 0).onComplete((bytes, e) -> {
            if (e == null) {
                long bad = oracle.model(path).mismatch(from, bytes, 0, bytes.length);
                if (bad >= 0) sim.violation("corrupt-read", "read of chunk " + index + " of " + path + " returned bytes never written (at offset " + bad + ")");
            } else if (from >= oracle.model(path).ackedLength()) {
                // only writes never acknowledged reach this chunk (a commit on the way of a writer that then failed):
                // losing them loses nothing anyone was told is durable
                stats.unacknowledgedLosses++;
            } else {
                String excuse = lossJudge.excuse(path, index);
                if (excuse != null) {
                    stats.excusedLosses++;
                    excuses.add(excuse);
                } else {
                    sim.violation("durability", "chunk " + index + " of acknowledged file " + path + " (" + classes.get(path)
                            + ") cannot be read back, and no fault destroyed its last readable copies: " + e.getMessage());
                }
            }
            judgeChunks(path, reader, chunkSize, size, index + 1, chunks, done);
        });
    }

    private static Promise<byte[]> readRange(dev.cairn.client.FileReader reader, long offset, byte[] into, int at) {
        if (at == into.length) return Promise.completed(into);
        return reader.read(offset + at, into.length - at).flatMap(b -> {
            if (b.length == 0) throw new CairnException(Status.IO, "short read at " + (offset + at));
            System.arraycopy(b, 0, into, at, b.length);
            return readRange(reader, offset, into, at + b.length);
        });
    }

    private void verifyEach(List<String> paths, int i, int round, List<String> failed, java.util.Map<String, String> errors, Runnable done) {
        if (i == paths.size()) { done.run(); return; }
        String path = paths.get(i);
        read(path).onComplete((bytes, e) -> {
            if (e != null) {
                failed.add(path);
                errors.put(path, String.valueOf(e.getMessage()));
            } else if (checkContent(path, bytes)) {
                stats.verified++;
            }
            verifyEach(paths, i + 1, round, failed, errors, done);
        });
    }

    /** Attempts the liveness probe makes per class before it calls the cluster stuck. */
    static final int PROBE_ATTEMPTS = 10;

    /**
     * Liveness, once the faults have stopped and every host is back: for every class the workload uses, a
     * new file is written, closed and read back identical, each within {@link #PROBE_ATTEMPTS} tries.
     */
    public void probe(Runnable done) { probe(0, 1, done); }

    private void probe(int cls, int attempt, Runnable done) {
        if (cls == CLASSES.length) { done.run(); return; }
        String path = "/probe" + cls + "." + attempt;
        long seed = rnd.nextLong();
        int size = 1 + rnd.nextInt(3 * CHUNK_SIZE);
        byte[] data = Oracle.content(seed, size);
        client.create(path, CHUNK_SIZE, CLASSES[cls]).flatMap(attr -> {
            FileWriter w = client.writer(attr);
            return w.write(data, 0, data.length).flatMap(v -> w.close());
        }).flatMap(v -> read(path)).onComplete((bytes, e) -> {
            if (e == null && Arrays.equals(bytes, data)) {
                stats.probed++;
                probe(cls + 1, 1, done);
            } else if (e == null) {
                sim.violation("corrupt-read", "liveness probe " + path + " (" + CLASSES[cls] + ") read back different bytes");
                probe(cls + 1, 1, done);
            } else if (attempt < PROBE_ATTEMPTS) {
                scheduler.schedule(VERIFY_RETRY_NANOS, () -> probe(cls, attempt + 1, done));
            } else {
                sim.violation("liveness", "no " + CLASSES[cls] + " file could be written and read back in " + PROBE_ATTEMPTS
                        + " tries with every host up: " + e.getMessage());
                probe(cls + 1, 1, done);
            }
        });
    }

    private void verifyRemoved(List<String> paths, int i, Runnable done) {
        if (i == paths.size()) { done.run(); return; }
        client.lookup(paths.get(i)).onComplete((a, e) -> {
            if (e == null) sim.violation("metadata", "removed file " + paths.get(i) + " is back");
            else if (CairnException.statusOf(e) != Status.NOT_FOUND) sim.violation("liveness", "lookup of removed " + paths.get(i) + " failed: " + e.getMessage());
            verifyRemoved(paths, i + 1, done);
        });
    }
}
