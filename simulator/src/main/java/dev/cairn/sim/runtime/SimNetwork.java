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
 */
final class SimNetwork {
    /** One-way latency floor and spread, and link speed (bytes per second). */
    static final long MIN_LATENCY_NANOS = 50_000;
    static final long LATENCY_SPREAD_NANOS = 250_000;
    static final long BYTES_PER_SECOND = 1_250_000_000L;

    private record Conn(SimHost a, int aInc, SimHost b, int bInc) {}

    private final Simulation sim;
    private final Map<Address, SimTransport> listening = new TreeMap<>();
    /** Open connections keyed "from|to", with the incarnations at both ends when they connected. */
    private final Map<String, Conn> conns = new TreeMap<>();
    /** Last delivery time per ordered pair, to keep each connection FIFO. */
    private final Map<String, Long> lastDelivery = new HashMap<>();
    private final Map<Address, SimHost> hostAt = new TreeMap<>();

    SimNetwork(Simulation sim) { this.sim = sim; }

    void addHost(SimHost h) { hostAt.put(h.address(), h); }

    void listen(SimTransport t) { listening.put(t.host().address(), t); }

    void send(SimTransport from, Address to, Message m) {
        SimHost src = from.host();
        SimHost dst = hostAt.get(to);
        SimTransport target = listening.get(to);
        String key = src.address() + "|" + to;
        Conn conn = conns.get(key);
        if (dst == null || !dst.isUp() || target == null || target.incarnation() != dst.incarnation()
                || (conn != null && (conn.bInc != dst.incarnation() || conn.aInc != src.incarnation()))) {
            // refused, or the connection this message would travel on died with a crash
            conns.remove(key);
            conns.remove(to + "|" + src.address());
            SimTransport self = from;
            sim.at(latency(0), src, Simulation.Kind.DISCONNECT, to.hashCode(), () -> self.disconnected(to));
            return;
        }
        if (conn == null) {
            Conn c = new Conn(src, src.incarnation(), dst, dst.incarnation());
            conns.put(key, c);
            conns.put(to + "|" + src.address(), new Conn(dst, dst.incarnation(), src, src.incarnation()));
        }
        byte[] bytes = Codec.encode(m);
        CRC32C crc = new CRC32C();
        crc.update(bytes);
        long digest = crc.getValue() << 32 | bytes.length;
        long at = sim.now() + latency(bytes.length);
        Long last = lastDelivery.get(key);
        if (last != null && at <= last) at = last + 1;
        lastDelivery.put(key, at);
        int srcInc = src.incarnation();
        Address fromAddr = src.address();
        sim.at(at - sim.now(), dst, Simulation.Kind.DELIVER, digest, () -> {
            if (src.incarnation() != srcInc) return; // the sender crashed: its connection and data died with it
            Message decoded;
            try {
                decoded = Codec.decode(bytes);
            } catch (CodecException e) {
                sim.violation("undecodable message " + m.getClass().getSimpleName() + ": " + e.getMessage());
                return;
            }
            target.deliver(fromAddr, decoded);
        });
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
            Conn c = conns.remove(k);
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
