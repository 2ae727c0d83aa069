package dev.cairn.nfs.v4.state;

import dev.cairn.nfs.v4.FileHandle;
import dev.cairn.nfs.v4.Nfs4Status;
import dev.cairn.nfs.v4.state.StateTable.StateId;
import java.util.HashMap;
import java.util.Map;

/**
 * NFSv4.0 state-owner sequencing (RFC 7530 §9.1.7): each open-owner and lock-owner numbers its
 * state-changing requests (OPEN, OPEN_CONFIRM, OPEN_DOWNGRADE, CLOSE for open-owners; LOCK and LOCKU for
 * lock-owners). A request carrying the next number runs; one carrying the last number is a retransmission
 * and gets the reply the first one got, without running again (an OPEN that created a file must not run
 * twice); any other number is BAD_SEQID. 4.1 has sessions for this and ignores these fields.
 *
 * <p>A request is {@link #check checked} before it does anything and {@link #settle settled} with its
 * outcome when it is done. While it runs, a second copy of it gets DELAY (the client retries, and then
 * gets the cached reply). The owner's number moves on for every outcome except those the RFC lists as
 * not advancing it ({@link #advances}).
 */
public final class OwnerSequences {
    /** Owners tracked at most (all clients); past it a request of a new owner gets RESOURCE. */
    public static final int MAX_OWNERS = 65_536;
    /** A reply body kept for replay at most; a longer one is replayed as SERVERFAULT (none of these ops writes that much). */
    public static final int MAX_REPLY_BYTES = 2048;

    /** What a checked request is to do. */
    public sealed interface Verdict {}

    /** Run it, then {@link #settle} the ticket. */
    public record Proceed(Ticket ticket) implements Verdict {}

    /** A retransmission: answer with the first one's outcome (and the handles it left current). */
    public record Replay(int status, byte[] body, FileHandle current, StateId currentStateId) implements Verdict {}

    /** Refused without running: BAD_SEQID, DELAY (the first copy is still running) or RESOURCE. */
    public record Refuse(int status) implements Verdict {}

    /** A request under way: whose, and which number it carries. */
    public record Ticket(String owner, int seqid, int op) {}

    private static final class Sequence {
        final long clientId;
        /** The number of the last settled request that advanced the sequence. */
        int last;
        boolean started;
        /** The number of a request checked and not yet settled, if {@link #running}. */
        int runningSeqid;
        boolean running;
        int op;
        int status;
        byte[] body;
        FileHandle current;
        StateId currentStateId;

        Sequence(long clientId) { this.clientId = clientId; }
    }

    /** A state-owner: an open-owner or a lock-owner of a client. */
    public record Owner(String key, long clientId) {}

    private final Map<String, Sequence> owners = new HashMap<>();

    public static Owner openOwner(long clientId, byte[] owner) {
        return new Owner("open/" + clientId + "/" + java.util.HexFormat.of().formatHex(owner), clientId);
    }

    public static Owner lockOwner(ByteRangeLocks.Owner owner) {
        return new Owner("lock/" + owner.clientId() + "/" + owner.name(), owner.clientId());
    }

    public int size() { return owners.size(); }

    /**
     * Where a request numbered {@code seqid} of {@code owner} stands. An owner not seen before (or
     * forgotten with its client) starts its sequence with this request, whatever its number.
     */
    public Verdict check(Owner owner, int op, int seqid) {
        Sequence s = owners.get(owner.key());
        if (s == null) {
            if (owners.size() >= MAX_OWNERS) return new Refuse(Nfs4Status.RESOURCE);
            s = new Sequence(owner.clientId());
            owners.put(owner.key(), s);
        }
        if (s.running) return new Refuse(seqid == s.runningSeqid ? Nfs4Status.DELAY : Nfs4Status.BAD_SEQID);
        if (s.started && seqid == s.last) {
            if (op != s.op) return new Refuse(Nfs4Status.BAD_SEQID);
            return s.body == null ? new Replay(Nfs4Status.SERVERFAULT, new byte[0], null, null) : new Replay(s.status, s.body, s.current, s.currentStateId);
        }
        if (s.started && seqid != s.last + 1) return new Refuse(Nfs4Status.BAD_SEQID);
        s.running = true;
        s.runningSeqid = seqid;
        return new Proceed(new Ticket(owner.key(), seqid, op));
    }

    /**
     * The request is done: if its outcome advances the sequence, it is now the owner's last request and
     * its reply ({@code body}: the operation's result after the status) is kept for a retransmission.
     */
    public void settle(Ticket t, int status, byte[] body, FileHandle current, StateId currentStateId) {
        Sequence s = owners.get(t.owner());
        if (s == null || !s.running || s.runningSeqid != t.seqid()) return; // forgotten meanwhile (lease ended)
        s.running = false;
        if (!advances(status)) return;
        s.started = true;
        s.last = t.seqid();
        s.op = t.op();
        s.status = status;
        s.body = body.length <= MAX_REPLY_BYTES ? body : null;
        s.current = current;
        s.currentStateId = currentStateId;
    }

    /** RFC 7530 §9.1.7: these errors leave the owner's number where it was; every other outcome moves it on. */
    static boolean advances(int status) {
        return switch (status) {
            case Nfs4Status.STALE_CLIENTID, Nfs4Status.STALE_STATEID, Nfs4Status.BAD_STATEID, Nfs4Status.BAD_SEQID,
                    Nfs4Status.BADXDR, Nfs4Status.RESOURCE, Nfs4Status.NOFILEHANDLE, Nfs4Status.MOVED -> false;
            default -> true;
        };
    }

    /** Forgets one owner's sequence (its next request starts it afresh); not while a request of it runs. */
    public void forget(Owner owner) {
        Sequence s = owners.get(owner.key());
        if (s != null && !s.running) owners.remove(owner.key());
    }

    /** A client's lease ended (or it was replaced): its owners start afresh. */
    public void dropClient(long clientId) {
        owners.values().removeIf(s -> s.clientId == clientId);
    }
}
