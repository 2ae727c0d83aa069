package dev.cairn.core.async;

import java.util.ArrayDeque;
import java.util.function.Supplier;

/**
 * Runs asynchronous steps one after another: a step starts when the previous one's promise completes.
 * Used where operations on one object (a chunk, a file) must not interleave.
 *
 * <p>Steps that only look ({@link #submitShared}, a chunk's reads) may overlap each other, never an ordinary
 * step: a run of shared steps at the head of the queue starts together, and the next ordinary step waits for
 * all of them. Order is kept: a shared step submitted after an ordinary one waits for it (a read sees every
 * write before it), so neither kind starves the other.
 */
public final class SerialQueue {
    private record Step(boolean shared, Runnable run) {}

    private final ArrayDeque<Step> waiting = new ArrayDeque<>();
    /** An ordinary step is running. */
    private boolean exclusive;
    /** Shared steps running. */
    private int shared;

    public <T> Promise<T> submit(Supplier<Promise<T>> step) { return enqueue(false, step); }

    /** A step that may run alongside other shared steps (it changes nothing an overlapping shared step reads). */
    public <T> Promise<T> submitShared(Supplier<Promise<T>> step) { return enqueue(true, step); }

    private <T> Promise<T> enqueue(boolean isShared, Supplier<Promise<T>> step) {
        Promise<T> out = new Promise<>();
        waiting.add(new Step(isShared, () -> {
            Promise<T> p;
            try { p = step.get(); } catch (Throwable e) { p = Promise.failed(Unexpected.report(e)); }
            p.onComplete((v, e) -> {
                // the next step runs even if the caller's callback throws: a queue must never wedge
                try {
                    if (e != null) out.fail(e); else out.complete(v);
                } finally {
                    if (isShared) {
                        assert shared > 0;
                        shared--;
                    } else {
                        assert exclusive;
                        exclusive = false;
                    }
                    next();
                }
            });
        }));
        next();
        return out;
    }

    public boolean idle() { return !exclusive && shared == 0 && waiting.isEmpty(); }

    private void next() {
        while (!exclusive && !waiting.isEmpty()) {
            Step s = waiting.peek();
            if (!s.shared() && shared > 0) return; // an ordinary step waits for the shared ones running
            waiting.poll();
            if (s.shared()) shared++; else exclusive = true;
            s.run().run();
        }
    }
}
