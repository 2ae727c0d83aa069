package dev.cairn.core.rpc;

import dev.cairn.core.async.InFlight;
import dev.cairn.core.async.Promise;
import dev.cairn.core.env.Address;
import dev.cairn.core.env.Cancellable;
import dev.cairn.core.env.Env;
import dev.cairn.core.proto.CairnException;
import dev.cairn.core.proto.Message;
import dev.cairn.core.proto.Status;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.LongFunction;

/**
 * Request/response over a node's transport. Each call gets a fresh request id; the reply carrying that
 * id completes the call. A call fails with UNAVAILABLE when it times out or when its connection breaks,
 * so no caller waits forever on a dead peer.
 *
 * <p>Timeouts share one scheduler timer. Calls made with one timeout value have their deadlines in call
 * order, so each value keeps a lane of its calls ({@link InFlight}), and the timer is armed for the
 * earliest deadline at the head of a lane. A call then costs a lane append instead of a timer of its own
 * that is nearly always cancelled (in a simulated steady run those were about a fifth of all scheduled
 * events).
 */
public final class Rpc {
    /** Bound on calls awaiting an answer; past it new calls fail at once instead of piling up. */
    public static final int MAX_PENDING = 100_000;

    /** A call awaiting its answer (finished once answered, failed or timed out: then out of {@link #pending}). */
    private static final class Pending extends InFlight.Op {
        final long rid;
        final Address to;
        final Class<? extends Message> requestType, replyType;
        final Promise<Message> promise;
        /** On the node's monotonic clock. */
        final long deadline;
        final Lane lane;

        Pending(long rid, Address to, Message request, Class<? extends Message> replyType, Promise<Message> promise, long deadline, Lane lane) {
            this.rid = rid;
            this.to = to;
            this.requestType = request.getClass();
            this.replyType = replyType;
            this.promise = promise;
            this.deadline = deadline;
            this.lane = lane;
        }
    }

    /** Calls made with one timeout value, in call order: their deadlines never decrease along it. */
    private static final class Lane {
        final long timeoutNanos;
        final InFlight<Pending> calls = new InFlight<>();

        Lane(long timeoutNanos) { this.timeoutNanos = timeoutNanos; }
    }

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
    /** Calls awaiting an answer by request id, in id order (ids only grow): the order they are failed in. */
    private final Map<Long, Pending> pending = new LinkedHashMap<>();
    /** One lane per timeout value in use, in order of first use (a handful: callers use named constants). */
    private final List<Lane> lanes = new ArrayList<>();
    /** The timeout timer, armed for {@link #timerAt} (monotonic clock), or null. */
    private Cancellable timer;
    private long timerAt;
    private long nextRid;
    /** Recent request ids by sender, oldest first (bounded LRU at both levels). */
    private final LinkedHashMap<Address, RecentRids> seen = new LinkedHashMap<>(16, 0.75f, true) {
        @Override protected boolean removeEldestEntry(Map.Entry<Address, RecentRids> e) { return size() > REMEMBERED_PEERS; }
    };

    public Rpc(Env env) {
        this.env = env;
        // ids start at a random point, so a restarted node's requests are not mistaken for its earlier ones
        this.nextRid = 1 + (env.random().nextLong() >>> 16);
    }

    /**
     * A fresh id from the request id sequence, for a caller to name something else by (an operation retried
     * under several requests): unique among this node's ids, never handed to a request.
     */
    public long freshId() { return nextRid++; }

