package dev.cairn.sim.runtime;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.PriorityQueue;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/** The simulator's event heap against {@link PriorityQueue}: the same events come out in the same order. */
class EventQueueTest {
    record Item(long time, long seq) implements Comparable<Item> {
        @Override public int compareTo(Item o) {
            int c = Long.compare(time, o.time);
            return c != 0 ? c : Long.compare(seq, o.seq);
        }
    }

    /** Adds, polls and (now and then) removals of a subset, against the model. */
    @Test void pollsInTimeThenSequenceOrderLikeAPriorityQueue() {
        for (long seed = 1; seed <= 200; seed++) {
            SplittableRandom rnd = new SplittableRandom(seed);
            EventQueue<Item> q = new EventQueue<>();
            PriorityQueue<Item> model = new PriorityQueue<>();
            long seq = 0, now = 0;
            int steps = rnd.nextInt(1, 5000);
            for (int i = 0; i < steps; i++) {
                if (rnd.nextInt(500) == 0) { // drop some, as the simulation drops cancelled events
                    long mod = rnd.nextLong(2, 5);
                    q.removeIf(x -> x.seq() % mod == 0);
                    model.removeIf(x -> x.seq() % mod == 0);
                } else if (model.isEmpty() || rnd.nextInt(3) > 0) { // mostly adds: the queue grows past its first array
                    Item it = new Item(now + rnd.nextLong(rnd.nextBoolean() ? 3 : 1_000_000), seq++); // many equal times
                    q.add(it.time(), it.seq(), it);
                    model.add(it);
                } else {
                    assertThat(q.firstTime()).isEqualTo(model.peek().time());
                    Item got = q.poll();
                    assertThat(got).as("seed %d step %d", seed, i).isSameAs(model.poll());
                    now = got.time();
                }
                assertThat(q.size()).isEqualTo(model.size());
            }
            while (!model.isEmpty()) assertThat(q.poll()).isSameAs(model.poll());
            assertThat(q.poll()).isNull();
        }
    }
}
