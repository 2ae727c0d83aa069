package dev.cairn.master.meta;

import dev.cairn.core.async.Promise;
import dev.cairn.core.async.Unexpected;
import dev.cairn.core.env.Env;
import dev.cairn.core.env.KvBatch;
import dev.cairn.core.env.KvStore;
import dev.cairn.core.env.Log;
import dev.cairn.core.env.Plant;
import dev.cairn.core.proto.CairnException;
import dev.cairn.core.proto.CodecException;
import dev.cairn.core.proto.Status;
import dev.cairn.master.namespace.Namespace;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;

/**
 * A master replica's metadata log over a {@link ReplicatedLog} (a Raft group): a submitted command is
 * proposed as an entry, and every replica applies committed entries, in log order, to its own namespace.
 * Unlike {@link LocalMetaLog}, nothing is applied before it is durable (committed on a majority), so
 * {@link #freeing} and {@link #changing} are always false.
 *
 * <p>The replica's store need not be synced at each apply: the log is the durable record. Each command's apply
 * writes how far the store follows the log ({@link #APPLIED_KEY}: the entry, and within an entry of several
 * commands how many of them) in the same atomic batch as its changes, so after a power loss the store holds some
 * prefix of the log's commands and says which; the log replays the rest, and a replayed entry skips the commands
 * the store already holds.
 *
 * <p>An entry is the proposer's nonce followed by one command or a batch ({@link LogEntry}). The proposer (the
 * leader) keeps the promise of each command it proposed under its nonce and completes it with what its own apply
 * returned: results never cross the wire, and every replica computes the same ones. Under load the leader
 * batches: at most {@link #MAX_ENTRIES_IN_FLIGHT} entries are on their way at once, and the commands submitted
 * meanwhile go together in the next one (one command alone, at once, when the group is idle).
 */
public final class ReplicaMetaLog implements MetaLog, ReplicatedLog.Listener {
    /** How far the store follows the log: the last applied entry's term (8 bytes) and index (8 bytes), then, while an entry of several commands is applied only in part, how many of its commands are (4 bytes). */
    public static final byte[] APPLIED_KEY = "Mapplied".getBytes(StandardCharsets.UTF_8);
    /**
     * Present while a snapshot is being installed over the store: found at start-up, it means an install was cut
     * short and the store holds part of two states, so the store is emptied (the log or a snapshot fills it again).
     */
    public static final byte[] INSTALLING_KEY = "Minstalling".getBytes(StandardCharsets.UTF_8);
    /** An install writes the snapshot's entries in batches of about this many bytes (bounded memory, any size). */
    static final int INSTALL_BATCH_BYTES = 4 << 20;
    /** Keys deleted per batch when a store is emptied. */
    static final int CLEAR_BATCH_KEYS = 10_000;
    /** Commands proposed and not yet applied, at most: past it a submit is refused (BUSY) rather than queued. */
    public static final int MAX_PENDING = 10_000;
    /**
     * Entries proposed and not yet answered, at most. Commands submitted while this many are on their way wait and
     * go together in the next entry: the fewer in flight, the larger the batches (the group's per-entry work is
     * what bounds its rate), the more a command may wait behind one round.
     */
    static final int MAX_ENTRIES_IN_FLIGHT = 2;
    /** One entry's commands at most, and their encoded bytes at most (a larger command goes alone). */
    static final int MAX_BATCH_COMMANDS = 256, MAX_BATCH_BYTES = 256 << 10;

    private final Env env;
    private final KvStore kv;
    private final Namespace namespace;
    private final ReplicatedLog log;
    private final Log logger;
    private final Consumer<ReplicatedLog.Role> roles;
    /** Nonce -> the submitter's promise, for commands this replica proposed. */
    private final Map<Long, Promise<Object>> pending = new HashMap<>();
    /** Commands submitted and not proposed yet (entries were in flight): the next entry takes them. */
    private final java.util.ArrayDeque<Waiting> waiting = new java.util.ArrayDeque<>();
    private int entriesInFlight;
    private long nextNonce;
    private long appliedTerm;
    private long appliedIndex;
    /** Commands of entry {@code appliedIndex + 1} the store holds already (a power loss cut that entry's apply short). */
    private int appliedOfNext;
    /** An entry could not be applied: this replica's state no longer follows the log, and it applies nothing more. */
    private String broken;
    /** Snapshots installed over this replica's store since it started. */
    private int installs;
    /** Entries delivered at or below the applied index (a bug of the log's carrier; each is reported, none applied). */
    private long redelivered;
    /** Told when a snapshot replaced the state (the replica's soft state built on it is out of date). */
    private Runnable installed = () -> {};