    /** Sends the request built for a fresh id and completes with the reply of type {@code replyType}. */
    public <R extends Message> Promise<R> call(Address to, LongFunction<? extends Message> request,
                                              Class<R> replyType, long timeoutNanos) {
        if (pending.size() >= MAX_PENDING) {
            return Promise.failed(new CairnException(Status.BUSY, "too many calls in flight"));
        }
        if (timeoutNanos < 0) throw new IllegalArgumentException("negative timeout " + timeoutNanos);
        long rid = nextRid++;
        Message m = request.apply(rid);
        assert m.rid() == rid : "request must carry the id it was given";
        Promise<Message> p = new Promise<>();
        Pending call = new Pending(rid, to, m, replyType, p, env.clock().nanoTime() + timeoutNanos, lane(timeoutNanos));
        pending.put(rid, call);
        call.lane.calls.add(call);
        arm(call.deadline);
        env.transport().send(to, m);
        @SuppressWarnings("unchecked") Promise<R> typed = (Promise<R>) (Promise<?>) p; // completed only with an R (onMessage)
        return typed;
    }

    private Lane lane(long timeoutNanos) {
        for (Lane l : lanes) if (l.timeoutNanos == timeoutNanos) return l;
        Lane l = new Lane(timeoutNanos);
        lanes.add(l);
        return l;
    }

    /** Makes sure the timer goes off by {@code deadline}. */
    private void arm(long deadline) {
        if (timer != null && timerAt - deadline <= 0) return;
        if (timer != null) timer.cancel();
        timerAt = deadline;
        timer = env.scheduler().schedule(Math.max(0, deadline - env.clock().nanoTime()), this::expire);
    }

    /**
     * The timer went off: ends the calls past their deadline, re-arms for the next, then fails those calls
     * earliest deadline first (their callbacks may call again).
     */
    private void expire() {
        timer = null;
        long now = env.clock().nanoTime();
        List<Pending> expired = new ArrayList<>();
        long next = 0;
        boolean more = false;
        for (Lane l : lanes) {
            for (Pending h; (h = l.calls.oldest()) != null; ) {
                if (h.deadline - now > 0) {
                    if (!more || h.deadline - next < 0) next = h.deadline;
                    more = true;
                    break;
                }
                finish(h);
                expired.add(h);
            }
        }
        if (more) arm(next);
        expired.sort(Comparator.comparingLong((Pending c) -> c.deadline).thenComparingLong(c -> c.rid));
        for (Pending c : expired) {
            c.promise.fail(new CairnException(Status.UNAVAILABLE, c.requestType.getSimpleName() + " to " + c.to + " timed out"));
        }
    }

    /** Ends a call: out of the pending set and its lane; its promise is the caller's to complete. */
    private Promise<Message> finish(Pending c) {
        Pending removed = pending.remove(c.rid);
        assert removed == c;
        c.lane.calls.finish(c);
        return c.promise;
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
        Pending c = pending.get(m.rid());
        if (c == null) return true; // late reply to a call that timed out: drop it
        Promise<Message> p = finish(c);
        if (!c.replyType.isInstance(m)) {
            p.fail(new CairnException(Status.BAD_REQUEST, "expected " + c.replyType.getSimpleName()
                    + " from " + c.to + " but got " + m.getClass().getSimpleName()));
        } else {
            p.complete(m);
        }
        return true;
    }

    /** Fails every call in flight to {@code peer}. */
    public void onDisconnect(Address peer) {
        List<Pending> gone = new ArrayList<>();
        for (Pending c : pending.values()) if (c.to.equals(peer)) gone.add(c);
        for (Pending c : gone) {
            if (c.finished()) continue; // a callback of one failed before it ended it
            finish(c).fail(new CairnException(Status.UNAVAILABLE, "connection to " + peer + " lost"));
        }
    }

    /** Fails everything in flight (node shutting down). */
    public void failAll(String why) {
        if (timer != null) timer.cancel();
        timer = null;
        List<Pending> all = new ArrayList<>(pending.values());
        for (Pending c : all) finish(c);
        for (Pending c : all) c.promise.fail(new CairnException(Status.UNAVAILABLE, why));
    }

    public int inFlight() { return pending.size(); }

    /** Calls held in lanes, finished ones not yet swept included (for tests: what the lanes cost in memory). */
    int laneLength() {
        int n = 0;
        for (Lane l : lanes) n += l.calls.held();
        return n;
    }
}
