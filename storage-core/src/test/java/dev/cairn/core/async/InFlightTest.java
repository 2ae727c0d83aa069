package dev.cairn.core.async;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/** The head is the oldest unfinished operation whatever order they finish in, and memory follows the unfinished ones. */
class InFlightTest {
    static final class Op extends InFlight.Op {
        final int n;

        Op(int n) { this.n = n; }
    }

    @Test void theOldestUnfinishedIsTheHeadAndFinishedOnesDoNotPileUp() {
        for (int seed = 0; seed < 200; seed++) {
            SplittableRandom r = new SplittableRandom(seed);
            InFlight<Op> f = new InFlight<>();
            List<Op> all = new ArrayList<>();
            List<Op> open = new ArrayList<>(); // the model: unfinished, in start order
            for (int step = 0; step < 3000; step++) {
                // long stretches where an old operation stays open while many others come and go
                if (open.isEmpty() || r.nextInt(10) < 5) {
                    Op op = new Op(all.size());
                    all.add(op);
                    open.add(op);
                    f.add(op);
                } else {
                    Op op = r.nextInt(50) == 0 ? open.get(0) : open.get(open.size() - 1 - r.nextInt(Math.min(open.size(), 3)));
                    open.remove(op);
                    assertThat(f.finish(op)).isTrue();
                    assertThat(f.finish(op)).as("an operation finishes once").isFalse();
                    assertThat(op.finished()).isTrue();
                }
                assertThat(f.oldest()).as("seed %d step %d", seed, step).isSameAs(open.isEmpty() ? null : open.get(0));
                assertThat(f.unfinished()).isEqualTo(open.size());
                assertThat(f.held()).isLessThanOrEqualTo(2 * open.size() + InFlight.SLACK);
            }
        }
    }

    @Test void clearForgetsEverything() {
        InFlight<Op> f = new InFlight<>();
        for (int i = 0; i < 10; i++) f.add(new Op(i));
        f.clear();
        assertThat(f.oldest()).isNull();
        assertThat(f.unfinished()).isZero();
        assertThat(f.held()).isZero();
    }
}
