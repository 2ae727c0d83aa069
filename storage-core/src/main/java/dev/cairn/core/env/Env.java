package dev.cairn.core.env;

import java.util.random.RandomGenerator;

/**
 * Everything a node may touch of the outside world. Node code (master, chunkserver, client, gateway)
 * uses nothing else for time, randomness, threads, network or disk; a build check enforces it. The real
 * runtime ({@code dev.cairn.core.real}) and the simulator ({@code dev.cairn.sim}) implement it.
 */
public interface Env {
    /** A stable name for this host (used in logs and traces). */
    String hostId();

    Clock clock();

    Scheduler scheduler();

    /** This node's random source (seeded from the run's seed in simulation). */
    RandomGenerator random();

    Transport transport();

    /** A named data directory of this host, e.g. "disk0"; it keeps its durable contents across restarts. */
    Volume volume(String name);

    /** This node's key-value store (opened on first use). */
    KvStore kv();

    /** A logger whose lines carry this host's name and, in simulation, the virtual time. */
    Log log(Class<?> owner);

    /** True only in a simulated run told to plant this bug ({@link Plant}); never in the real runtime. */
    default boolean planted(Plant bug) { return false; }

    /**
     * Marks a risky point ({@link Hazard}): the simulator may crash this host or cut its power right after
     * the current step; the real runtime does nothing.
     */
    default void hazard(Hazard point) {}
}
