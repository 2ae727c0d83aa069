package dev.cairn.sim.runtime;

import dev.cairn.core.env.Address;
import dev.cairn.core.proto.Codec;
import dev.cairn.core.proto.CodecException;
import dev.cairn.core.proto.Message;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.zip.CRC32C;

/**
 * Simulated links with TCP's contract: per connection, messages arrive in order or not at all, and a
 * connection breaks (both ends hear of it) when either host crashes. Every message is encoded and
 * decoded with the real codec, so hosts share no objects and the trace digests the real bytes.
 *
 * <p>Faults keep that contract, because the real transport is TCP: a lost message, a partition or a reset
 * breaks its connection (what was in flight on it is lost, later sends on it vanish until both ends have
 * heard of the break, after a detection delay); a delay spike holds a message and, FIFO, everything after
 * it on its connection. Duplication is the one exception: a copy of a message arrives again later, out of
 * order, as a retry through a proxy or a reconnecting middlebox would deliver it.
 */
public final class SimNetwork {
    /** How long the ends of a broken connection take to hear of it: a reset, and a black hole (keepalive). */
    static final long RESET_DETECT_NANOS = 200_000_000L;
    static final long BLACKHOLE_DETECT_NANOS = 5_000_000_000L;
    /** Longest extra delay of a delay spike, and of a duplicate behind its original. */
    static final long MAX_SPIKE_NANOS = 3_000_000_000L;
    static final long MAX_DUP_LAG_NANOS = 1_000_000_000L;

    /** Fault rates, each in parts per million of messages sent. */
    private long lossPpm, delayPpm, dupPpm;
    /** Blocked directions, "from|to" by host name. */
    private final java.util.TreeSet<String> blocked = new java.util.TreeSet<>();
    private long lost, delayed, duplicated;
    /** One-way latency floor and spread, and link speed (bytes per second). */
    static final long MIN_LATENCY_NANOS = 50_000;
    static final long LATENCY_SPREAD_NANOS = 250_000;
    static final long BYTES_PER_SECOND = 1_250_000_000L;

    private record Conn(SimHost a, int aInc, SimHost b, int bInc) {}

    /**
     * One direction between two hosts, made once, so a send reads its state without building keys: the
     * connection open on it (mirrored in {@link #conns}, whose key order fault draws and crash
     * notifications follow), whether it broke unnoticed, the break count, and the last delivery time.
     */
    private static final class Link {
        /** "from|to" by address: the key in {@link #conns}, and the digest of a break's event. */
        final String key;
        Conn conn;
        /** Broken but not yet noticed by its ends: sends vanish. */
        boolean broken;
        /** Incremented when the connection breaks: deliveries sent on an earlier epoch are lost. */
        int epoch;
        /** Last delivery time scheduled, to keep the connection FIFO (valid once {@code delivered}). */
        long lastDelivery;
        boolean delivered;

        Link(SimHost from, SimHost to) { this.key = from.address() + "|" + to.address(); }
    }

    private final Simulation sim;
    private final Map<Address, SimTransport> listening = new HashMap<>();
    /** Open connections keyed "from|to" (both directions of each): the deterministic order to walk them in. */
    private final Map<String, Conn> conns = new TreeMap<>();
    private final Map<Address, SimHost> hostAt = new HashMap<>();
    /** Links by (from, to) host index, grown as hosts join. */
    private Link[][] links = new Link[0][];
    private final CRC32C crc = new CRC32C();
    private final Codec.Encoder encoder = new Codec.Encoder();

    SimNetwork(Simulation sim) { this.sim = sim; }

    // ---------------------------------------------------------------- fault controls

    /** Rates in parts per million of messages: lost (breaking the connection), delayed by a spike, duplicated. */
    public void setRates(long lossPpm, long delayPpm, long dupPpm) {
        this.lossPpm = lossPpm;
        this.delayPpm = delayPpm;
        this.dupPpm = dupPpm;
    }

