package dev.cairn.core.real;

import dev.cairn.core.env.Cancellable;
import dev.cairn.core.env.Scheduler;
import io.netty.channel.EventLoop;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;

/** A node's scheduler is its own single-threaded netty event loop. */
final class LoopScheduler implements Scheduler {
    private final EventLoop loop;

    LoopScheduler(EventLoop loop) { this.loop = loop; }

    @Override public void execute(Runnable task) { loop.execute(task); }

    @Override public Cancellable schedule(long delayNanos, Runnable task) {
        ScheduledFuture<?> f = loop.schedule(task, Math.max(0, delayNanos), TimeUnit.NANOSECONDS);
        return () -> f.cancel(false);
    }
}
