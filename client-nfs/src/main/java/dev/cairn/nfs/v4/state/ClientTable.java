package dev.cairn.nfs.v4.state;

import dev.cairn.nfs.v4.Nfs4Status;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.random.RandomGenerator;

/**
 * Every client and session the gateway knows, with the limits that keep its memory bounded, and leases
 * timed on the gateway's monotonic clock (never on wall time, which may step). Client ids carry this
 * incarnation's boot id in their top half, so an id from before a restart is recognised as stale.
 */
public final class ClientTable {
    /** The lease every client gets (fattr4_lease_time); knfsd uses 90 s as well. */
    public static final int LEASE_SECONDS = 90;
    public static final long LEASE_NANOS = LEASE_SECONDS * 1_000_000_000L;
    public static final int MAX_CLIENTS = 4096;
    public static final int MAX_SESSIONS_PER_CLIENT = 8;
    /** What a session may negotiate at most: slots, cached reply size, ops per COMPOUND. */
    public static final ChannelAttrs LIMITS = new ChannelAttrs(0, 1_114_112, 1_114_112, 16_384, 64, 64);
    /** RFC 8881 §18.36.3: a channel needs room for at least one small request, and one slot. */
    public static final ChannelAttrs FLOOR = new ChannelAttrs(0, 1024, 1024, 0, 2, 1);
    /** The owner string (co_ownerid, nfs_client_id4.id) is at most NFS4_OPAQUE_LIMIT bytes. */
    public static final int MAX_OWNER = 1024;

    private final int bootId;
    private final RandomGenerator random;
    private int nextClient = 1;
    private final Map<Long, Client> byId = new LinkedHashMap<>();
    private final Map<ByteBuffer, Client> byOwner = new HashMap<>();
    private final Map<ByteBuffer, Session> sessions = new HashMap<>();

    public ClientTable(int bootId, RandomGenerator random) {
        this.bootId = bootId;
        this.random = random;
    }

    public int bootId() { return bootId; }

    public int clientCount() { return byId.size(); }

    public Client client(long id) { return byId.get(id); }

    /** Whether the id was made by an earlier incarnation of the gateway (STALE_CLIENTID, not BAD). */
    public boolean fromEarlierBoot(long id) { return (int) (id >>> 32) != bootId; }

    public Client byOwner(byte[] owner) { return byOwner.get(ByteBuffer.wrap(owner)); }

    public Session session(byte[] id) { return sessions.get(ByteBuffer.wrap(id)); }

    /** A new, unconfirmed client record; it replaces {@code previous} (same owner) if given. Null if the table is full. */
    public Client create(byte[] owner, byte[] verifier, int minor, int principal, Client previous, long nowNanos) {
        if (previous != null) remove(previous);
        if (byId.size() >= MAX_CLIENTS) return null;
        long id = ((long) bootId << 32) | (nextClient++ & 0xffff_ffffL);
        byte[] confirm = new byte[8];
        random.nextBytes(confirm);
        Client c = new Client(id, owner, verifier, minor, principal, confirm);
        c.leaseExpiresNanos = nowNanos + LEASE_NANOS;
        byId.put(id, c);
        byOwner.put(ByteBuffer.wrap(c.owner()), c);
        return c;
    }

    private java.util.function.LongConsumer onRemove = id -> { };

    /** Called with the id of every client removed (expired, destroyed, replaced by a new incarnation). */
    public void onRemove(java.util.function.LongConsumer listener) { this.onRemove = listener; }

    public void remove(Client c) {
        onRemove.accept(c.id());
        byId.remove(c.id());
        byOwner.remove(ByteBuffer.wrap(c.owner()), c);
        for (Session s : c.sessions) sessions.remove(ByteBuffer.wrap(s.id()));
        c.sessions.clear();
    }

    public void confirm(Client c) { c.confirmed = true; }

    public void renew(Client c, long nowNanos) { c.leaseExpiresNanos = nowNanos + LEASE_NANOS; }

    /** CREATE_SESSION's sequencing: run it ({@code status} NFS4_OK), resend {@code replay}, or refuse with {@code status}. */
    public record CreateSessionAdmission(int status, byte[] replay) {}

    /** RFC 8881 §18.36.4: the next sequence id runs; the last one again gets its reply again; others are misordered. */
    public CreateSessionAdmission admitCreateSession(Client c, int sequence) {
        if (c.lastCreateSessionReply != null && sequence == c.createSessionSeq) {
            return new CreateSessionAdmission(Nfs4Status.NFS4_OK, c.lastCreateSessionReply);
        }
        int expected = c.lastCreateSessionReply == null ? c.createSessionSeq : c.createSessionSeq + 1;
        return new CreateSessionAdmission(sequence == expected ? Nfs4Status.NFS4_OK : Nfs4Status.SEQ_MISORDERED, null);
    }

    /** The first CREATE_SESSION's sequence id is the one EXCHANGE_ID handed out. */
    public void setCreateSessionSeq(Client c, int seq) { c.createSessionSeq = seq; }

    public void recordCreateSession(Client c, int sequence, byte[] reply) {
        c.createSessionSeq = sequence;
        c.lastCreateSessionReply = reply;
    }

    /** A new session for {@code c}, or null if it has too many. */
    public Session createSession(Client c, ChannelAttrs fore) {
        if (c.sessions.size() >= MAX_SESSIONS_PER_CLIENT) return null;
        byte[] id = new byte[Session.ID_BYTES];
        ByteBuffer.wrap(id).putLong(c.id()).putLong(random.nextLong());
        Session s = new Session(id, c, fore);
        c.sessions.add(s);
        sessions.put(ByteBuffer.wrap(s.id()), s);
        return s;
    }

    public void destroySession(Session s) {
        sessions.remove(ByteBuffer.wrap(s.id()));
        s.client().sessions.remove(s);
    }

    public void markReclaimComplete(Client c) { c.reclaimComplete = true; }

    /** Drops clients whose lease ran out on the monotonic clock, with their sessions; returns how many. */
    public int expire(long nowNanos) {
        List<Client> gone = new ArrayList<>();
        for (Client c : byId.values()) if (nowNanos - c.leaseExpiresNanos > 0) gone.add(c);
        for (Client c : gone) remove(c);
        return gone.size();
    }
}