    public ReplicaMetaLog(Env env, Namespace namespace, ReplicatedLog log, Consumer<ReplicatedLog.Role> roles) {
        this.env = env;
        this.kv = env.kv();
        this.namespace = namespace;
        this.log = log;
        this.logger = env.log(ReplicaMetaLog.class);
        this.roles = roles;
        this.nextNonce = env.random().nextLong();
        if (kv.get(INSTALLING_KEY) != null) {
            logger.warn("the store holds a snapshot install that was cut short: emptying it (the group's log or snapshot fills it again)");
            clear();
            KvBatch done = new KvBatch();
            done.delete(INSTALLING_KEY);
            kv.write(done, false);
        }
        byte[] a = kv.get(APPLIED_KEY);
        if (a != null) {
            ByteBuffer b = ByteBuffer.wrap(a);
            appliedTerm = b.getLong();
            appliedIndex = b.getLong();
            appliedOfNext = b.remaining() >= 4 ? b.getInt() : 0;
        }
    }

    private record Waiting(byte[] command, Promise<Object> promise) {}

    /** {@link #APPLIED_KEY}'s value: entries up to {@code index} applied, and {@code ofNext} commands of the next one. */
    static byte[] appliedValue(long term, long index, int ofNext) {
        ByteBuffer b = ByteBuffer.allocate(ofNext == 0 ? 16 : 20).putLong(term).putLong(index);
        if (ofNext != 0) b.putInt(ofNext);
        return b.array();
    }

    public void onInstalled(Runnable r) { this.installed = r; }

    public long appliedTerm() { return appliedTerm; }

    /** Snapshots installed over this replica's store since it started. */
    public int installs() { return installs; }

    /** Entries the log delivered again at or below the applied index (none, unless the log's carrier has a bug). */
    public long redelivered() { return redelivered; }

    public long appliedIndex() { return appliedIndex; }

    /** Why this replica stopped applying, or null. */
    public String broken() { return broken; }

    @Override @SuppressWarnings("unchecked")
    public <R> Promise<R> submit(MetaCommand<R> command) {
        if (broken != null) return Promise.failed(new CairnException(Status.IO, "this master's state stopped following the log: " + broken));
        if (pending.size() + waiting.size() >= MAX_PENDING) return Promise.failed(new CairnException(Status.BUSY, "too many metadata commands in flight"));
        Promise<Object> p = new Promise<>();
        waiting.add(new Waiting(MetaCodec.encode(command), p));
        proposeWaiting();
        return (Promise<R>) p;
    }

    /** Proposes the waiting commands, as many to an entry as the limits allow, while fewer than the most entries are on their way. */
    private void proposeWaiting() {
        while (entriesInFlight < MAX_ENTRIES_IN_FLIGHT && !waiting.isEmpty()) {
            List<byte[]> commands = new ArrayList<>();
            long first = nextNonce;
            int bytes = 0;
            while (!waiting.isEmpty() && commands.size() < MAX_BATCH_COMMANDS
                    && (commands.isEmpty() || bytes + waiting.peek().command().length <= MAX_BATCH_BYTES)) {
                Waiting w = waiting.poll();
                commands.add(w.command());
                bytes += w.command().length;
                pending.put(nextNonce++, w.promise());
            }
            int n = commands.size();
            entriesInFlight++;
            log.propose(LogEntry.encode(first, commands)).onComplete((v, e) -> {
                entriesInFlight--;
                if (e != null) {
                    // not applied here (apply() completes what it applies): the outcome is the log's failure
                    for (int i = 0; i < n; i++) {
                        Promise<Object> mine = pending.remove(first + i);
                        if (mine != null) mine.fail(e);
                    }
                }
                proposeWaiting();
            });
        }
    }

