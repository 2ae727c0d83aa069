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

    private final Env env;
    private final Map<Long, Pending> pending = new TreeMap<>();
    private long nextRid = 1;

    public Rpc(Env env) {
        this.env = env;
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

    /** Offers an inbound message; returns true if it was the reply to a pending call. */
    public boolean onMessage(Address from, Message m) {
        if (!m.isReply()) return false;
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
