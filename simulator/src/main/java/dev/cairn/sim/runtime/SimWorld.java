package dev.cairn.sim.runtime;

import dev.cairn.core.env.Address;
import dev.cairn.core.env.Env;
import dev.cairn.core.env.Node;
import java.util.List;
import java.util.function.Function;

/** Builds the simulated hosts of one run on one {@link Simulation} and network. */
public final class SimWorld {
    /** Log lines kept for the failure report. */
    static final int LOG_RING_LINES = 400;

    private final Simulation sim;
    private final SimNetwork net;
    private final SimLog.Ring logRing;

    public SimWorld(Simulation sim, boolean verbose) {
        this.sim = sim;
        this.net = new SimNetwork(sim);
        this.logRing = new SimLog.Ring(LOG_RING_LINES, verbose);
    }

    public Simulation sim() { return sim; }

    /** The links between hosts, with their fault controls. */
    public SimNetwork network() { return net; }

    /** Adds a host (not yet started) with a wall clock {@code wallOffsetMillis} away from the world's. */
    public SimHost addHost(String name, Address address, long wallOffsetMillis, Function<Env, ? extends Node> node) {
        SimHost h = new SimHost(sim, net, name, address, wallOffsetMillis, node, logRing);
        sim.addHost(h);
        net.addHost(h);
        return h;
    }

    public List<String> recentLog() { return logRing.lines(); }
}
