package dev.cairn.sim.runtime;

import dev.cairn.core.env.Cancellable;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.function.Consumer;

/**
 * The deterministic world: one event queue ordered by (virtual time, sequence number), run on the
 * caller's thread. Every host task, message delivery, disk completion and fault is an event here, and
 * each one executed is folded into the {@link TraceHash}. Same seed, same events, same hash.
 */
public final class Simulation {
    /** Event kinds folded into the trace. */
    public enum Kind { TASK, TIMER, DELIVER, DISCONNECT, DISK, KV, FAULT, CHECK }

    private final class Event implements Cancellable {
        /** When it runs: as scheduled, or later if its host was paused then. */
        long time;
        final long seq;
        final SimHost host;
        final int incarnation;
        final Kind kind;
        final long digest;
        final Runnable action;
        boolean cancelled;
        /** In the queue: not yet polled. */
        boolean queued = true;

        Event(long time, long seq, SimHost host, Kind kind, long digest, Runnable action) {
            this.time = time;
            this.seq = seq;
            this.host = host;
            this.incarnation = host == null ? 0 : host.incarnation();
            this.kind = kind;
            this.digest = digest;
            this.action = action;
        }

        @Override public void cancel() {
            if (!cancelled && queued) cancelledQueued++;
            cancelled = true;
        }
    }

    /** Wall-clock origin of every simulated host (2026-01-01T00:00:00Z) before its own offset. */
    public static final long EPOCH_MILLIS = 1_767_225_600_000L;

    private final long seed;
    private final SplittableRandom random;
    private final EventQueue<Event> queue = new EventQueue<>();
    /** Cancelled events still in the queue; past {@link #COMPACT_MIN} and half the queue they are dropped ({@link #compact}). */
    private int cancelledQueued;
    private static final int COMPACT_MIN = 256;
    private final TraceHash trace = new TraceHash();
    private final List<SimHost> hosts = new ArrayList<>();
    private final List<String> violations = new ArrayList<>();
    private Consumer<String> traceSink;
    private java.util.Set<dev.cairn.core.env.Plant> plants = java.util.EnumSet.noneOf(dev.cairn.core.env.Plant.class);
    private long now;
    private long seq;
    private boolean stopped;

    public Simulation(long seed) {
        this.seed = seed;
        this.random = new SplittableRandom(seed);
    }

    public long seed() { return seed; }

    public long now() { return now; }

    public TraceHash trace() { return trace; }

    /** The world's own random source (faults, latencies); hosts get their own split streams. */
    public SplittableRandom random() { return random; }

    public List<String> violations() { return violations; }

    /** Bugs planted in the node code for this run (see {@link dev.cairn.core.env.Plant}). */
    public void plant(java.util.Set<dev.cairn.core.env.Plant> bugs) { plants = java.util.EnumSet.noneOf(dev.cairn.core.env.Plant.class); plants.addAll(bugs); }

    public boolean planted(dev.cairn.core.env.Plant bug) { return plants.contains(bug); }

    /** Decides what a hazard point reached by node code sets off (the fault injector's aimed faults). */
    public interface HazardListener { void reached(SimHost host, dev.cairn.core.env.Hazard point); }

    private HazardListener hazardListener = (h, p) -> { };

    public void onHazard(HazardListener l) { hazardListener = l; }

    void hazard(SimHost host, dev.cairn.core.env.Hazard point) { hazardListener.reached(host, point); }

    /**
     * Wraps every power loss of a disk that tears unsynced writes: the checker snapshots the durable images
     * before and judges them after (a power loss must never take back what was durable).
     */
    public interface TearListener { void powerLoss(SimHost host, SimDisk disk, Runnable tear); }

    private TearListener tearListener = (h, d, tear) -> tear.run();

    public void onTear(TearListener l) { tearListener = l; }

    void tearing(SimHost host, SimDisk disk, Runnable tear) { tearListener.powerLoss(host, disk, tear); }