    /** A leadership confirmation on its way (reads that came before it was asked wait on it), or null. */
    private Promise<Void> confirming;
    /** Reads that came while {@link #confirming} was on its way: they wait for the next one, asked after it. */
    private Promise<Void> nextConfirm;

    /**
     * Reads share confirmations: one is on its way at a time, and every read that arrives meanwhile waits for the one
     * asked after it completes (a confirmation asked before a read arrived cannot vouch for it: the leader may have
     * been deposed in between). Under load that is one confirmation per round trip, not one per read.
     */
    @Override public Promise<Void> readBarrier() {
        if (confirming == null) {
            Promise<Void> p = new Promise<>();
            confirming = p;
            confirmInto(p);
            return p;
        }
        if (nextConfirm == null) nextConfirm = new Promise<>();
        return nextConfirm;
    }

    private void confirmInto(Promise<Void> p) {
        log.confirmLeadership().onComplete((v, e) -> {
            confirming = null;
            Promise<Void> next = nextConfirm;
            nextConfirm = null;
            if (next != null) {
                confirming = next;
                confirmInto(next);
            }
            if (e != null) p.fail(e);
            else p.complete(null);
        });
    }

    @Override public void apply(long term, long index, byte[] entry) {
        if (index <= appliedIndex) {
            // the log handed back an entry the store holds: applying it again would redo its change and move the index back
            redelivered++;
            Unexpected.report(new IllegalStateException("log entry " + index + " delivered again (the store holds the log up to " + appliedIndex + ")"));
            return;
        }
        if (broken != null) return;
        LogEntry decoded;
        try {
            decoded = LogEntry.decode(entry);
        } catch (CodecException e) {
            // applying past an entry this replica cannot read would make its state silently differ from the others'
            broken = "entry " + index + ": " + e.getMessage();
            logger.warn("cannot apply metadata log entry {} ({}): this master stops applying and serving", index, e.getMessage());
            failPending(new CairnException(Status.IO, broken));
            return;
        }
        List<MetaCommand<?>> commands = decoded.commands();
        // commands of this entry the store already holds (its apply was cut short by a power loss): not applied again
        int from = index == appliedIndex + 1 ? Math.min(appliedOfNext, commands.size()) : 0;
        Object[] results = new Object[commands.size()];
        Throwable[] errors = new Throwable[commands.size()];
        for (int i = from; i < commands.size(); i++) {
            KvBatch batch = new KvBatch();
            try {
                results[i] = namespace.apply(commands.get(i), batch);
            } catch (RuntimeException e) {
                batch = new KvBatch(); // refused: it wrote nothing, on every replica alike
                errors[i] = Unexpected.report(e);
            }
            boolean last = i == commands.size() - 1;
            batch.put(APPLIED_KEY, last ? appliedValue(term, index, 0) : appliedValue(appliedTerm, appliedIndex, i + 1));
            kv.write(batch, false);
            appliedOfNext = last ? 0 : i + 1;
        }
        appliedTerm = term;
        appliedIndex = index;
        appliedOfNext = 0;
        if (commands.size() > 1) env.hazard(dev.cairn.core.env.Hazard.BATCH_APPLIED);
        // answered once the whole entry is applied: a reply's callback sees the state after it, as with one command
        // (commands skipped above were proposed before this replica restarted: nobody here waits for them)
        for (int i = from; i < commands.size(); i++) {
            Promise<Object> p = pending.remove(decoded.nonce() + i);
            if (p == null) continue;
            if (errors[i] != null) p.fail(errors[i]);
            else p.complete(results[i]);
        }
    }

    @Override public void roleChanged(ReplicatedLog.Role role) {
        // the outcome is unknown (the entry may still commit under the new leader): a client retries under the same op
        // id, at the leader named here if one is known
        if (!role.leads()) {
            failPending(new CairnException(Status.UNAVAILABLE, dev.cairn.core.proto.MasterProtocol.LEADERSHIP_LOST + ": the change may or may not have been made"
                    + (role.leader() == null ? "" : "; leader=" + role.leader())));
        }
        roles.accept(role);
    }

