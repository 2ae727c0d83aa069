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
    /**
     * What the reply caches of all sessions may hold together: each session reserves its slots times its cached
     * reply size when created, and gets fewer slots (down to one, then NOSPC) once this is spoken for. Without it
     * {@link #MAX_CLIENTS} × {@link #MAX_SESSIONS_PER_CLIENT} × 64 slots × 16 KiB would be 32 GiB.
     */
    public static final long MAX_REPLY_CACHE_BYTES = 64L << 20;
    /** The owner string (co_ownerid, nfs_client_id4.id) is at most NFS4_OPAQUE_LIMIT bytes. */
    public static final int MAX_OWNER = 1024;

    private final int bootId;
    private final RandomGenerator random;
    private int nextClient = 1;
    private final Map<Long, Client> byId = new LinkedHashMap<>();
    /**
     * An owner has at most one confirmed and one unconfirmed record (RFC 8881 §18.35.4, RFC 7530 §16.33.5):
     * a client that rebooted gets a new unconfirmed record while its old one, with its state, stays until
     * the new one is confirmed.
     */
    private final Map<ByteBuffer, Client> confirmedByOwner = new HashMap<>();
    private final Map<ByteBuffer, Client> unconfirmedByOwner = new HashMap<>();
    private final Map<ByteBuffer, Session> sessions = new HashMap<>();
    private long replyCacheReserved;

    public ClientTable(int bootId, RandomGenerator random) {
        this.bootId = bootId;
        this.random = random;
    }

    public int bootId() { return bootId; }

    public int clientCount() { return byId.size(); }

    public Client client(long id) { return byId.get(id); }

    /** Whether the id was made by an earlier incarnation of the gateway (STALE_CLIENTID, not BAD). */
    public boolean fromEarlierBoot(long id) { return (int) (id >>> 32) != bootId; }

    /** The owner's confirmed record, or null. */
    public Client confirmedByOwner(byte[] owner) { return confirmedByOwner.get(ByteBuffer.wrap(owner)); }

    /** The owner's unconfirmed record, or null. */
    public Client unconfirmedByOwner(byte[] owner) { return unconfirmedByOwner.get(ByteBuffer.wrap(owner)); }

    public Session session(byte[] id) { return sessions.get(ByteBuffer.wrap(id)); }

    /**
     * A new unconfirmed client record for {@code owner}. It replaces the owner's unconfirmed record, if any;
     * a confirmed one stays until this one is confirmed ({@link #confirm}). Null if the table is full.
     */
    public Client create(byte[] owner, byte[] verifier, int minor, int principal, long nowNanos) {
        Client previous = unconfirmedByOwner(owner);
        if (previous != null) remove(previous);
        if (byId.size() >= MAX_CLIENTS) return null;
        long id = ((long) bootId << 32) | (nextClient++ & 0xffff_ffffL);
        byte[] confirm = new byte[8];
        random.nextBytes(confirm);
        Client c = new Client(id, owner, verifier, minor, principal, confirm);
        c.leaseExpiresNanos = nowNanos + LEASE_NANOS;
        byId.put(id, c);
        unconfirmedByOwner.put(ByteBuffer.wrap(c.owner()), c);
        return c;
    }

    private java.util.function.LongConsumer onRemove = id -> { };

    /** Called with the id of every client removed (expired, destroyed, replaced by a new incarnation). */
    public void onRemove(java.util.function.LongConsumer listener) { this.onRemove = listener; }

    public void remove(Client c) {
        onRemove.accept(c.id());
        byId.remove(c.id());
        (c.confirmed ? confirmedByOwner : unconfirmedByOwner).remove(ByteBuffer.wrap(c.owner()), c);
        for (Session s : c.sessions) {
            if (sessions.remove(ByteBuffer.wrap(s.id())) != null) replyCacheReserved -= reservation(s);
        }
        c.sessions.clear();
        assert replyCacheReserved >= 0 : replyCacheReserved;
    }

    /**
     * {@code c} becomes its owner's confirmed record. The owner's previous confirmed record (an earlier
     * incarnation of the client) goes, and its state with it.
     */
    public void confirm(Client c) {
        if (c.confirmed) return;
        ByteBuffer owner = ByteBuffer.wrap(c.owner());
        Client previous = confirmedByOwner.get(owner);
        if (previous != null) remove(previous);
        unconfirmedByOwner.remove(owner, c);
        c.confirmed = true;
        confirmedByOwner.put(owner, c);
    }

    /**
     * 4.0 SETCLIENTID by a confirmed client with its own verifier: a callback update (RFC 7530 §16.33.5),
     * same client id, a new confirm verifier; its state stays. Answers that verifier.
     */
    public byte[] offerUpdate(Client c) {
        assert c.confirmed && c.minorVersion() == 0;
        byte[] v = new byte[8];
        random.nextBytes(v);
        c.updateVerifier = v;
        return v.clone();
    }

    /** SETCLIENTID_CONFIRM of a callback update: its verifier is now the client's. */
    public void acceptUpdate(Client c) {
        assert c.updateVerifier != null;
        c.confirmVerifier = c.updateVerifier;
        c.updateVerifier = null;
    }

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

    /** Bytes the reply caches of open sessions have reserved. */
    public long replyCacheReserved() { return replyCacheReserved; }

    /**
     * {@code granted} with as many slots as the gateway-wide reply-cache budget still has room for (RFC 8881
     * §18.36.3 lets the server lower ca_maxrequests); null if not even one.
     */
    public ChannelAttrs withinReplyCacheBudget(ChannelAttrs granted) {
        long perSlot = Math.max(1, granted.maxResponseSizeCached());
        long slots = Math.min(granted.maxRequests(), (MAX_REPLY_CACHE_BYTES - replyCacheReserved) / perSlot);
        if (slots < 1) return null;
        return slots == granted.maxRequests() ? granted : new ChannelAttrs(granted.headerPadSize(), granted.maxRequestSize(),
                granted.maxResponseSize(), granted.maxResponseSizeCached(), granted.maxOperations(), (int) slots);
    }

    private static long reservation(Session s) { return (long) s.fore().maxRequests() * Math.max(1, s.fore().maxResponseSizeCached()); }

    /**
     * A new session for {@code c}, bound to the connection that asked for it; null if it has too many or
     * {@code fore} does not fit the reply-cache budget (see {@link #withinReplyCacheBudget}).
     */
    public Session createSession(Client c, ChannelAttrs fore, long connection) {
        if (c.sessions.size() >= MAX_SESSIONS_PER_CLIENT) return null;
        if ((long) fore.maxRequests() * Math.max(1, fore.maxResponseSizeCached()) > MAX_REPLY_CACHE_BYTES - replyCacheReserved) return null;
        byte[] id = new byte[Session.ID_BYTES];
        ByteBuffer.wrap(id).putLong(c.id()).putLong(random.nextLong());
        Session s = new Session(id, c, fore);
        s.bind(connection);
        c.sessions.add(s);
        sessions.put(ByteBuffer.wrap(s.id()), s);
        replyCacheReserved += reservation(s);
        assert replyCacheReserved <= MAX_REPLY_CACHE_BYTES : replyCacheReserved;
        return s;
    }

    public void destroySession(Session s) {
        if (sessions.remove(ByteBuffer.wrap(s.id())) != null) replyCacheReserved -= reservation(s);
        s.client().sessions.remove(s);
        assert replyCacheReserved >= 0 : replyCacheReserved;
    }

    public void markReclaimComplete(Client c) { c.reclaimComplete = true; }

    /** Drops clients whose lease ran out on the monotonic clock, with their sessions; returns how many. */
    public int expire(long nowNanos) {
        List<Client> gone = new ArrayList<>();
        for (Client c : byId.values()) if (nowNanos - c.leaseExpiresNanos > 0) gone.add(c);
        for (Client c : gone) {
            remove(c);
            if (c.confirmed) {
                expiredIds.add(c.id());
                if (expiredIds.size() > MAX_EXPIRED_CLIENTS) expiredIds.remove(expiredIds.iterator().next());
            }
        }
        return gone.size();
    }

    /**
     * Whether {@code id} named a confirmed client of this boot whose lease ran out: a 4.0 RENEW of it is EXPIRED
     * rather than STALE_CLIENTID (RFC 7530 §16.29.5), telling the client its state is gone, not that it is unknown.
     */
    public boolean expired(long id) { return expiredIds.contains(id); }

    /** Ids of clients expired, most recent last; bounded, the oldest forgotten (they are STALE_CLIENTID then). */
    private final java.util.LinkedHashSet<Long> expiredIds = new java.util.LinkedHashSet<>();
    public static final int MAX_EXPIRED_CLIENTS = 4096;
}
