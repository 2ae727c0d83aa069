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
    // --- clock faults: elapsed time runs at (1 + driftPpm/1e6) of true time from the anchor on ---
    private long driftPpm;
    private long driftAnchorNow;
    private long driftAnchorElapsed;
    /** Sum of wall-clock steps (an operator or a bad NTP server setting the clock). */
    private long wallStepMillis;
    /** Permanently lost: its disks are gone and it never starts again. */
    private boolean lost;
    private boolean tornWrites;
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

    /** Until when the process is stopped (as by SIGSTOP): its tasks, timers, deliveries and disk completions wait. */
    private long pausedUntil;

    public long pausedUntil() { return pausedUntil; }

    /** Stops the process until {@code untilNanos} (simulated time); its clocks run on, so it wakes to a jump. */
    public void pause(long untilNanos) { if (up) pausedUntil = untilNanos; }

    public boolean isPaused() { return up && pausedUntil - sim.now() > 0; }

    public Node node() { return node; }

    public SimEnv env() { return env; }

    public Simulation sim() { return sim; }

    SimNetwork net() { return net; }

    SplittableRandom random() { return random; }

    SimLog.Ring logRing() { return logRing; }

    long monoNanos() { return monoBaseNanos + elapsedNanos(); }

    long wallMillis() { return Simulation.EPOCH_MILLIS + wallOffsetMillis + wallStepMillis + elapsedNanos() / 1_000_000; }

    private long elapsedNanos() {
        long since = sim.now() - driftAnchorNow;
        return driftAnchorElapsed + since + since * driftPpm / 1_000_000; // never goes back: |ppm| < 10^6
    }

    /** This host's clocks run {@code ppm} parts per million fast (negative: slow) from now on. */
    public void setDriftPpm(long ppm) {
        if (ppm <= -1_000_000) throw new IllegalArgumentException("drift " + ppm + " ppm would stop the clock");
        driftAnchorElapsed = elapsedNanos();
        driftAnchorNow = sim.now();
        driftPpm = ppm;
    }

    public long driftPpm() { return driftPpm; }

    /** Steps the wall clock (never the monotonic one) by {@code millis}, forward or back. */
    public void stepWallClock(long millis) { wallStepMillis += millis; }

    /** This host's wall clock minus true time, in milliseconds (skew plus steps plus accumulated drift). */
    public long wallErrorMillis() { return wallMillis() - (Simulation.EPOCH_MILLIS + sim.now() / 1_000_000); }

    SimDisk disk(String volume) {
        return disks.computeIfAbsent(volume, v -> {
            SimDisk d = new SimDisk(this, v);
            d.setTornWrites(tornWrites);
            return d;
        });
    }

    /** Power losses on this host tear unsynced writes at sector granularity (see {@link SimDisk}). */
    public void setTornWrites(boolean on) {
        tornWrites = on;
        for (SimDisk d : disks.values()) d.setTornWrites(on);
    }

    /** The next {@code n} reads on a disk fail with an I/O error. */
    public void failReads(String volume, int n) { disk(volume).failReads(n); }

    /** The next {@code n} writes on a disk land one sector past their target. */
    public void misdirectWrites(String volume, int n) { disk(volume).misdirectWrites(n); }

    /** Ends every transient disk fault (stall, slowness, armed failures, reduced capacity); dead disks stay dead. */
    public void healDisks() { for (SimDisk d : disks.values()) d.heal(); }

    SimKv kvStore() { return kv; }

    /** Ground truth for the checkers: this host's key-value store as a power loss now would leave it. */
    public dev.cairn.core.env.KvStore durableKv() { return kv.durableView(); }

    /** Boots a fresh incarnation of the node (first start or restart after a crash). */
    public void start() {
        if (up) throw new IllegalStateException(name + " is already up");
        if (lost) throw new IllegalStateException(name + " was permanently lost");
        incarnation++;
        up = true;
        pausedUntil = 0;
        env = new SimEnv(this, incarnation);
        node = factory.apply(env);
        Node n = node;
        sim.at(0, this, Simulation.Kind.TASK, 0, n::start);
    }

    /** Kills the process: volatile state gone, pending events dropped, connections reset; disks keep everything written. */
    public void crash() {
        if (!up) return;
        up = false;
        pausedUntil = 0; // a stopped process can be killed
        node = null;
        for (SimDisk d : disks()) d.processDied();
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

    /** A dead disk answers again with what it held (a loose cable fixed, a controller reset): not a fault the sweeps draw. */
    public void reviveDisk(String volume) { disk(volume).revive(); }

    /** The next {@code n} fsyncs on a disk fail, losing the unsynced writes they covered. */
    public void failSyncs(String volume, int n) { disk(volume).failSyncs(n); }

    /** Caps a disk's size: writes that would grow its files past it fail with ENOSPC. */
    public void setDiskCapacity(String volume, long bytes) { disk(volume).setCapacity(bytes); }

    /** The machine is gone for good: a crash, and its disks and key-value store are destroyed. */
    public void destroy() {
        crash();
        lost = true;
        for (SimDisk d : disks.values()) d.destroy();
        kv.destroy();
    }

    public boolean isLost() { return lost; }

    /** The key-value store's disk is replaced by an empty one: a crash, and the store (durable or not) is gone. */
    public void wipeStore() {
        crash();
        kv.destroy();
    }

    /** The store as the node sees it now (read only): what the checkers compare replicas with. */
    public dev.cairn.core.env.KvStore visibleKv() { return kv.visibleView(); }

    /** The disks this host has (created on first use by its node). */
    public java.util.List<String> diskNames() { return new java.util.ArrayList<>(disks.keySet()); }

    /** Ground truth for the checkers: the disks in name order (a view, no copy: the witness asks per chunk). */
    public java.util.Collection<SimDisk> disks() { return java.util.Collections.unmodifiableCollection(disks.values()); }

    /** Ground truth for the checkers: the named disk, or null if the node never opened it. */
    public SimDisk diskOrNull(String volume) { return disks.get(volume); }

    /** Loses power: a crash plus every unsynced write on its disks and key-value store. */
    public void powerLoss() { powerLoss(false); }

    /** Loses power; {@code tear}: unsynced writes are torn at sectors even if this host's torn writes are off. */
    public void powerLoss(boolean tear) {
        crash();
        for (SimDisk d : disks.values()) d.powerLoss(tear);
        kv.powerLoss();
    }
}
