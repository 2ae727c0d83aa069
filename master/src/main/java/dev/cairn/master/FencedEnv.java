package dev.cairn.master;

import dev.cairn.core.env.Address;
import dev.cairn.core.env.Cancellable;
import dev.cairn.core.env.Clock;
import dev.cairn.core.env.Env;
import dev.cairn.core.env.Hazard;
import dev.cairn.core.env.KvStore;
import dev.cairn.core.env.Log;
import dev.cairn.core.env.MessageHandler;
import dev.cairn.core.env.Plant;
import dev.cairn.core.env.Scheduler;
import dev.cairn.core.env.Transport;
import dev.cairn.core.env.Volume;
import dev.cairn.core.proto.Message;
import java.util.random.RandomGenerator;

/**
 * The Env of a {@link Master} serving one leader term of a {@link MasterReplica}. When the term ends the
 * replica {@link #retire retires} it: from then on none of that master's timers or callbacks run and none of
 * its requests leave (a deposed leader's planner must not delete or copy anything on a view a new leader
 * has moved past), while answers to requests it already took still go out. The replica owns the listening
 * socket and hands this master its messages, so {@code transport().start} and {@code stop} do nothing.
 */
final class FencedEnv implements Env {
    private final Env inner;
    private boolean retired;

    FencedEnv(Env inner) { this.inner = inner; }

    void retire() { retired = true; }

    boolean retired() { return retired; }

    private final Scheduler scheduler = new Scheduler() {
        @Override public void execute(Runnable task) {
            inner.scheduler().execute(() -> { if (!retired) task.run(); });
        }

        @Override public Cancellable schedule(long delayNanos, Runnable task) {
            return inner.scheduler().schedule(delayNanos, () -> { if (!retired) task.run(); });
        }
    };

    private final Transport transport = new Transport() {
        @Override public void start(Address local, MessageHandler handler) {}

        @Override public void send(Address to, Message message) {
            if (!retired || message.isReply()) inner.transport().send(to, message);
        }

        @Override public void stop() {}
    };

    @Override public String hostId() { return inner.hostId(); }

    @Override public Clock clock() { return inner.clock(); }

    @Override public Scheduler scheduler() { return scheduler; }

    @Override public RandomGenerator random() { return inner.random(); }

    @Override public Transport transport() { return transport; }

    @Override public Volume volume(String name) { return inner.volume(name); }

    @Override public KvStore kv() { return inner.kv(); }

    @Override public Log log(Class<?> owner) { return inner.log(owner); }

    @Override public boolean planted(Plant bug) { return inner.planted(bug); }

    @Override public void hazard(Hazard point) { inner.hazard(point); }
}