    /** Blocks messages from {@code a} to {@code b} (and back, if {@code bothWays}). */
    public void partition(SimHost a, SimHost b, boolean bothWays) {
        blocked.add(a.name() + "|" + b.name());
        if (bothWays) blocked.add(b.name() + "|" + a.name());
    }

    public void healPartitions() { blocked.clear(); }

    /** True if a partition drops messages from {@code from} to {@code to}. */
    public boolean blocks(SimHost from, SimHost to) {
        return !blocked.isEmpty() && blocked.contains(from.name() + "|" + to.name());
    }

    public boolean partitioned() { return !blocked.isEmpty(); }

    /** Resets one open connection chosen by {@code draw}; false if none is open. */
    public boolean resetOne(int draw) {
        List<String> keys = new ArrayList<>();
        for (Map.Entry<String, Conn> e : conns.entrySet()) if (e.getValue().a.name().compareTo(e.getValue().b.name()) < 0) keys.add(e.getKey());
        if (keys.isEmpty()) return false;
        Conn c = conns.get(keys.get(Math.floorMod(draw, keys.size())));
        breakConnection(c.a, c.b, RESET_DETECT_NANOS);
        return true;
    }

    public long lostMessages() { return lost; }

    public long delayedMessages() { return delayed; }

    public long duplicatedMessages() { return duplicated; }

    private boolean roll(long ppm) { return ppm > 0 && sim.random().nextLong(1_000_000) < ppm; }

    /**
     * The connection between {@code a} and {@code b} breaks now: in-flight messages are lost, later ones
     * vanish, and after {@code detectNanos} both ends hear of it and may connect afresh.
     */
    private void breakConnection(SimHost a, SimHost b, long detectNanos) {
        Link ab = link(a, b), ba = link(b, a);
        if (ab.broken) return;
        ab.broken = ba.broken = true;
        ab.epoch++;
        ba.epoch++;
        Conn c = ab.conn;
        int aInc = c != null ? c.aInc : a.incarnation(), bInc = c != null ? c.bInc : b.incarnation();
        sim.at(detectNanos, null, Simulation.Kind.DISCONNECT, ab.key.hashCode(), () -> {
            ab.broken = ba.broken = false;
            if (ab.conn == c) setConn(ab, null);
            if (c != null && ba.conn != null && ba.conn.a == b) setConn(ba, null);
            notifyBreak(a, aInc, b.address());
            notifyBreak(b, bInc, a.address());
        });
    }

    private void notifyBreak(SimHost end, int inc, Address peer) {
        if (!end.isUp() || end.incarnation() != inc) return;
        SimTransport t = listening.get(end.address());
        if (t != null && t.incarnation() == inc) sim.at(0, end, Simulation.Kind.DISCONNECT, peer.hashCode(), () -> t.disconnected(peer));
    }

    void addHost(SimHost h) { hostAt.put(h.address(), h); }

    private Link link(SimHost from, SimHost to) {
        int n = Math.max(from.index(), to.index()) + 1;
        if (n > links.length) {
            Link[][] grown = new Link[n][n];
            for (int i = 0; i < links.length; i++) System.arraycopy(links[i], 0, grown[i], 0, links.length);
            links = grown;
        }
        Link l = links[from.index()][to.index()];
        return l != null ? l : (links[from.index()][to.index()] = new Link(from, to));
    }

    private void setConn(Link l, Conn c) {
        l.conn = c;
        if (c == null) conns.remove(l.key);
        else conns.put(l.key, c);
    }

    void listen(SimTransport t) { listening.put(t.host().address(), t); }

