package dev.cairn.sim.runtime;

import dev.cairn.core.async.Promise;
import dev.cairn.nfs.NfsGateway;
import dev.cairn.nfs.client.Nfs4Client;
import dev.cairn.nfs.v4.CompoundState;

/**
 * An NFS client's TCP connection to the gateway host, as the simulator sees one: each RPC record travels to the
 * gateway after a network delay and runs there in the gateway host's context (paused with it, dropped if it
 * crashes), and its reply travels back to the client host. A partition between the two drops the record or
 * the reply; the client's end notices within {@link #WATCH_NANOS} that its call will not be answered (the
 * gateway restarted, or the path is cut) and fails it, as a broken connection does. A call the gateway fails
 * with an exception instead of an NFS status is a bug: the real server logs it and sends no reply, so the
 * client would wait forever ({@code NfsTcpServer}).
 *
 * <p>Every connection after a gateway restart is a new one (a new {@link CompoundState.Connection}), so the
 * gateway sees a client's reconnect as a real socket's.
 */
public final class SimNfsChannel implements Nfs4Client.Channel {
    /** One-way delay floor and spread (a LAN), and the link's speed. */
    static final long MIN_LATENCY_NANOS = 50_000, LATENCY_SPREAD_NANOS = 150_000, BYTES_PER_SECOND = 1_000_000_000L;
    /** How often a waiting call checks that its connection still stands. */
    static final long WATCH_NANOS = 1_000_000_000L;

    private final Simulation sim;
    private final SimHost client;
    private final SimHost gateway;
    /** The client's IP address as the gateway sees it ({@link dev.cairn.sim.SimCluster#NFS_EXPORTS} lets 10.0.0.0/8 in). */
    private final String clientAddress;
    private int connectedTo = -1;
    private CompoundState.Connection connection;
    private int connections;

    public SimNfsChannel(SimHost client, SimHost gateway) {
        this.sim = client.sim();
        this.client = client;
        this.gateway = gateway;
        this.clientAddress = "10.0.0." + (1 + client.index() % 250); // the gateway's exports name clients by address
    }

    @Override public Promise<byte[]> call(byte[] record) {
        Promise<byte[]> reply = new Promise<>();
        SimNetwork net = client.net();
        if (!gateway.isUp() || !(gateway.node() instanceof NfsGateway g0) || g0.service() == null || net.blocks(client, gateway)) {
            int inc = gateway.incarnation();
            sim.at(latency(0), client, Simulation.Kind.DISCONNECT, record.length, () -> reply.fail(new ChannelBroken(
                    gateway.isUp() && gateway.incarnation() == inc ? "no route to the gateway (partition)" : "connection refused: the gateway is down")));
            return reply;
        }
        int inc = gateway.incarnation();
        if (connectedTo != inc) {
            connectedTo = inc;
            connection = new CompoundState.Connection((long) clientAddress.hashCode() << 32 | ++connections, clientAddress);
        }
        CompoundState.Connection conn = connection;
        int clientInc = client.incarnation();
        boolean[] replyLost = {false};
        sim.at(latency(record.length), gateway, Simulation.Kind.DELIVER, record.length, () -> {
            NfsGateway g = (NfsGateway) gateway.node();
            g.service().handle(record, conn).onComplete((r, e) -> {
                if (e != null) {
                    sim.violation("exception", "the NFS gateway failed a call with " + e + " and sent no reply");
                    return;
                }
                if (r == null || gateway.incarnation() != inc) return; // the watch fails it
                if (net.blocks(gateway, client)) {
                    // TCP would retransmit until it gave up; the connection is as good as broken even if the path heals
                    replyLost[0] = true;
                    return;
                }
                sim.at(latency(r.length), client, Simulation.Kind.DELIVER, r.length, () -> {
                    if (client.incarnation() == clientInc) reply.complete(r);
                });
            });
        });
        watch(reply, inc, replyLost);
        return reply;
    }

    /** Fails {@code reply} once its connection is gone: the gateway restarted or went down, or a partition cut the path or took its reply. */
    private void watch(Promise<byte[]> reply, int inc, boolean[] replyLost) {
        sim.at(WATCH_NANOS, client, Simulation.Kind.TIMER, 0, () -> {
            if (reply.isDone()) return;
            if (!gateway.isUp() || gateway.incarnation() != inc) reply.fail(new ChannelBroken("connection reset: the gateway restarted"));
            else if (replyLost[0] || client.net().blocks(client, gateway) || client.net().blocks(gateway, client)) {
                reply.fail(new ChannelBroken("connection timed out (partition)"));
            } else watch(reply, inc, replyLost);
        });
    }

    private long latency(int bytes) {
        return MIN_LATENCY_NANOS + sim.random().nextLong(LATENCY_SPREAD_NANOS) + bytes * 1_000_000_000L / BYTES_PER_SECOND;
    }

    /** The connection broke (the call may or may not have run): an expected failure the client retries. */
    public static final class ChannelBroken extends RuntimeException implements dev.cairn.core.async.Unexpected.Expected {
        ChannelBroken(String why) { super(why); }
    }
}