    /** Told of every write a node makes to a file, before it lands (the checkers watch what it overwrites). */
    public interface WriteListener { void writing(SimHost host, SimDisk disk, String file, long offset, int length); }

    private WriteListener writeListener = (h, d, f, o, n) -> { };

    public void onWrite(WriteListener l) { writeListener = l; }

    void writing(SimHost host, SimDisk disk, String file, long offset, int length) { writeListener.writing(host, disk, file, offset, length); }

    /** Told of every file a node deletes (the checkers judge whether it took a copy the cluster still needed). */
    public interface DeleteListener { void deleting(SimHost host, SimDisk disk, String file); }

    private DeleteListener deleteListener = (h, d, f) -> { };

    public void onDelete(DeleteListener l) { deleteListener = l; }

    void deleting(SimHost host, SimDisk disk, String file) { deleteListener.deleting(host, disk, file); }

    /** Told when a fault damages a file as it happens (a misdirected write), for the fault history. */
    public interface DamageListener { void damaged(SimHost host, String disk, String file); }

    private DamageListener damageListener = (h, d, f) -> { };

    public void onDamage(DamageListener l) { damageListener = l; }

    void damaged(SimHost host, String disk, String file) { damageListener.damaged(host, disk, file); }

    /** Told of every message as a node is handed it (the checkers watch what the masters were told). */
    public interface DeliveryListener { void delivered(SimHost to, dev.cairn.core.proto.Message m); }

    private DeliveryListener deliveryListener = (h, m) -> { };

    public void onDeliver(DeliveryListener l) { deliveryListener = l; }

    void delivered(SimHost to, dev.cairn.core.proto.Message m) { deliveryListener.delivered(to, m); }

    /** Records a broken invariant: {@code kind} names it (durability, corrupt-read, convergence, ...), for the sweep's summary. */
    public void violation(String kind, String what) {
        violations.add(String.format(java.util.Locale.ROOT, "t=%.3fs [%s] %s", now / 1e9, kind, what));
    }

    /** The kind of a recorded violation (the bracketed word). */
    public static String kindOf(String violation) {
        int a = violation.indexOf('['), b = violation.indexOf(']');
        return a >= 0 && b > a ? violation.substring(a + 1, b) : "other";
    }

    /** Writes one line per executed event (for --trace). */
    public void traceTo(Consumer<String> sink) { this.traceSink = sink; }

    SimHost addHost(SimHost h) {
        hosts.add(h);
        return h;
    }

    public List<SimHost> hosts() { return hosts; }

    /** Schedules {@code action} on {@code host} (null: the world) after {@code delay} virtual nanos. */
    public Cancellable at(long delay, SimHost host, Kind kind, long digest, Runnable action) {
        if (delay < 0) throw new IllegalArgumentException("negative delay");
        Event e = new Event(now + delay, seq++, host, kind, digest, action);
        queue.add(e.time, e.seq, e);
        return e;
    }

    /** The host whose event is running (null: the world's), for reports of unexpected errors. */
    private SimHost running;
    /** Unexpected errors already recorded (one error may be caught, then seen again further down its chain). */
    private final java.util.Set<Throwable> reported = java.util.Collections.newSetFromMap(new java.util.IdentityHashMap<>());

    /**
     * An error node code caught that the protocol does not define ({@link dev.cairn.core.async.Unexpected}):
     * a bug, whatever the code did with it next (an error reply, a retry). Recorded once per throwable.
     */
    private void unexpected(Throwable t) {
        if (reported.size() > 10_000 || !reported.add(t)) return;
        StackTraceElement[] st = t.getStackTrace();
        StringBuilder where = new StringBuilder();
        for (int i = 0; i < Math.min(3, st.length); i++) where.append(i == 0 ? "" : " < ").append(st[i]);
        violation("unexpected-error", t + " on " + (running == null ? "world" : running.name()) + " at " + where);
    }

