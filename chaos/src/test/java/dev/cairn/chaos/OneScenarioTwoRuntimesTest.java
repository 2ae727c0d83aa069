package dev.cairn.chaos;

import static org.assertj.core.api.Assertions.assertThat;

import dev.cairn.sim.SimCluster;
import dev.cairn.sim.runtime.SimWorld;
import dev.cairn.sim.runtime.Simulation;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The same node classes and the same client scenario, on loopback sockets and disks and in the simulator. */
class OneScenarioTwoRuntimesTest {
    @TempDir Path dir;

    @Test void onRealSocketsAndDisks() throws Exception {
        List<Integer> p = Ports.free(4);
        try (LocalCluster cluster = LocalCluster.start(dir, p.get(0), p.subList(1, 4))) {
            cluster.awaitReady();
            try (RealClient client = cluster.client()) {
                List<String> problems = client.await(WriteReadScenario::run);
                assertThat(problems).isEmpty();
            }
        }
    }

    @Test void inTheSimulator() {
        Simulation sim = new Simulation(99);
        SimWorld world = new SimWorld(sim, false);
        SimCluster cluster = new SimCluster(world, 3);
        cluster.startAll();
        sim.runUntil(2_000_000_000L);
        List<List<String>> out = new java.util.ArrayList<>(java.util.Collections.nCopies(1, null));
        sim.at(0, cluster.clientHost(), Simulation.Kind.TASK, 0, () -> WriteReadScenario.run(cluster.client()).onComplete((r, e) -> {
            out.set(0, e == null ? r : List.of("failed: " + e));
            sim.stop();
        }));
        sim.runUntil(600_000_000_000L);
        assertThat(out.get(0)).as("scenario finished").isNotNull();
        assertThat(out.get(0)).isEmpty();
        assertThat(sim.violations()).isEmpty();
    }
}