    void send(SimTransport from, Address to, Message m) {
        SimHost src = from.host();
        SimHost dst = hostAt.get(to);
        SimTransport target = listening.get(to);
        Link l = dst == null ? null : link(src, dst);
        Conn conn = l == null ? null : l.conn;
        if (dst == null || !dst.isUp() || target == null || target.incarnation() != dst.incarnation()
                || (conn != null && (conn.bInc != dst.incarnation() || conn.aInc != src.incarnation()))) {
            // refused, or the connection this message would travel on died with a crash
            if (l != null) {
                setConn(l, null);
                setConn(link(dst, src), null);
            }
            SimTransport self = from;
            sim.at(latency(0), src, Simulation.Kind.DISCONNECT, to.hashCode(), () -> self.disconnected(to));
            return;
        }
        if (conn == null) {
            setConn(l, new Conn(src, src.incarnation(), dst, dst.incarnation()));
            setConn(link(dst, src), new Conn(dst, dst.incarnation(), src, src.incarnation()));
        }
        if (l.broken) return; // the connection died; the sender has not heard yet
        if (!blocked.isEmpty() && blocked.contains(src.name() + "|" + dst.name())) {
            lost++;
            breakConnection(src, dst, BLACKHOLE_DETECT_NANOS);
            return;
        }
        if (roll(lossPpm)) {
            lost++;
            breakConnection(src, dst, RESET_DETECT_NANOS);
            return;
        }
        // the frame is digested and decoded here, at send: decoding is a pure function of the bytes, so the
        // receiver gets what it would decode on arrival, and no frame is kept (or allocated) per message
        Codec.Frame frame = encoder.encode(m);
        int length = Math.toIntExact(frame.length());
        crc.reset();
        frame.digest(crc);
        long digest = crc.getValue() << 32 | length;
        Message received = decode(frame, m);
        long at = sim.now() + latency(length);
        if (roll(delayPpm)) {
            delayed++;
            at += sim.random().nextLong(MAX_SPIKE_NANOS);
        }
        if (l.delivered && at <= l.lastDelivery) at = l.lastDelivery + 1;
        l.lastDelivery = at;
        l.delivered = true;
        int srcInc = src.incarnation();
        int epoch = l.epoch;
        Address fromAddr = src.address();
        if (roll(dupPpm)) {
            duplicated++;
            long lag = 1 + sim.random().nextLong(MAX_DUP_LAG_NANOS);
            Message copy = decode(frame, m); // a message of its own: receivers share no objects
            sim.at(at - sim.now() + lag, dst, Simulation.Kind.DELIVER, ~digest, () -> {
                if (src.incarnation() != srcInc) return;
                deliver(copy, target, fromAddr);
            });
        }
        sim.at(at - sim.now(), dst, Simulation.Kind.DELIVER, digest, () -> {
            if (src.incarnation() != srcInc) return; // the sender crashed: its connection and data died with it
            if (l.epoch != epoch) return; // the connection broke while this was in flight
            deliver(received, target, fromAddr);
        });
    }

    /** The receiver's copy of {@code m}, decoded from its frame; null (and a violation) if it does not decode. */
    private Message decode(Codec.Frame frame, Message m) {
        try {
            return frame.decode();
        } catch (CodecException e) {
            sim.violation("protocol", "undecodable message " + m.getClass().getSimpleName() + ": " + e.getMessage());
            return null;
        }
    }

    private static void deliver(Message m, SimTransport target, Address fromAddr) {
        if (m != null) target.deliver(fromAddr, m);
    }

    /** A host went down: its connections break and each live peer hears so. */
    void hostDown(SimHost h) {
        listening.remove(h.address());
        List<String> gone = new ArrayList<>();
        for (Map.Entry<String, Conn> e : conns.entrySet()) {
            Conn c = e.getValue();
            if (c.a == h || c.b == h) gone.add(e.getKey());
        }
        for (String k : gone) {
            Conn c = conns.get(k);
            setConn(link(c.a, c.b), null);
            if (c.a == h && c.b.isUp() && c.b.incarnation() == c.bInc) {
                SimTransport peer = listening.get(c.b.address());
                if (peer != null && peer.incarnation() == c.bInc) {
                    Address dead = h.address();
                    sim.at(latency(0), c.b, Simulation.Kind.DISCONNECT, dead.hashCode(), () -> peer.disconnected(dead));
                }
            }
        }
    }

    private long latency(int bytes) {
        return MIN_LATENCY_NANOS + sim.random().nextLong(LATENCY_SPREAD_NANOS) + bytes * 1_000_000_000L / BYTES_PER_SECOND;
    }
}
