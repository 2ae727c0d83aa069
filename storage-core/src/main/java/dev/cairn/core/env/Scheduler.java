package dev.cairn.core.env;

/** The node's single thread: everything a node does runs as a task here, one at a time. */
public interface Scheduler {
    void execute(Runnable task);

    Cancellable schedule(long delayNanos, Runnable task);
}
