package dev.cairn.master.meta;

import dev.cairn.core.async.Promise;
import dev.cairn.core.env.Address;

/**
 * A totally ordered log replicated over a group of masters (Raft): the seam between a master replica and
 * its consensus library ({@code dev.cairn.master.ratis} on the real machine). Everything it calls back runs
 * on the replica's own scheduler, one call at a time.
 */
public interface ReplicatedLog {
    /**
     * Joins the group. Committed entries after {@code appliedIndex} (the last one the replica's state holds,
     * at {@code appliedTerm}) are then delivered to {@link Listener#apply} in log order.
     */
    void start(long appliedTerm, long appliedIndex, Listener listener);

    /**
     * Appends an entry if this replica leads. Completes once the entry is committed (durable on a majority)
     * and applied here; fails with {@code NOT_LEADER} if this replica does not lead, or {@code UNAVAILABLE} if
     * the outcome is unknown (leadership lost on the way: the entry may still commit).
     */
    Promise<Void> propose(byte[] entry);

    /** Leaves the group (the process is stopping). */
    void stop();

    /** What a replica hears from its log. */
    interface Listener {
        /** A committed entry, exactly once per index above the applied one, in log order; applied when this returns. */
        void apply(long term, long index, byte[] entry);

        /** This replica's role changed (or its term did). */
        void roleChanged(Role role);
    }

    /**
     * A replica's role: leader of {@code term}, or a follower (or candidate) that knows the leader's client
     * address ({@code leader}) or not (null).
     */
    record Role(boolean leads, long term, Address leader) {
        public static final Role UNKNOWN = new Role(false, 0, null);
    }
}
