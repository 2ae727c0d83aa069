package dev.cairn.core.async;

import java.util.function.Consumer;

/**
 * Where node code reports an error it did not expect: anything a promise chain, a request handler or a
 * background pass catches that is not one of the failures the protocol defines ({@link Expected}: a status
 * a peer answered, a frame that does not decode, a disk that failed). Such an error is a bug. It still
 * fails the request it happened in (a chain must never be left unanswered), and it is reported here: the
 * real runtime logs it at ERROR with its stack trace, the simulator records it as a violation of the run
 * (an NPE turned into an error reply must not pass as a retry).
 *
 * <p>The sink is per thread: a node runs on one thread (its event loop, or the simulator's), and so does
 * everything it reports.
 */
public final class Unexpected {
    /** Marks an exception type as part of the protocol: failing with it is an answer, not a bug. */
    public interface Expected {}

    private static final Consumer<Throwable> TO_STDERR = t -> {
        System.err.println("cairn: unexpected error (a bug): " + t);
        t.printStackTrace();
    };

    private static final ThreadLocal<Consumer<Throwable>> SINK = ThreadLocal.withInitial(() -> TO_STDERR);

    private Unexpected() {}

    /** True for the failures the protocol defines (and for nothing else). */
    public static boolean expected(Throwable t) { return t instanceof Expected; }

    /** Reports {@code t} to this thread's sink unless it is {@link #expected}. Returns {@code t}. */
    public static Throwable report(Throwable t) {
        if (t != null && !expected(t)) SINK.get().accept(t);
        return t;
    }

    /** Sends this thread's reports to {@code sink} (null: back to standard error); returns the previous sink. */
    public static Consumer<Throwable> install(Consumer<Throwable> sink) {
        Consumer<Throwable> old = SINK.get();
        SINK.set(sink == null ? TO_STDERR : sink);
        return old;
    }
}
