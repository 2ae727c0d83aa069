package dev.cairn.master.meta;

import dev.cairn.core.async.Promise;
import dev.cairn.core.env.Address;
import dev.cairn.core.env.KvStore;

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

    /**
     * Completes once this replica is known to lead, as of this call, the term it leads (a majority has heard from it
     * since the call, or its leader lease — shorter than any election — still holds), and has applied every entry
     * committed before the call: what a read answered from the replica's state after this sees is then no older than
     * the call (Raft's ReadIndex). Fails with {@code NOT_LEADER} if it does not lead or cannot show it, for whatever
     * reason (a leader cut off from the majority, which may not know yet that another was elected; no answer in time):
     * nothing was done, and the reader may ask another master.
     */
    Promise<Void> confirmLeadership();

    /** Leaves the group (the process is stopping). */
    void stop();

    /** The group's members (their client addresses) as this replica's latest configuration has them. */
    java.util.List<Address> members();

    /**
     * Asks the group, which this replica must lead, to add the master at {@code client} or to remove it; completes
     * with the members once the new configuration is committed (an added master having caught up with the log
     * first). Adding a member or removing a stranger changes nothing. Fails with {@code NOT_LEADER} if this
     * replica does not lead, {@code BAD_REQUEST} if the group would be left without a master.
     */
    Promise<java.util.List<Address>> changeMembers(Address client, boolean add);

    /** What a replica hears from its log. */
    interface Listener {
        /** A committed entry, exactly once per index above the applied one, in log order; applied when this returns. */
        void apply(long term, long index, byte[] entry);

        /** This replica's role changed (or its term did). */
        void roleChanged(Role role);

        /**
         * For a snapshot of the group's state: makes everything applied so far durable in the replica's store,
         * then gives a view of the store as it was when this was called (everything applied up to now, nothing
         * after). The log may then forget the entries the view holds, so the view must never be older than
         * what the store durably holds at the index it claims.
         */
        Promise<KvStore.View> snapshot();

        /**
         * The entries this replica lacks are gone from the log (purged behind a snapshot): the group's state as
         * of entry {@code index} (of {@code term}) replaces the replica's whole state, and entries after
         * {@code index} follow. {@code state} is read once, in key order, before this returns.
         */
        void install(long term, long index, StateReader state);
    }

    /** A snapshot's contents: every key and value of a replica's store at one index, in key order. */
    @FunctionalInterface
    interface StateReader {
        void read(java.util.function.BiConsumer<byte[], byte[]> sink);
    }

    /**
     * A replica's role: leader of {@code term}, or a follower (or candidate) that knows the leader's client
     * address ({@code leader}) or not (null).
     */
    record Role(boolean leads, long term, Address leader) {
        public static final Role UNKNOWN = new Role(false, 0, null);
    }
}
