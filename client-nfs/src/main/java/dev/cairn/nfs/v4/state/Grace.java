package dev.cairn.nfs.v4.state;

import dev.cairn.core.async.Promise;
import dev.cairn.core.env.Clock;
import dev.cairn.core.env.KvBatch;
import dev.cairn.core.env.KvStore;
import dev.cairn.core.env.Log;
import dev.cairn.nfs.v4.Nfs4Status;
import java.nio.charset.StandardCharsets;
import java.util.HashSet;
import java.util.HexFormat;
import java.util.Set;
import java.util.function.Predicate;

/**
 * The grace period after a gateway restart (RFC 8881 §8.4.2, RFC 7530 §9.6.2). Open and lock state is in
 * memory, so a restart loses it; clients get it back by reclaiming (OPEN with CLAIM_PREVIOUS, LOCK with
 * reclaim set). For that to be safe, nobody else may take a conflicting open or lock first: for one lease
 * period after a restart, only reclaims are taken and other OPENs, LOCKs and LOCKTs get GRACE.
 *
 * <p>Who may reclaim is known from a record on stable storage (RFC 8881 §8.4.3): every confirmed client's
 * owner is written (synced) before its confirmation is answered, and erased when its lease ends or it is
 * destroyed. A gateway that starts with an empty record has no grace period at all (nobody held state), and
 * the period ends early once every recorded 4.1 client has sent RECLAIM_COMPLETE. A client missing from the
 * record (it came after the last restart and never held state here, or is unknown) gets NO_GRACE.
 */
public final class Grace {
    static final byte[] PREFIX = "nfs4-client/".getBytes(StandardCharsets.US_ASCII);

    private final KvStore kv;
    private final Clock clock;
    private final Log log;
    /** Owners recorded before this start: those may reclaim. */
    private final Set<String> previous = new HashSet<>();
    /** Of those, the ones that said RECLAIM_COMPLETE. */
    private final Set<String> completed = new HashSet<>();
    /** Whether an owner has a confirmed client now (its record is then kept when the period ends). */
    private final Predicate<byte[]> present;
    /** End of the period on the monotonic clock; 0 once it is over. */
    private long endsNanos;

    /**
     * @param kv      stable storage for the record (null: none, so no grace period ever; for protocol tests)
     * @param present whether an owner has a confirmed client now
     */
    public Grace(KvStore kv, Clock clock, Log log, long periodNanos, Predicate<byte[]> present) {
        this.kv = kv;
        this.clock = clock;
        this.log = log;
        this.present = present;
        if (kv != null) {
            kv.scan(PREFIX, (k, v) -> {
                previous.add(new String(k, PREFIX.length, k.length - PREFIX.length, StandardCharsets.US_ASCII));
                return true;
            });
        }
        if (!previous.isEmpty()) {
            endsNanos = clock.nanoTime() + periodNanos;
            log.info("NFS grace period: {} client(s) may reclaim their opens and locks for {} s; other OPENs and LOCKs wait",
                    previous.size(), periodNanos / 1_000_000_000L);
        }
    }

    /** Whether the grace period is on (ending it, and tidying the record, once its time is up or all came back). */
    public boolean active() {
        if (endsNanos == 0) return false;
        if (clock.nanoTime() - endsNanos < 0 && !completed.containsAll(previous)) return true;
        endsNanos = 0;
        int gone = 0;
        KvBatch b = new KvBatch();
        for (String owner : previous) {
            byte[] o = HexFormat.of().parseHex(owner);
            if (present.test(o)) continue;
            b.delete(key(o));
            gone++;
        }
        if (!b.isEmpty()) kv.write(b, false);
        log.info("NFS grace period over: {} of {} client(s) came back", previous.size() - gone, previous.size());
        return false;
    }

    /**
     * May {@code c} reclaim ({@code reclaim}) or take new state? NFS4_OK; GRACE for new state during the
     * period; NO_GRACE for a reclaim outside it, by a client not recorded, or after its RECLAIM_COMPLETE.
     */
    public int admit(Client c, boolean reclaim) {
        boolean on = active();
        if (!reclaim) return on ? Nfs4Status.GRACE : Nfs4Status.NFS4_OK;
        if (!on || c == null || c.reclaimComplete()) return Nfs4Status.NO_GRACE;
        return previous.contains(HexFormat.of().formatHex(c.owner())) ? Nfs4Status.NFS4_OK : Nfs4Status.NO_GRACE;
    }

    /** RECLAIM_COMPLETE: this client has reclaimed all it will. */
    public void reclaimComplete(Client c) {
        completed.add(HexFormat.of().formatHex(c.owner()));
    }

    /** A client was confirmed: on record (synced) before the confirmation is answered. */
    public Promise<Void> confirmed(Client c) {
        if (kv == null) return Promise.completed(null);
        return kv.write(new KvBatch().put(key(c.owner()), new byte[] {(byte) c.minorVersion()}), true);
    }

    /** A client's lease ended, it was destroyed or replaced: off the record (no sync: a leftover only costs a grace period). */
    public void removed(Client c) {
        if (kv != null && c.confirmed()) kv.write(new KvBatch().delete(key(c.owner())), false);
    }

    private static byte[] key(byte[] owner) {
        byte[] hex = HexFormat.of().formatHex(owner).getBytes(StandardCharsets.US_ASCII);
        byte[] k = new byte[PREFIX.length + hex.length];
        System.arraycopy(PREFIX, 0, k, 0, PREFIX.length);
        System.arraycopy(hex, 0, k, PREFIX.length, hex.length);
        return k;
    }
}
