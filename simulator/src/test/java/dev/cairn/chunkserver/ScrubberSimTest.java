package dev.cairn.chunkserver;

import static org.assertj.core.api.Assertions.assertThat;

import dev.cairn.core.async.Promise;
import dev.cairn.core.env.Address;
import dev.cairn.core.env.Env;
import dev.cairn.core.env.Node;
import dev.cairn.sim.runtime.SimHost;
import dev.cairn.sim.runtime.SimWorld;
import dev.cairn.sim.runtime.Simulation;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Function;
import org.junit.jupiter.api.Test;

/**
 * The scrubber's pace on a simulated disk: a round spread over its interval (not faster, and no slower
 * than the rate cap allows), rounds back to back at the cap without one, and abandoned copies removed on
 * the second search whatever the pace.
 */
class ScrubberSimTest {
    static final long SECOND = 1_000_000_000L;
    static final int CHUNKS = 120, CHUNK_BYTES = 10_000;

    /** A store on one disk and its scrubber, started by the test once the chunks are in. */
    static final class ScrubNode implements Node {
        final Env env;
        final ChunkStore store;
        Scrubber scrubber;
        final List<Long> removed = new ArrayList<>();
        ScrubNode(Env env) {
            this.env = env;
            this.store = new ChunkStore(List.of(env.volume("disk0")), env.clock(), env.log(ScrubNode.class));
        }
        @Override public void start() { }
        void scrub(long bytesPerSecond, long intervalNanos) {
            scrubber = new Scrubber(env, store, bytesPerSecond, intervalNanos, (id, v, why) -> { }, () -> env.clock().nanoTime(),
                    (id, v) -> { removed.add(id); store.delete(id, v); });
            scrubber.start();
        }
    }

    final Simulation sim = new Simulation(1);
    final SimWorld world = new SimWorld(sim, false);
    final SimHost host = world.addHost("cs", new Address("cs", 1), 0, ScrubNode::new);

    ScrubberSimTest() {
        host.start();
        for (long id = 1; id <= CHUNKS; id++) {
            long chunk = id;
            run(s -> s.create(chunk, 1, 0, Long.MAX_VALUE));
            run(s -> s.write(chunk, 1, 0, new byte[CHUNK_BYTES], 0L));
            run(s -> s.sync(chunk, 1, CHUNK_BYTES));
        }
    }

    ScrubNode node() { return (ScrubNode) host.node(); }

    <T> T run(Function<ChunkStore, Promise<T>> op) { return sim.await(host, () -> op.apply(node().store), 60 * SECOND); }

    /** Bytes verified by {@code seconds} after the scrubber started. */
    long verifiedAfter(long start, long seconds) {
        sim.runUntil(start + seconds * SECOND);
        return node().scrubber.verifiedBytes();
    }

    @Test void aRoundIsSpreadOverTheInterval() {
        node().scrub(ChunkServerConfig.DEFAULT_SCRUB_BYTES_PER_SECOND, 100 * SECOND);
        long start = sim.now(), round = (long) CHUNKS * CHUNK_BYTES;
        for (long t : new long[] {10, 25, 50, 75, 99}) {
            // on pace: the share of the round the time says, within a tick's chunks
            assertThat(verifiedAfter(start, t)).as("after %d s", t).isBetween(round * (t - 2) / 100, round * (t + 2) / 100);
        }
        assertThat(verifiedAfter(start, 102)).as("one round done, the next just begun").isBetween(round, round + round * 4 / 100);
        assertThat(verifiedAfter(start, 250)).as("two and a half rounds").isBetween(round * 248 / 100, round * 252 / 100);
    }

    @Test void withoutAnIntervalRoundsRunBackToBackAtTheReadCap() {
        node().scrub(ChunkServerConfig.DEFAULT_SCRUB_BYTES_PER_SECOND, 0);
        long start = sim.now();
        // 16 reads a tick (ticks a second apart, after the reads): 120 chunks take 8 ticks, then the next round
        // starts at once; 20 s hold 18 or 19 ticks
        assertThat(verifiedAfter(start, 20)).isBetween(18L * Scrubber.MAX_READS_PER_TICK * CHUNK_BYTES, 19L * Scrubber.MAX_READS_PER_TICK * CHUNK_BYTES);
    }

    @Test void aDiskTooBigForTheIntervalAtTheCapTakesLonger() {
        node().scrub(50_000, 10 * SECOND); // 5 chunks a second: a round takes 24 s, not 10
        long start = sim.now();
        assertThat(verifiedAfter(start, 20)).as("at the cap, 10 s after the round was due").isBetween(18L * 50_000, 20L * 50_000);
        assertThat(verifiedAfter(start, 30)).isBetween(27L * 50_000, 30L * 50_000);
    }

    @Test void anAbandonedCopyGoesOnTheSecondSearchWhateverThePace() {
        run(s -> s.createCopy(500, 1, 0, dev.cairn.core.chunk.ChunkFormat.MAX_BLOCKS)); // a planner copy never filled nor synced
        long until = node().env.clock().nanoTime() + 200 * SECOND; // on the lease clock the scrubber is given
        run(s -> s.create(501, 1, 0, until)); // a lease's copy inside its window
        node().scrub(ChunkServerConfig.DEFAULT_SCRUB_BYTES_PER_SECOND, 7 * 24 * 3600 * SECOND);
        long start = sim.now();
        sim.runUntil(start + Scrubber.ABANDON_SWEEP_NANOS + SECOND);
        assertThat(node().removed).as("first search: only marked").isEmpty();
        sim.runUntil(start + 2 * Scrubber.ABANDON_SWEEP_NANOS + SECOND);
        assertThat(node().removed).as("removed").containsExactly(500L);
        assertThat(node().store.info(1)).as("synced copies stay").isNotNull();
        assertThat(node().store.info(501)).as("a copy inside its write window stays").isNotNull();
    }
}
