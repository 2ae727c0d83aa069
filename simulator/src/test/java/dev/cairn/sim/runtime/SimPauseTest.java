package dev.cairn.sim.runtime;

import static org.assertj.core.api.Assertions.assertThat;

import dev.cairn.core.env.Address;
import dev.cairn.core.env.Env;
import dev.cairn.core.env.Node;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** A paused host (a stopped process) runs nothing until it continues, then runs what waited in its order; its clock ran on. */
class SimPauseTest {
    static final long MS = 1_000_000L;

    final Simulation sim = new Simulation(3);
    final SimWorld world = new SimWorld(sim, false);
    final List<String> ran = new ArrayList<>();
    Env env;

    SimHost host() {
        SimHost h = world.addHost("h", new Address("h", 1), 0, e -> {
            env = e;
            return new Node() { @Override public void start() {} };
        });
        h.start();
        sim.runUntil(1 * MS);
        return h;
    }

    @Test void timersDueDuringAPauseRunAfterItInTheirOrderAndSeeTheClockJump() {
        SimHost h = host();
        long[] seenAt = new long[1];
        env.scheduler().schedule(10 * MS, () -> { ran.add("a"); seenAt[0] = env.clock().nanoTime(); });
        env.scheduler().schedule(20 * MS, () -> ran.add("b"));
        env.scheduler().schedule(500 * MS, () -> ran.add("c"));
        long start = sim.now();
        h.pause(start + 100 * MS);
        assertThat(h.isPaused()).isTrue();
        sim.runUntil(start + 99 * MS);
        assertThat(ran).as("nothing runs while stopped").isEmpty();
        sim.runUntil(start + 101 * MS);
        assertThat(ran).containsExactly("a", "b");
        assertThat(seenAt[0] - start).as("the first timer ran when the process continued").isGreaterThanOrEqualTo(100 * MS - 2 * MS);
        assertThat(h.isPaused()).isFalse();
        sim.runUntil(start + 600 * MS);
        assertThat(ran).as("a timer past the pause runs on time").containsExactly("a", "b", "c");
    }

    @Test void aStoppedProcessCanBeKilledAndComesBackRunning() {
        SimHost h = host();
        env.scheduler().schedule(10 * MS, () -> ran.add("lost with the process"));
        h.pause(sim.now() + 10_000 * MS);
        h.crash();
        assertThat(h.isPaused()).isFalse();
        h.start();
        env.scheduler().schedule(5 * MS, () -> ran.add("new incarnation"));
        sim.runUntil(sim.now() + 20 * MS);
        assertThat(ran).containsExactly("new incarnation");
    }
}
