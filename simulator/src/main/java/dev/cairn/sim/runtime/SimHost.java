package dev.cairn.sim.runtime;

import dev.cairn.core.env.Address;
import dev.cairn.core.env.Env;
import dev.cairn.core.env.Node;
import java.util.SplittableRandom;
import java.util.TreeMap;
import java.util.function.Function;

/**
 * A simulated machine: its disks and key-value store (which outlive crashes), its clocks, and the node
 * running on it. A crash ends the node's incarnation: every pending event of that incarnation is dropped
 * and its connections break. A power loss additionally drops whatever its disks had not synced.
 */
public final class SimHost {
    private final Simulation sim;
    private final SimNetwork net;
    private final String name;
    private final int index;
    private final Address address;
    private final SplittableRandom random;
    private final long monoBaseNanos;
    private final long wallOffsetMillis;
    private final TreeMap<String, SimDisk> disks = new TreeMap<>();
    private final SimKv kv;
    private final Function<Env, ? extends Node> factory;
    private final SimLog.Ring logRing;
    private int incarnation;
    private boolean up;
    private Node node;
    private SimEnv env;

    SimHost(Simulation sim, SimNetwork net, String name, Address address, long wallOffsetMillis,
            Function<Env, ? extends Node> factory, SimLog.Ring logRing) {
        this.sim = sim;
        this.net = net;
        this.name = name;
        this.index = sim.hosts().size();
        this.address = address;
        this.random = sim.random().split();
        this.monoBaseNanos = (random.nextLong() >>> 4) + 1;
        this.wallOffsetMillis = wallOffsetMillis;
        this.kv = new SimKv(this);
        this.factory = factory;
        this.logRing = logRing;
    }

    public String name() { return name; }

    public int index() { return index; }

    public Address address() { return address; }

    public int incarnation() { return incarnation; }

    public boolean isUp() { return up; }

    public Node node() { return node; }

    public SimEnv env() { return env; }

    public Simulation sim() { return sim; }

    SimNetwork net() { return net; }

    SplittableRandom random() { return random; }

    SimLog.Ring logRing() { return logRing; }

    long monoNanos() { return monoBaseNanos + sim.now(); }

    long wallMillis() { return Simulation.EPOCH_MILLIS + wallOffsetMillis + sim.now() / 1_000_000; }

    SimDisk disk(String volume) { return disks.computeIfAbsent(volume, v -> new SimDisk(this, v)); }

    SimKv kvStore() { return kv; }

    /** Boots a fresh incarnation of the node (first start or restart after a crash). */
    public void start() {
        if (up) throw new IllegalStateException(name + " is already up");
        incarnation++;
        up = true;
        env = new SimEnv(this, incarnation);
        node = factory.apply(env);
        Node n = node;
        sim.at(0, this, Simulation.Kind.TASK, 0, n::start);
    }

    /** Kills the process: volatile state gone, pending events dropped, connections reset; disks keep everything written. */
    public void crash() {
        if (!up) return;
        up = false;
        node = null;
        net.hostDown(this);
    }

    /** Silent corruption: flips one bit of a file on a disk (in the page cache and on the platter alike). */
    public void flipBit(String volume, String file, long offset, int bit) { disk(volume).flipBit(file, offset, bit); }

    /** Stalls a disk: its calls (queued and new) complete only after {@code nanos}. */
    public void stallDisk(String volume, long nanos) { disk(volume).stall(nanos); }

    /** Makes every call on a disk take {@code factor} times as long (1: healthy again). */
    public void slowDisk(String volume, int factor) { disk(volume).setSlowFactor(factor); }

    /** The disk dies: every call from now fails with an I/O error. */
    public void killDisk(String volume) { disk(volume).kill(); }

    /** The next {@code n} fsyncs on a disk fail, losing the unsynced writes they covered. */
    public void failSyncs(String volume, int n) { disk(volume).failSyncs(n); }

    /** Caps a disk's size: writes that would grow its files past it fail with ENOSPC. */
    public void setDiskCapacity(String volume, long bytes) { disk(volume).setCapacity(bytes); }

    /** Loses power: a crash plus every unsynced write on its disks and key-value store. */
    public void powerLoss() {
        crash();
        for (SimDisk d : disks.values()) d.powerLoss();
        kv.powerLoss();
    }
}