    @Override public Promise<KvStore.View> snapshot() {
        KvStore.View view = kv.view();
        // the view holds what was applied up to now; the synced (empty) batch makes all of that durable
        return kv.write(new KvBatch(), !env.planted(Plant.SNAPSHOT_NOT_DURABLE)).then((v, e) -> {
            if (e == null) return Promise.completed(view);
            view.close();
            return Promise.failed(e);
        });
    }

    @Override public void install(long term, long index, ReplicatedLog.StateReader state) {
        assert index > appliedIndex : "snapshot at " + index + " installed over a store at " + appliedIndex;
        failPending(new CairnException(Status.UNAVAILABLE, "this master's state is being replaced by a snapshot"));
        logger.info("installing the group's snapshot at log entry {} (term {}) over this master's store (at entry {})", index, term, appliedIndex);
        KvBatch mark = new KvBatch();
        mark.put(INSTALLING_KEY, ByteBuffer.allocate(8).putLong(index).array());
        kv.write(mark, false);
        if (!env.planted(Plant.INSTALL_OVER_OLD_STATE)) clear();
        KvBatch[] batch = {new KvBatch()};
        long[] bytes = {0}, keys = {0};
        int[] ofNext = {0};
        state.read((k, v) -> {
            if (java.util.Arrays.equals(k, INSTALLING_KEY) || java.util.Arrays.equals(k, APPLIED_KEY)) {
                if (java.util.Arrays.equals(k, APPLIED_KEY)) {
                    long at = ByteBuffer.wrap(v).getLong(8);
                    if (at > index) throw new IllegalStateException("a snapshot claiming entry " + index + " holds entry " + at);
                    // a state taken while an entry's apply was cut short holds some of its commands: they are not applied again
                    if (at == index && v.length >= 20) ofNext[0] = ByteBuffer.wrap(v).getInt(16);
                }
                return;
            }
            batch[0].put(k, v);
            bytes[0] += k.length + v.length;
            keys[0]++;
            if (bytes[0] >= INSTALL_BATCH_BYTES) {
                kv.write(batch[0], false);
                batch[0] = new KvBatch();
                bytes[0] = 0;
            }
        });
        batch[0].put(APPLIED_KEY, appliedValue(term, index, ofNext[0]));
        batch[0].delete(INSTALLING_KEY);
        // durable before anything is done on the strength of it (the log behind it is gone)
        kv.write(batch[0], true).onComplete((v, e) -> {
            if (e != null) logger.warn("the installed snapshot could not be made durable: {}", e.toString());
        });
        appliedTerm = term;
        appliedIndex = index;
        appliedOfNext = ofNext[0];
        broken = null;
        installs++;
        namespace.forgetCached();
        logger.info("installed the snapshot at log entry {}: {} keys", index, keys[0]);
        installed.run();
    }

    /** Deletes every key but the install mark, in bounded batches. */
    private void clear() {
        while (true) {
            KvBatch b = new KvBatch();
            int[] n = {0};
            kv.scan(new byte[0], (k, v) -> {
                if (java.util.Arrays.equals(k, INSTALLING_KEY)) return true;
                b.delete(k);
                return ++n[0] < CLEAR_BATCH_KEYS;
            });
            if (n[0] == 0) return;
            kv.write(b, false);
        }
    }

    /** Fails every command proposed and not yet applied: its outcome is unknown (it may still commit). */
    public void failPending(Throwable why) {
        if (pending.isEmpty() && waiting.isEmpty()) return;
        List<Promise<Object>> all = new ArrayList<>(pending.values());
        pending.clear();
        for (Waiting w : waiting) all.add(w.promise()); // never proposed: not made (a retry makes it)
        waiting.clear();
        for (Promise<Object> p : all) p.fail(why);
    }

    @Override public boolean freeing(long chunkId) { return false; }

    @Override public boolean changing(long inode) { return false; }
}
