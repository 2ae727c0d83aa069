package dev.cairn.core.async;

import java.util.ArrayDeque;
import java.util.function.Supplier;

/**
 * Runs asynchronous steps one after another: a step starts when the previous one's promise completes.
 * Used where operations on one object (a chunk, a file) must not interleave.
 */
public final class SerialQueue {
    private final ArrayDeque<Runnable> waiting = new ArrayDeque<>();
    private boolean running;

    public <T> Promise<T> submit(Supplier<Promise<T>> step) {
        Promise<T> out = new Promise<>();
        waiting.add(() -> {
            Promise<T> p;
            try { p = step.get(); } catch (Throwable e) { p = Promise.failed(Unexpected.report(e)); }
            p.onComplete((v, e) -> {
                // the next step runs even if the caller's callback throws: a queue must never wedge
                try {
                    if (e != null) out.fail(e); else out.complete(v);
                } finally {
                    running = false;
                    next();
                }
            });
        });
        next();
        return out;
    }

    public boolean idle() { return !running && waiting.isEmpty(); }

    private void next() {
        if (running || waiting.isEmpty()) return;
        running = true;
        waiting.poll().run();
    }
}
