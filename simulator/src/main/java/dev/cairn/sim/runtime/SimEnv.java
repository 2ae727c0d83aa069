package dev.cairn.sim.runtime;

import dev.cairn.core.env.Cancellable;
import dev.cairn.core.env.Clock;
import dev.cairn.core.env.Env;
import dev.cairn.core.env.KvStore;
import dev.cairn.core.env.Log;
import dev.cairn.core.env.Scheduler;
import dev.cairn.core.env.Transport;
import dev.cairn.core.env.Volume;
import java.util.TreeMap;
import java.util.random.RandomGenerator;

/** One incarnation of a simulated host's Env: everything it schedules dies with the incarnation. */
public final class SimEnv implements Env {
    private final SimHost host;
    private final int incarnation;
    private final SimTransport transport;
    private final TreeMap<String, SimVolume> volumes = new TreeMap<>();
    private final RandomGenerator random;

    SimEnv(SimHost host, int incarnation) {
        this.host = host;
        this.incarnation = incarnation;
        this.transport = new SimTransport(host, incarnation);
        this.random = host.random().split();
    }

    private final Clock clock = new Clock() {
        @Override public long nanoTime() { return host.monoNanos(); }

        @Override public long wallMillis() { return host.wallMillis(); }
    };

    private final Scheduler scheduler = new Scheduler() {
        @Override public void execute(Runnable task) { host.sim().at(0, host, Simulation.Kind.TASK, 0, task); }

        @Override public Cancellable schedule(long delayNanos, Runnable task) {
            return host.sim().at(Math.max(0, delayNanos), host, Simulation.Kind.TIMER, delayNanos, task);
        }
    };

    @Override public String hostId() { return host.name(); }

    @Override public Clock clock() { return clock; }

    @Override public Scheduler scheduler() { return scheduler; }

    @Override public RandomGenerator random() { return random; }

    @Override public Transport transport() { return transport; }

    @Override public Volume volume(String name) {
        return volumes.computeIfAbsent(name, n -> new SimVolume(host, host.disk(n)));
    }

    @Override public KvStore kv() { return host.kvStore(); }

    @Override public Log log(Class<?> owner) { return new SimLog(host, owner); }

    @Override public boolean planted(dev.cairn.core.env.Plant bug) { return host.sim().planted(bug); }

    @Override public void hazard(dev.cairn.core.env.Hazard point) { host.sim().hazard(host, point); }

    int incarnation() { return incarnation; }
}
