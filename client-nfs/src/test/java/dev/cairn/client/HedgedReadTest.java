package dev.cairn.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.cairn.core.async.Promise;
import dev.cairn.core.env.Cancellable;
import dev.cairn.core.env.Scheduler;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class HedgedReadTest {
    /** A scheduler whose timers fire only when the test says, and which counts the ones still queued. */
    private static final class ManualScheduler implements Scheduler {
        final List<Runnable> queued = new ArrayList<>();

        @Override public void execute(Runnable task) { task.run(); }

        @Override public Cancellable schedule(long delayNanos, Runnable task) {
            queued.add(task);
            return () -> queued.remove(task);
        }

        void fireAll() {
            for (Runnable r : new ArrayList<>(queued)) {
                queued.remove(r);
                r.run();
            }
        }
    }

    @Test void anAnswerBeforeTheHedgeDelayCancelsTheHedgeTimerSoItHoldsNothing() {
        ManualScheduler s = new ManualScheduler();
        List<Promise<byte[]>> attempts = new ArrayList<>();
        Promise<byte[]> r = HedgedRead.run(s, 500, 3, i -> {
            Promise<byte[]> p = new Promise<>();
            attempts.add(p);
            return p;
        });
        assertEquals(1, attempts.size());
        assertEquals(1, s.queued.size(), "a hedge timer while the first copy has not answered");
        attempts.get(0).complete(new byte[1 << 20]);
        assertTrue(r.isDone());
        // a queued timer would keep the answer (a MiB) reachable for the whole hedge delay
        assertEquals(0, s.queued.size(), "the hedge timer outlived its read");
    }

    @Test void aSilentCopyIsHedgedAndTheFirstGoodAnswerWins() {
        ManualScheduler s = new ManualScheduler();
        List<Promise<String>> attempts = new ArrayList<>();
        Promise<String> r = HedgedRead.run(s, 500, 3, i -> {
            Promise<String> p = new Promise<>();
            attempts.add(p);
            return p;
        });
        s.fireAll(); // the first copy is silent past the hedge delay: the second is asked too
        assertEquals(2, attempts.size());
        attempts.get(1).complete("second");
        assertEquals("second", r.value());
        attempts.get(0).complete("first, late");
        assertEquals("second", r.value());
        assertEquals(0, s.queued.size());
        assertEquals(2, attempts.size(), "no third copy asked once an answer came");
    }

    @Test void failsWithTheLastErrorWhenEveryCopyFailsAndLeavesNoTimer() {
        ManualScheduler s = new ManualScheduler();
        int[] asked = {0};
        Promise<String> r = HedgedRead.run(s, 500, 3, i -> {
            asked[0]++;
            return Promise.failed(new IllegalStateException("copy " + i));
        });
        assertTrue(r.isDone());
        assertEquals(3, asked[0]);
        assertEquals(0, s.queued.size());
        assertEquals("copy 2", r.error().getMessage());
    }
}
