package dev.cairn.core.rpc;

import dev.cairn.core.async.Promise;
import dev.cairn.core.env.Address;
import dev.cairn.core.env.Log;
import dev.cairn.core.proto.MasterProtocol.ReplicaStatus;
import dev.cairn.core.proto.MasterProtocol.ReplicaStatusReply;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Consumer;

/**
 * Tells a stopped leader of a master group from a slow one. A leader stopped by {@code SIGSTOP} or on a hung host keeps
 * its connections open and answers nothing, so whoever calls it waits out the call's whole timeout although the others
 * elect a new leader within a second or two. A caller whose call has gone unanswered for a while probes: every master
 * is asked about itself at once, and only if the one called does not answer within {@link #PROBE_CALL_NANOS} while
 * another says it leads and serves is that other one named. A leader that is merely slow (a long commit, a collection)
 * still answers about itself and keeps its callers; a master that wrongly believes it leads (deposed, not yet aware) is
 * not followed away from one that answers. One probe at a time per caller, whatever the calls waiting.
 */
public final class LeaderProbe {
    /** A master asked about itself that has not answered in this long is taken for stopped. */
    public static final long PROBE_CALL_NANOS = 1_000_000_000L;

    private final Rpc rpc;
    private final Log log;
    private boolean probing;

    public LeaderProbe(Rpc rpc, Log log) {
        this.rpc = rpc;
        this.log = log;
    }

    /**
     * Probes {@code masters} unless a probe is under way; {@code found} gets the address of the master that leads instead
     * of {@code silent}, if {@code silent} did not answer and one does (called on the node's loop, perhaps never).
     */
    public void probe(List<Address> masters, Address silent, Consumer<Address> found) {
        if (probing || masters.size() < 2) return;
        probing = true;
        List<Address> group = List.copyOf(masters);
        List<Promise<ReplicaStatusReply>> asks = new ArrayList<>();
        for (Address m : group) asks.add(rpc.call(m, ReplicaStatus::new, ReplicaStatusReply.class, PROBE_CALL_NANOS));
        Promise.all(asks).onComplete((v, e) -> {
            probing = false;
            int s = group.indexOf(silent);
            if (s >= 0 && !asks.get(s).isFailed()) return; // it answers: slow, not stopped
            for (int i = 0; i < group.size(); i++) {
                Promise<ReplicaStatusReply> a = asks.get(i);
                if (i == s || a.isFailed() || !a.value().leads() || !a.value().serving()) continue;
                log.info("master {} answers nothing and {} leads (term {}): going there", silent, group.get(i), a.value().term());
                found.accept(group.get(i));
                return;
            }
        });
    }
}
