package dev.cairn.core.rpc;

import dev.cairn.core.async.Promise;
import dev.cairn.core.env.Address;
import dev.cairn.core.env.Cancellable;
import dev.cairn.core.env.Env;
import dev.cairn.core.proto.CairnException;
import dev.cairn.core.proto.Message;
import dev.cairn.core.proto.Status;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.function.LongFunction;

/**
 * Request/response over a node's transport. Each call gets a fresh request id; the reply carrying that
 * id completes the call. A call fails with UNAVAILABLE when it times out or when its connection breaks,
 * so no caller waits forever on a dead peer.
 */
public final class Rpc {
    /** Bound on calls awaiting an answer; past it new calls fail at once instead of piling up. */
    public static final int MAX_PENDING = 100_000;

    private record Pending(Address to, Promise<Message> promise, Cancellable timer) {}

    /** Request ids remembered per peer, and peers remembered, to drop a request delivered twice. */
    public static final int REMEMBERED_RIDS = 1024;
    public static final int REMEMBERED_PEERS = 256;

    /**
     * The last {@link #REMEMBERED_RIDS} request ids from one sender, in a ring in arrival order (the oldest
     * goes first). A sender numbers its requests upwards from a random start, so an id above every one in
     * the ring is new without a look (nearly every request); only one at or below that is searched for.
     */
    private static final class RecentRids {
        final long[] ring = new long[REMEMBERED_RIDS];
        int next, size;
        /** The highest id in the ring (meaningful while size > 0). */
        long max;

        /** Adds {@code rid}; false if it was there already. */
        boolean add(long rid) {
            if (size == 0 || rid > max) {
                max = rid;
            } else {
                for (int i = 0; i < size; i++) if (ring[i] == rid) return false;
            }
            ring[next] = rid;
            next = (next + 1) % ring.length;
            size = Math.min(size + 1, ring.length);
            return true;
        }
    }

    private final Env env;
    private final Map<Long, Pending> pending = new TreeMap<>();
    private long nextRid;
    /** Recent request ids by sender, oldest first (bounded LRU at both levels). */
    private final java.util.LinkedHashMap<Address, RecentRids> seen = new java.util.LinkedHashMap<>(16, 0.75f, true) {
        @Override protected boolean removeEldestEntry(Map.Entry<Address, RecentRids> e) { return size() > REMEMBERED_PEERS; }
    };

    public Rpc(Env env) {
        this.env = env;
        // ids start at a random point, so a restarted node's requests are not mistaken for its earlier ones
        this.nextRid = 1 + (env.random().nextLong() >>> 16);
    }

    /** Sends the request built for a fresh id and completes with the reply of type {@code replyType}. */
    public <R extends Message> Promise<R> call(Address to, LongFunction<? extends Message> request,
                                              Class<R> replyType, long timeoutNanos) {
        if (pending.size() >= MAX_PENDING) {
            return Promise.failed(new CairnException(Status.BUSY, "too many calls in flight"));
        }
        long rid = nextRid++;
        Message m = request.apply(rid);
        assert m.rid() == rid : "request must carry the id it was given";
        Promise<Message> p = new Promise<>();
        Cancellable timer = env.scheduler().schedule(timeoutNanos, () -> {
            if (pending.remove(rid) != null) {
                p.fail(new CairnException(Status.UNAVAILABLE, m.getClass().getSimpleName() + " to " + to + " timed out"));
            }
        });
        pending.put(rid, new Pending(to, p, timer));
        env.transport().send(to, m);
        return p.map(reply -> {
            if (!replyType.isInstance(reply)) {
                throw new CairnException(Status.BAD_REQUEST, "expected " + replyType.getSimpleName()
                        + " from " + to + " but got " + reply.getClass().getSimpleName());
            }
            return replyType.cast(reply);
        });
    }

    /**
     * Offers an inbound message; returns true if it was consumed here: the reply to a call, or a request
     * seen before from the same sender (delivered twice by the network or a retrying proxy: executing it
     * again could undo later work, such as re-creating a file removed since; its first copy is answered).
     */
    public boolean onMessage(Address from, Message m) {
        if (!m.isReply()) {
            return !seen.computeIfAbsent(from, a -> new RecentRids()).add(m.rid());
        }
        Pending p = pending.remove(m.rid());
        if (p == null) return true; // late reply to a call that timed out: drop it
        p.timer.cancel();
        p.promise.complete(m);
        return true;
    }

    /** Fails every call in flight to {@code peer}. */
    public void onDisconnect(Address peer) {
        List<Long> gone = new ArrayList<>();
        for (Map.Entry<Long, Pending> e : pending.entrySet()) if (e.getValue().to.equals(peer)) gone.add(e.getKey());
        for (Long rid : gone) {
            Pending p = pending.remove(rid);
            p.timer.cancel();
            p.promise.fail(new CairnException(Status.UNAVAILABLE, "connection to " + peer + " lost"));
        }
    }

    /** Fails everything in flight (node shutting down). */
    public void failAll(String why) {
        for (Pending p : pending.values()) {
            p.timer.cancel();
            p.promise.fail(new CairnException(Status.UNAVAILABLE, why));
        }
        pending.clear();
    }

    public int inFlight() { return pending.size(); }
}
