package dev.cairn.core.async;

import java.util.ArrayList;
import java.util.List;
import java.util.function.BiConsumer;
import java.util.function.BiFunction;
import java.util.function.Consumer;
import java.util.function.Function;

/**
 * A single-threaded promise. Node code lives on one scheduler, so a promise is completed and
 * observed on that scheduler only; there is no locking. Callbacks added after completion run at once.
 */
public final class Promise<T> {
    private boolean done;
    private T value;
    private Throwable error;
    /**
     * The first callback, and any after it in the order added. Nearly every promise gets exactly one (the
     * next step of a chain), so it costs a field, not a list and its array.
     */
    private BiConsumer<? super T, Throwable> callback;
    private List<BiConsumer<? super T, Throwable>> moreCallbacks;

    public static <T> Promise<T> completed(T value) {
        Promise<T> p = new Promise<>();
        p.complete(value);
        return p;
    }

    public static <T> Promise<T> failed(Throwable error) {
        Promise<T> p = new Promise<>();
        p.fail(error);
        return p;
    }

    /** Completes with a value; returns false if it was already complete (a late duplicate is ignored). */
    public boolean complete(T v) {
        if (done) return false;
        done = true;
        value = v;
        fire();
        return true;
    }

    public boolean fail(Throwable t) {
        if (done) return false;
        done = true;
        error = t == null ? new IllegalStateException("failed without a cause") : t;
        fire();
        return true;
    }

    public boolean isDone() { return done; }
    public boolean isFailed() { return done && error != null; }
    public T value() { if (!done || error != null) throw new IllegalStateException("no value"); return value; }
    public Throwable error() { return error; }

    public Promise<T> onComplete(BiConsumer<? super T, Throwable> cb) {
        if (done) {
            cb.accept(value, error);
        } else if (callback == null) {
            callback = cb;
        } else {
            if (moreCallbacks == null) moreCallbacks = new ArrayList<>(2);
            moreCallbacks.add(cb);
        }
        return this;
    }

    public Promise<T> onSuccess(Consumer<? super T> cb) {
        return onComplete((v, e) -> { if (e == null) cb.accept(v); });
    }

    public Promise<T> onFailure(Consumer<Throwable> cb) {
        return onComplete((v, e) -> { if (e != null) cb.accept(e); });
    }

    public <R> Promise<R> map(Function<? super T, ? extends R> f) {
        Promise<R> out = new Promise<>();
        onComplete((v, e) -> {
            if (e != null) { out.fail(e); return; }
            R r;
            try { r = f.apply(v); } catch (Throwable ex) { out.fail(Unexpected.report(ex)); return; }
            out.complete(r);
        });
        return out;
    }

    public <R> Promise<R> flatMap(Function<? super T, Promise<R>> f) {
        Promise<R> out = new Promise<>();
        onComplete((v, e) -> {
            if (e != null) { out.fail(e); return; }
            Promise<R> next;
            try { next = f.apply(v); } catch (Throwable ex) { out.fail(Unexpected.report(ex)); return; }
            next.onComplete((r, e2) -> { if (e2 != null) out.fail(e2); else out.complete(r); });
        });
        return out;
    }

    /** Continues with either outcome: {@code f} gets the value or the error and returns the next promise. */
    public <R> Promise<R> then(BiFunction<? super T, Throwable, Promise<R>> f) {
        Promise<R> out = new Promise<>();
        onComplete((v, e) -> {
            Promise<R> next;
            try { next = f.apply(v, e); } catch (Throwable ex) { out.fail(Unexpected.report(ex)); return; }
            next.onComplete((r, e2) -> { if (e2 != null) out.fail(e2); else out.complete(r); });
        });
        return out;
    }

    /** Pipes this promise's outcome into another one. */
    public void into(Promise<? super T> other) {
        onComplete((v, e) -> { if (e != null) other.fail(e); else other.complete(v); });
    }

    /** Completes when all complete; fails with the first failure (after all have finished). */
    public static <T> Promise<List<T>> all(List<Promise<T>> ps) {
        Promise<List<T>> out = new Promise<>();
        if (ps.isEmpty()) { out.complete(List.of()); return out; }
        List<T> results = new ArrayList<>(ps.size());
        for (int i = 0; i < ps.size(); i++) results.add(null);
        int[] left = {ps.size()};
        Throwable[] first = {null};
        for (int i = 0; i < ps.size(); i++) {
            int idx = i;
            ps.get(i).onComplete((v, e) -> {
                if (e != null && first[0] == null) first[0] = e;
                results.set(idx, v);
                if (--left[0] == 0) {
                    if (first[0] != null) out.fail(first[0]); else out.complete(results);
                }
            });
        }
        return out;
    }

    /**
     * Runs the callbacks in the order added. One that throws does not keep the others from running (each may
     * be another request's next step): the first throwable is rethrown once all have run, to whoever
     * completed the promise.
     */
    private void fire() {
        BiConsumer<? super T, Throwable> first = callback;
        List<BiConsumer<? super T, Throwable>> more = moreCallbacks;
        callback = null;
        moreCallbacks = null;
        Throwable thrown = null;
        if (first != null) thrown = run(first, null);
        if (more != null) for (BiConsumer<? super T, Throwable> cb : more) thrown = run(cb, thrown);
        if (thrown instanceof RuntimeException r) throw r;
        if (thrown instanceof Error err) throw err;
        assert thrown == null : thrown; // a callback cannot throw a checked exception
    }

    private Throwable run(BiConsumer<? super T, Throwable> cb, Throwable thrown) {
        try {
            cb.accept(value, error);
            return thrown;
        } catch (RuntimeException | Error t) {
            return thrown == null ? t : thrown;
        }
    }
}
