package dev.cairn.core.real;

import dev.cairn.core.async.Unexpected;
import dev.cairn.core.env.Cancellable;
import dev.cairn.core.env.Scheduler;
import io.netty.channel.EventLoop;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;

/** A node's scheduler is its own single-threaded netty event loop. */
final class LoopScheduler implements Scheduler {
    private final EventLoop loop;

    LoopScheduler(EventLoop loop) { this.loop = loop; }

    @Override public void execute(Runnable task) { loop.execute(guarded(task)); }

    @Override public Cancellable schedule(long delayNanos, Runnable task) {
        ScheduledFuture<?> f = loop.schedule(guarded(task), Math.max(0, delayNanos), TimeUnit.NANOSECONDS);
        return () -> f.cancel(false);
    }

    /** A task that throws is a bug: reported (with its stack trace), never left to netty's one-line warning. */
    private static Runnable guarded(Runnable task) {
        return () -> {
            try {
                task.run();
            } catch (Throwable t) {
                Unexpected.report(t);
            }
        };
    }
}
