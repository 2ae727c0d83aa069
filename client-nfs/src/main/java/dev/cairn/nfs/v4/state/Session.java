package dev.cairn.nfs.v4.state;

import java.util.Arrays;

/** An NFSv4.1 session: its id, the client it belongs to, the fore channel it negotiated and its slot table. */
public final class Session {
    /** Sessions ids are 16 bytes (sessionid4). */
    public static final int ID_BYTES = 16;

    private final byte[] id;
    private final Client client;
    private final ChannelAttrs fore;
    private final Slot[] slots;
    /**
     * The connections bound to the session (RFC 8881 §2.10.3.1): the one that created it, any that sent a
     * SEQUENCE on it (implicit binding, as SP4_NONE allows) or BIND_CONN_TO_SESSION. Most recent last,
     * at most {@link #MAX_CONNECTIONS}; the oldest is unbound past that.
     */
    private final java.util.LinkedHashSet<Long> connections = new java.util.LinkedHashSet<>();
    public static final int MAX_CONNECTIONS = 16;

    Session(byte[] id, Client client, ChannelAttrs fore) {
        assert id.length == ID_BYTES;
        this.id = id;
        this.client = client;
        this.fore = fore;
        this.slots = new Slot[fore.maxRequests()];
        for (int i = 0; i < slots.length; i++) slots[i] = new Slot();
    }

    public byte[] id() { return id.clone(); }

    public Client client() { return client; }

    public ChannelAttrs fore() { return fore; }

    public int slotCount() { return slots.length; }

    /** Binds a connection to the session (it may then DESTROY_SESSION without a SEQUENCE). */
    public void bind(long connection) {
        connections.remove(connection);
        connections.add(connection);
        if (connections.size() > MAX_CONNECTIONS) connections.remove(connections.iterator().next());
    }

    public boolean isBound(long connection) { return connections.contains(connection); }

    /** What SEQUENCE decides for a request on a slot (RFC 8881 §2.10.6.1). */
    public sealed interface Admission {}

    /** A new request: run it, then {@link #finish} the slot with its reply. */
    public record Execute(Slot slot) implements Admission {}

    /** A retransmission of the last request on the slot: send this reply again. */
    public record Replay(byte[] reply) implements Admission {}

    /** Refused with this nfsstat4 (BADSLOT, SEQ_MISORDERED, DELAY, RETRY_UNCACHED_REP). */
    public record Refuse(int status) implements Admission {}

    public Admission admit(int slotId, int sequenceId) {
        if (slotId < 0 || slotId >= slots.length) return new Refuse(dev.cairn.nfs.v4.Nfs4Status.BADSLOT);
        Slot s = slots[slotId];
        if (sequenceId == s.sequenceId) {
            if (s.inProgress) return new Refuse(dev.cairn.nfs.v4.Nfs4Status.DELAY);
            if (s.reply != null) return new Replay(s.reply);
            if (s.sequenceId == 0) return new Refuse(dev.cairn.nfs.v4.Nfs4Status.SEQ_MISORDERED); // never used
            return new Refuse(dev.cairn.nfs.v4.Nfs4Status.RETRY_UNCACHED_REP);
        }
        if (sequenceId != s.sequenceId + 1) return new Refuse(dev.cairn.nfs.v4.Nfs4Status.SEQ_MISORDERED);
        s.sequenceId = sequenceId;
        s.reply = null;
        s.inProgress = true;
        return new Execute(s);
    }

    /** Stores the reply of the request running on {@code slot}; one larger than the negotiated cache size is not kept. */
    /** The slot's call is answered with {@code reply}'s bytes from {@code from} (the COMPOUND4res), kept if small enough. */
    public void finish(Slot slot, byte[] reply, int from) {
        slot.inProgress = false;
        int n = reply.length - from;
        // a retry of a reply too large to keep gets RETRY_UNCACHED_REP; a kept one is a copy (the reply's own array
        // carries the RPC header of this call, written into it by the caller)
        slot.reply = n > fore.maxResponseSizeCached() ? null : java.util.Arrays.copyOfRange(reply, from, reply.length);
    }

    /** Bytes held by this session's reply cache (bounded by slots × the cached-reply size). */
    public long cachedBytes() {
        long n = 0;
        for (Slot s : slots) if (s.reply != null) n += s.reply.length;
        return n;
    }

    public boolean hasId(byte[] other) { return Arrays.equals(id, other); }
}
