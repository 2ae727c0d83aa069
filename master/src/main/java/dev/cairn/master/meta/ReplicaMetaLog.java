package dev.cairn.master.meta;

import dev.cairn.core.async.Promise;
import dev.cairn.core.async.Unexpected;
import dev.cairn.core.env.Env;
import dev.cairn.core.env.KvBatch;
import dev.cairn.core.env.KvStore;
import dev.cairn.core.env.Log;
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
 * <p>The replica's store need not be synced at each apply: the log is the durable record. Each apply writes
 * the entry's index ({@link #APPLIED_KEY}) in the same atomic batch as its changes, so after a power loss
 * the store holds some prefix of the log and says which; the log replays the rest.
 *
 * <p>An entry is the proposer's nonce followed by the command. The proposer (the leader) keeps the promise
 * of each entry it proposed under its nonce and completes it with what its own apply returned: results never
 * cross the wire, and every replica computes the same ones.
 */
public final class ReplicaMetaLog implements MetaLog, ReplicatedLog.Listener {
    /** The last applied entry: term (8 bytes), index (8 bytes). */
    public static final byte[] APPLIED_KEY = "Mapplied".getBytes(StandardCharsets.UTF_8);
    /** Commands proposed and not yet applied, at most: past it a submit is refused (BUSY) rather than queued. */
    public static final int MAX_PENDING = 10_000;

    private final Env env;
    private final KvStore kv;
    private final Namespace namespace;
    private final ReplicatedLog log;
    private final Log logger;
    private final Consumer<ReplicatedLog.Role> roles;
    /** Nonce -> the submitter's promise, for entries this replica proposed. */
    private final Map<Long, Promise<Object>> pending = new HashMap<>();
    private long nextNonce;
    private long appliedTerm;
    private long appliedIndex;
    /** An entry could not be applied: this replica's state no longer follows the log, and it applies nothing more. */
    private String broken;

    public ReplicaMetaLog(Env env, Namespace namespace, ReplicatedLog log, Consumer<ReplicatedLog.Role> roles) {
        this.env = env;
        this.kv = env.kv();
        this.namespace = namespace;
        this.log = log;
        this.logger = env.log(ReplicaMetaLog.class);
        this.roles = roles;
        this.nextNonce = env.random().nextLong();
        byte[] a = kv.get(APPLIED_KEY);
        if (a != null) {
            ByteBuffer b = ByteBuffer.wrap(a);
            appliedTerm = b.getLong();
            appliedIndex = b.getLong();
        }
    }

    public long appliedTerm() { return appliedTerm; }

    public long appliedIndex() { return appliedIndex; }

    /** Why this replica stopped applying, or null. */
    public String broken() { return broken; }

    @Override @SuppressWarnings("unchecked")
    public <R> Promise<R> submit(MetaCommand<R> command) {
        if (broken != null) return Promise.failed(new CairnException(Status.IO, "this master's state stopped following the log: " + broken));
        if (pending.size() >= MAX_PENDING) return Promise.failed(new CairnException(Status.BUSY, "too many metadata commands in flight"));
        long nonce = nextNonce++;
        byte[] body = MetaCodec.encode(command);
        byte[] entry = ByteBuffer.allocate(8 + body.length).putLong(nonce).put(body).array();
        Promise<Object> p = new Promise<>();
        pending.put(nonce, p);
        log.propose(entry).onComplete((v, e) -> {
            if (e == null) return; // applied: apply() completed it
            Promise<Object> mine = pending.remove(nonce);
            if (mine != null) mine.fail(e);
        });
        return (Promise<R>) p;
    }

    @Override public void apply(long term, long index, byte[] entry) {
        assert index > appliedIndex : "entry " + index + " applied after " + appliedIndex;
        if (broken != null) return;
        long nonce;
        MetaCommand<?> command;
        try {
            if (entry.length < 9) throw new CodecException("log entry of " + entry.length + " bytes");
            nonce = ByteBuffer.wrap(entry).getLong();
            command = MetaCodec.decode(java.util.Arrays.copyOfRange(entry, 8, entry.length));
        } catch (CodecException e) {
            // applying past an entry this replica cannot read would make its state silently differ from the others'
            broken = "entry " + index + ": " + e.getMessage();
            logger.warn("cannot apply metadata log entry {} ({}): this master stops applying and serving", index, e.getMessage());
            failPending(new CairnException(Status.IO, broken));
            return;
        }
        KvBatch batch = new KvBatch();
        Object result = null;
        Throwable error = null;
        try {
            result = namespace.apply(command, batch);
        } catch (RuntimeException e) {
            batch = new KvBatch(); // refused: it wrote nothing, on every replica alike
            error = Unexpected.report(e);
        }
        batch.put(APPLIED_KEY, ByteBuffer.allocate(16).putLong(term).putLong(index).array());
        kv.write(batch, false);
        appliedTerm = term;
        appliedIndex = index;
        Promise<Object> p = pending.remove(nonce);
        if (p == null) return;
        if (error != null) p.fail(error);
        else p.complete(result);
    }

    @Override public void roleChanged(ReplicatedLog.Role role) {
        if (!role.leads()) failPending(new CairnException(Status.UNAVAILABLE, "this master lost its leadership: the change may or may not have been made"));
        roles.accept(role);
    }

    /** Fails every command proposed and not yet applied: its outcome is unknown (it may still commit). */
    public void failPending(Throwable why) {
        if (pending.isEmpty()) return;
        List<Promise<Object>> all = new ArrayList<>(pending.values());
        pending.clear();
        for (Promise<Object> p : all) p.fail(why);
    }

    @Override public boolean freeing(long chunkId) { return false; }

    @Override public boolean changing(long inode) { return false; }
}
