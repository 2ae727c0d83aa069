package dev.cairn.client;

import dev.cairn.core.async.Promise;
import dev.cairn.core.env.Cancellable;
import dev.cairn.core.env.Scheduler;
import java.util.function.IntFunction;

/**
 * One read tried on several sources in order: the next source is asked when the one before fails, or
 * when it has not answered within the hedge delay (a stalled disk answers nothing, and a read must not
 * wait out its whole timeout on it). The first good answer wins; answers after it are ignored. Fails
 * with the last error when every source has failed.
 */
final class HedgedRead<T> {
    private final Scheduler scheduler;
    private final long hedgeNanos;
    private final int sources;
    private final IntFunction<Promise<T>> attempt;
    private final Promise<T> result = new Promise<>();
    private int next;
    private int pending;

    private HedgedRead(Scheduler scheduler, long hedgeNanos, int sources, IntFunction<Promise<T>> attempt) {
        this.scheduler = scheduler;
        this.hedgeNanos = hedgeNanos;
        this.sources = sources;
        this.attempt = attempt;
    }

    /**
     * @param attempt reads from source i; a failed promise (or one failed by the caller for a bad answer)
     *                moves on to the next source
     */
    static <T> Promise<T> run(Scheduler scheduler, long hedgeNanos, int sources, IntFunction<Promise<T>> attempt) {
        assert sources > 0;
        HedgedRead<T> r = new HedgedRead<>(scheduler, hedgeNanos, sources, attempt);
        r.launch();
        return r.result;
    }

    private Promise<T> start(int i) {
        try {
            return attempt.apply(i);
        } catch (RuntimeException e) {
            return Promise.failed(dev.cairn.core.async.Unexpected.report(e));
        }
    }

    private void launch() {
        int i = next++;
        pending++;
        Promise<T> p = start(i);
        // the hedge timer is cancelled once its attempt ends: left queued, its task would keep the answer (a MiB
        // read) reachable for the whole hedge delay; at 200 reads a second that pinned ~100 MiB of a gateway's heap
        Cancellable hedge = p.isDone() || next >= sources ? null : scheduler.schedule(hedgeNanos, () -> {
            if (!result.isDone() && !p.isDone() && next <= i + 1 && next < sources) launch();
        });
        p.onComplete((v, e) -> {
            if (hedge != null) hedge.cancel();
            pending--;
            if (result.isDone()) return;
            if (e == null) {
                result.complete(v);
            } else if (next < sources) {
                launch();
            } else if (pending == 0) {
                result.fail(e);
            }
        });
    }
}
