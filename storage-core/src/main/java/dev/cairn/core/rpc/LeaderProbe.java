package dev.cairn.core.rpc;

import dev.cairn.core.async.Promise;
import dev.cairn.core.env.Address;
import dev.cairn.core.env.Cancellable;
import dev.cairn.core.env.Log;
import dev.cairn.core.env.Scheduler;
import dev.cairn.core.proto.MasterProtocol.ReplicaStatus;
import dev.cairn.core.proto.MasterProtocol.ReplicaStatusReply;
import java.util.ArrayList;
import java.util.List;
import java.util.function.BooleanSupplier;
import java.util.function.Consumer;
import java.util.function.Supplier;

/**
 * Tells a stopped leader of a master group from a slow one. A leader stopped by {@code SIGSTOP} or on a hung host keeps
 * its connections open and answers nothing, so whoever calls it waits out the call's whole timeout although the others
 * elect a new leader within a second or two. A call {@linkplain #watch watched} here that goes unanswered for {@link
 * #PROBE_AFTER_NANOS} starts a probe: every master is asked about itself at once, and only if the one called does not
 * answer within {@link #PROBE_CALL_NANOS} while another says it leads and serves is that other one named. A leader that
 * is merely slow (a long commit, a collection) still answers about itself and keeps its callers; a master that wrongly
 * believes it leads (deposed, not yet aware) is not followed away from one that answers. One probe at a time per
 * caller, whatever the calls waiting: a call whose tick finds that a probe finished since it began has named a leader
 * in place of the one it waits on goes there without probing again.
 */
public final class LeaderProbe {
    /** A call unanswered this long starts a probe, and another each time this passes again while it waits. */
    public static final long PROBE_AFTER_NANOS = 1_000_000_000L;
    /** A master asked about itself that has not answered in this long is taken for stopped. */
    public static final long PROBE_CALL_NANOS = 1_000_000_000L;

    /** A master found leading, and its term (a caller that takes commands from masters fences the old leader with it). */
    public record Leader(Address address, long term) {}

    /** What a probe found: {@code found} leads in place of {@code silent}; the {@code seq}th finding. */
    private record Finding(long seq, Address silent, Leader found) {}

    private final Rpc rpc;
    private final Scheduler scheduler;
    private final Log log;
    private boolean probing;
    /** Findings made so far. */
    private long seq;
    private Finding last;

    public LeaderProbe(Rpc rpc, Scheduler scheduler, Log log) {
        this.rpc = rpc;
        this.scheduler = scheduler;
        this.log = log;
    }

    /**
     * Watches {@code call}, sent to {@code asked} of the group {@code masters}: while it is unanswered and {@code wanted}
     * holds, the group is probed each {@link #PROBE_AFTER_NANOS}; once a leader in place of {@code asked} is found,
     * {@code moved} gets it (once, on the node's loop) and the watch ends. Nothing is watched for a single master.
     */
    public void watch(Promise<?> call, Address asked, Supplier<List<Address>> masters, BooleanSupplier wanted, Consumer<Leader> moved) {
        if (masters.get().size() < 2) return;
        Watch w = new Watch(call, asked, masters, wanted, moved, seq);
        w.tick = scheduler.schedule(PROBE_AFTER_NANOS, w::tick);
        call.onComplete((v, e) -> w.tick.cancel());
    }

    /** One call watched: moves it at most once. */
    private final class Watch {
        final Promise<?> call;
        final Address asked;
        final Supplier<List<Address>> masters;
        final BooleanSupplier wanted;
        final Consumer<Leader> moved;
        /** Findings made before the call was watched: older than the call, they may name a leader it already skipped. */
        final long since;
        Cancellable tick;
        boolean done;

        Watch(Promise<?> call, Address asked, Supplier<List<Address>> masters, BooleanSupplier wanted, Consumer<Leader> moved, long since) {
            this.call = call;
            this.asked = asked;
            this.masters = masters;
            this.wanted = wanted;
            this.moved = moved;
            this.since = since;
        }

        void tick() {
            if (check()) return;
            probe(masters.get(), asked, this::check);
            tick = scheduler.schedule(PROBE_AFTER_NANOS, this::tick);
        }

        /** Whether the watch is over: the call answered, no longer wanted, or moved to a leader found since it began. */
        boolean check() {
            if (done || call.isDone() || !wanted.getAsBoolean()) return true;
            Finding f = last;
            if (f == null || f.seq() <= since || !f.silent().equals(asked)) return false;
            done = true;
            tick.cancel();
            moved.accept(f.found());
            return true;
        }
    }

    /** Names a leader in place of {@code silent} if it did not answer and another leads and serves. */
    private void judge(List<Address> group, List<Promise<ReplicaStatusReply>> asks, Address silent) {
        int s = group.indexOf(silent);
        if (s >= 0 && !asks.get(s).isFailed()) return; // it answers: slow, not stopped
        for (int i = 0; i < group.size(); i++) {
            Promise<ReplicaStatusReply> a = asks.get(i);
            if (i == s || a.isFailed() || !a.value().leads() || !a.value().serving()) continue;
            log.info("master {} answers nothing and {} leads (term {}): going there", silent, group.get(i), a.value().term());
            last = new Finding(++seq, silent, new Leader(group.get(i), a.value().term()));
            return;
        }
    }

    /**
     * Asks every master about itself, unless a probe is under way; a finding is kept for the calls that wait, and
     * {@code then} runs once this probe is over.
     */
    private void probe(List<Address> masters, Address silent, Runnable then) {
        if (probing) return;
        probing = true;
        List<Address> group = List.copyOf(masters);
        List<Promise<ReplicaStatusReply>> asks = new ArrayList<>();
        for (Address m : group) asks.add(rpc.call(m, ReplicaStatus::new, ReplicaStatusReply.class, PROBE_CALL_NANOS));
        Promise.all(asks).onComplete((v, e) -> {
            probing = false;
            judge(group, asks, silent);
            then.run();
        });
    }
}