    /** Runs events until the queue is empty, {@link #stop()} is called, or virtual time passes {@code until}. */
    public void runUntil(long until) {
        java.util.function.Consumer<Throwable> outer = dev.cairn.core.async.Unexpected.install(this::unexpected);
        try {
            loop(until);
        } finally {
            dev.cairn.core.async.Unexpected.install(outer);
        }
    }

    private void loop(long until) {
        while (!stopped) {
            if (cancelledQueued > COMPACT_MIN && cancelledQueued > queue.size() / 2) compact();
            if (queue.size() == 0 || queue.firstTime() > until) break;
            Event e = queue.poll();
            e.queued = false;
            if (e.cancelled) {
                cancelledQueued--;
                continue;
            }
            // a host's events die with its incarnation: a crash loses every pending task and completion
            if (e.host != null && (e.incarnation != e.host.incarnation() || !e.host.isUp())) continue;
            // a paused host (a stopped process) runs nothing until it continues: its events wait, in their order
            if (e.host != null && e.host.pausedUntil() - e.time > 0) {
                e.time = e.host.pausedUntil();
                e.queued = true;
                queue.add(e.time, seq++, e);
                continue;
            }
            assert e.time >= now : "time went backwards";
            now = e.time;
            int hostIdx = e.host == null ? -1 : e.host.index();
            trace.fold(now, hostIdx, e.kind.ordinal(), e.digest);
            if (traceSink != null) {
                traceSink.accept(String.format(java.util.Locale.ROOT, "%d %s %s %016x",
                        now, e.host == null ? "world" : e.host.name(), e.kind, e.digest));
            }
            running = e.host;
            try {
                e.action.run();
            } catch (RuntimeException | AssertionError ex) {
                if (reported.add(ex)) {
                    violation("crash", "uncaught " + ex + " on " + (e.host == null ? "world" : e.host.name()) + " in " + e.kind
                            + " at " + (ex.getStackTrace().length > 0 ? ex.getStackTrace()[0] : "?"));
                }
            } finally {
                running = null;
            }
        }
        if (!stopped && now < until) now = until;
    }

    public void stop() { stopped = true; }

    /**
     * Drops cancelled events from the queue. RPC timeouts are cancelled when the reply comes but would stay
     * queued until they were due, deepening the heap and each costing a poll (in a steady run nine in ten
     * queued events were such timers, about a fifth of all polls); the rest keep their order
     * (keys are unique), so this changes no run.
     */
    private void compact() {
        queue.removeIf(e -> e.cancelled);
        cancelledQueued = 0;
    }

    /**
     * Runs {@code op} on {@code host} and the world until its promise completes (tests and tools, not the
     * run loop): returns the value, rethrows the failure, or fails if {@code limitNanos} of virtual time
     * pass first.
     */
    public <T> T await(SimHost host, java.util.function.Supplier<dev.cairn.core.async.Promise<T>> op, long limitNanos) {
        Object[] box = new Object[2];
        boolean[] done = {false};
        at(0, host, Kind.TASK, 0, () -> {
            dev.cairn.core.async.Promise<T> p;
            try { p = op.get(); } catch (RuntimeException e) { p = dev.cairn.core.async.Promise.failed(e); }
            p.onComplete((v, e) -> { box[0] = v; box[1] = e; done[0] = true; });
        });
        long deadline = now + limitNanos;
        while (!done[0] && now < deadline && !stopped) runUntil(Math.min(deadline, now + 10_000_000));
        if (!done[0]) throw new IllegalStateException("operation on " + host.name() + " did not finish within " + limitNanos / 1_000_000_000L + "s of virtual time");
        if (box[1] instanceof RuntimeException r) throw r;
        if (box[1] != null) throw new IllegalStateException((Throwable) box[1]);
        @SuppressWarnings("unchecked") T v = (T) box[0];
        return v;
    }

    public boolean stopped() { return stopped; }

    public int pendingEvents() { return queue.size(); }
}
