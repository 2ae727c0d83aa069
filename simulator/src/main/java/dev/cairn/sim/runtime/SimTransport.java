package dev.cairn.sim.runtime;

import dev.cairn.core.env.Address;
import dev.cairn.core.env.MessageHandler;
import dev.cairn.core.env.Transport;
import dev.cairn.core.proto.Message;

/** A host incarnation's end of the simulated network. Every host has one address, used both to listen and to send from. */
final class SimTransport implements Transport {
    private final SimHost host;
    private final int incarnation;
    private MessageHandler handler;
    private boolean stopped;

    SimTransport(SimHost host, int incarnation) {
        this.host = host;
        this.incarnation = incarnation;
    }

    SimHost host() { return host; }

    int incarnation() { return incarnation; }

    @Override public void start(Address local, MessageHandler h) {
        if (local != null && !local.equals(host.address())) {
            throw new IllegalArgumentException(host.name() + " listens on " + host.address() + ", not " + local);
        }
        this.handler = h;
        host.net().listen(this);
    }

    @Override public void send(Address to, Message message) {
        if (stopped || handler == null || host.incarnation() != incarnation) return;
        host.net().send(this, to, message);
    }

    @Override public void stop() { stopped = true; }

    void deliver(Address from, Message m) {
        if (stopped || handler == null) return;
        host.sim().delivered(host, m);
        if (!host.isUp()) return; // the delivery listener crashed it as the message came (an aimed fault): never handled
        handler.onMessage(from, m);
    }

    void disconnected(Address peer) {
        if (!stopped && handler != null) handler.onDisconnect(peer);
    }
}
