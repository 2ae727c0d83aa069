package dev.cairn.core.env;

import java.util.Locale;

/**
 * Bugs the simulator can plant in the node code ({@code ./cairn sim --plant NAME}) to prove that its
 * invariant checkers can fail. The real runtime never plants anything ({@link Env#planted} is false);
 * each hook in the node code is one {@code if} naming the plant, so the correct path stays the
 * obvious one to read. Each is a realistic mistake of one of the kinds the durability contract rests on:
 * fsync order, chain order, commit order, header slots, version rules, tidying, checksum coverage,
 * placement and leases. {@code PlantedBugTest} shows each caught by the standing sweep.
 */
public enum Plant {
    /** A chunkserver answers a sync without fsyncing the data, the header or the name. */
    ACK_BEFORE_FSYNC,
    /** The planner deletes extra copies without checking that the copies it keeps are current. */
    DELETE_UNCHECKED,
    /** Placement forgets that it already chose a server: two copies or parts of a chunk land on one host. */
    TWO_ON_ONE_HOST,
    /** Write leases are timed on wall clocks, so a step or skew between hosts shortens or stretches them. */
    WALL_CLOCK_LEASES,
    /** A chunkserver answers a chain sync once its own fsync is done, without waiting for the servers after it. */
    CHAIN_SYNC_EARLY,
    /** The planner tidies (drops extra, leaving and stale copies of) chunks that are below their goal. */
    TIDY_BELOW_GOAL,
    /** A replica counts as current at any version up to the record's, without the data version as lower bound. */
    CURRENT_WITHOUT_LOWER_BOUND,
    /** A chunk's new header goes into the slot holding the newest durable header (overwriting it). */
    HEADER_OVER_DURABLE_SLOT,
    /** A chunk's header is written but not fsynced before the sync is answered. */
    HEADER_NOT_SYNCED,
    /** A new chunk file's directory entry is never fsynced. */
    DIR_NOT_SYNCED,
    /** Data and header share one fsync, so the disk may persist the header before the data it vouches for. */
    HEADER_BEFORE_DATA,
    /** The client acknowledges a sync or close before the master has committed the file's length. */
    COMMIT_NOT_AWAITED,
    /** The master answers a length commit (any metadata change) without syncing its log. */
    LOG_NOT_SYNCED,
    /** A read verifies every checksum block it touches but the last. */
    LAST_BLOCK_UNVERIFIED,
    /** The master counts a reported copy as current without checking it holds the committed length. */
    COPY_LENGTH_UNJUDGED,
    /** A chunkserver takes client writes at a version after the lease's write window closed. */
    LEASE_WINDOW_IGNORED,
    /** A master replica hands out a snapshot of its store without making the store durable first (the log behind it is purged). */
    SNAPSHOT_NOT_DURABLE,
    /** A master replica installs a snapshot over its store without emptying it first (keys the snapshot lacks stay). */
    INSTALL_OVER_OLD_STATE,
    /** The NFS gateway's write verifier is the same at every start, so clients never resend the UNSTABLE writes a restart lost. */
    GATEWAY_VERIFIER_REUSED,
    /** The NFS gateway answers a DEALLOCATE once its zeros are written, before they are durable and committed. */
    DEALLOCATE_NOT_SYNCED,
    /** A chunkserver overwrites pages the newest durable header names where they are, not at their other place. */
    OVERWRITE_IN_PLACE,
    /** A client's chunk sync counts as durable every write the session holds when its answer comes, not only those sent before it. */
    SYNC_COVERS_LATER_WRITES,
    /** The NFS gateway lets go of a COMMIT's synced writes before the master has answered its length commit. */
    RELEASE_BEFORE_COMMIT;

    /** The command-line name, e.g. {@code ack-before-fsync}. */
    public String cliName() { return name().toLowerCase(Locale.ROOT).replace('_', '-'); }

    public static Plant parse(String s) {
        for (Plant p : values()) if (p.cliName().equals(s.trim().toLowerCase(Locale.ROOT)) || p.name().equalsIgnoreCase(s.trim())) return p;
        StringBuilder names = new StringBuilder();
        for (Plant p : values()) names.append(names.length() == 0 ? "" : ", ").append(p.cliName());
        throw new IllegalArgumentException("unknown plant '" + s + "' (" + names + ")");
    }
}
