package dev.cairn.sim;

import static org.assertj.core.api.Assertions.assertThat;

import dev.cairn.core.env.Plant;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.ArrayList;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * The checkers can fail: every bug planted in the node code ({@link Plant}) is caught by the sweep the CI runs
 * ({@link SimRunTest}: the full fault catalog, {@link SimRunTest#SWEEP_DURATION} of virtual time per seed)
 * within {@link #MAX_SEEDS} seeds, by a checker that is about what the bug breaks; the catching seed passes
 * without the bug; and it replays to the same trace and the same violations. The seed is searched for, not
 * written down: any change to the system moves every trace, and a fixed seed would stop catching the bug
 * without anyone noticing.
 */
class PlantedBugTest {
    /**
     * Seeds searched for one that catches a bug. Raised from 400 when {@code COPY_LENGTH_UNJUDGED} was first caught at
     * seed 418; since the stop of 2026-11-27 the sweep meets no copy it would let count (see
     * {@link #NOT_CAUGHT_BY_THE_SWEEP}).
     */
    static final int MAX_SEEDS = 600;
    /** Seeds run at once while searching (a batch; the lowest catching seed of the first batch with one wins). */
    static final int BATCH = 8;

    /** The kinds of violation that show each bug (the checker about what it breaks must be among the catchers). */
    static final Map<Plant, Set<String>> SHOWN_AS = new EnumMap<>(Map.ofEntries(
            Map.entry(Plant.ACK_BEFORE_FSYNC, Set.of("durability", "torn-durable")),
            Map.entry(Plant.DELETE_UNCHECKED, Set.of("redundancy", "durability", "convergence", "garbage")),
            Map.entry(Plant.TWO_ON_ONE_HOST, Set.of("liveness")),
            Map.entry(Plant.WALL_CLOCK_LEASES, Set.of("convergence", "garbage", "durability")),
            Map.entry(Plant.CHAIN_SYNC_EARLY, Set.of("durability")),
            Map.entry(Plant.TIDY_BELOW_GOAL, Set.of("redundancy")),
            Map.entry(Plant.CURRENT_WITHOUT_LOWER_BOUND, Set.of("convergence", "garbage", "redundancy", "durability")),
            Map.entry(Plant.HEADER_OVER_DURABLE_SLOT, Set.of("torn-durable")),
            Map.entry(Plant.HEADER_NOT_SYNCED, Set.of("durability", "torn-durable")),
            Map.entry(Plant.DIR_NOT_SYNCED, Set.of("durability")),
            Map.entry(Plant.HEADER_BEFORE_DATA, Set.of("torn-durable")),
            Map.entry(Plant.COMMIT_NOT_AWAITED, Set.of("durability", "corrupt-read")),
            Map.entry(Plant.LOG_NOT_SYNCED, Set.of("durability", "metadata")),
            // a reader served the rotten block, or a repair copy read from it holds it under fresh checksums (then counted
            // as a good copy, it lets the planner drop a sound one as extra)
            Map.entry(Plant.LAST_BLOCK_UNVERIFIED, Set.of("corrupt-read", "durability", "redundancy")),
            Map.entry(Plant.SNAPSHOT_NOT_DURABLE, Set.of("raft")),
            Map.entry(Plant.INSTALL_OVER_OLD_STATE, Set.of("raft", "metadata")),
            Map.entry(Plant.GATEWAY_VERIFIER_REUSED, Set.of("durability", "corrupt-read")),
            Map.entry(Plant.DEALLOCATE_NOT_SYNCED, Set.of("durability", "corrupt-read")),
            Map.entry(Plant.OVERWRITE_IN_PLACE, Set.of("torn-durable", "durability", "corrupt-read")),
            Map.entry(Plant.SYNC_COVERS_LATER_WRITES, Set.of("durability", "corrupt-read")),
            // caught since the NFS lane writes again between a failed COMMIT and its retry (2 of 500 CI seeds; 0 before)
            Map.entry(Plant.RELEASE_BEFORE_COMMIT, Set.of("durability", "corrupt-read"))));

    /** Bugs in the master group's code: swept with a group of three masters (the sweep's {@code --masters 3}). */
    static final Set<Plant> IN_THE_MASTER_GROUP = Set.of(Plant.SNAPSHOT_NOT_DURABLE, Plant.INSTALL_OVER_OLD_STATE);

    /** The CI sweep's options for {@code seed}, with the master group a bug needs. */
    static SimOptions sweep(long seed, Plant bug) {
        SimOptions o = SimOptions.defaults(seed).withDuration(SimRunTest.SWEEP_DURATION);
        return IN_THE_MASTER_GROUP.contains(bug) ? o.withMasters(3) : o;
    }

    /**
     * Plants the sweep cannot catch today, and why; each is guarded by a test of its mechanism instead. A write
     * landing after the chunkservers' window does harm only if the planner copied the chunk in between (its hold
     * had ended), and no fault pauses a writer that long mid-lease: a host pause fault is the way to catch it. A copy
     * at the chunk's version but shorter than its committed bytes no longer arises in the sweep: most likely it came
     * from a gateway's extension (an empty write) left out of its commit's syncs, fixed on 2026-11-27 (not proven);
     * {@code COPY_LENGTH_UNJUDGED} went uncaught in seeds 1..1000 (it was caught at 418
     * before the stop of 2026-11-27), so a stand-in chunkserver reports such a copy instead.
     */
    static final Map<Plant, String> NOT_CAUGHT_BY_THE_SWEEP = Map.of(
            Plant.LEASE_WINDOW_IGNORED, "ChunkStoreSimTest.clientWritesAreTakenOnlyInsideTheLeaseWindow (EXPIRED)",
            Plant.COPY_LENGTH_UNJUDGED, "PlannerSimTest.aCopyShorterThanTheCommittedBytesIsNotCountedCurrent");

    static ExecutorService pool;

    @BeforeAll static void startPool() { pool = Executors.newFixedThreadPool(Math.max(1, Runtime.getRuntime().availableProcessors())); }

    @AfterAll static void stopPool() { pool.shutdownNow(); }

    @Test void everyPlantSaysHowItShows() {
        for (Plant p : Plant.values()) {
            assertThat(SHOWN_AS.containsKey(p) ^ NOT_CAUGHT_BY_THE_SWEEP.containsKey(p)).as("how %s shows, or why the sweep misses it", p).isTrue();
        }
    }

    @ParameterizedTest(name = "{0}")
    @EnumSource(value = Plant.class, mode = EnumSource.Mode.EXCLUDE, names = {"LEASE_WINDOW_IGNORED", "COPY_LENGTH_UNJUDGED"}) // NOT_CAUGHT_BY_THE_SWEEP
    void plantedBugIsCaughtByTheSweepAndReplays(Plant bug) throws Exception {
        SimResult with = firstCatch(bug);
        assertThat(with).as("no seed in 1..%d catches %s: the checkers (or the faults) lost their edge", MAX_SEEDS, bug).isNotNull();
        long seed = with.seed();
        assertThat(with.violationKinds().keySet()).as("%s caught by seed %d as %s", bug, seed, with.summary()).containsAnyElementsOf(SHOWN_AS.get(bug));

        SimOptions clean = sweep(seed, bug);
        SimResult without = SimRun.run(clean).withoutLog();
        assertThat(without.violations()).as("seed %d without the bug: %s", seed, without.summary()).isEmpty();

        SimOptions planted = clean.withPlants(Set.of(bug));
        assertThat(planted.replayCommand()).endsWith("--plant " + bug.cliName());
        SimResult replay = SimRun.run(planted).withoutLog();
        assertThat(replay.traceHash()).as("seed %d with %s replays", seed, bug).isEqualTo(with.traceHash());
        assertThat(replay.violations()).isEqualTo(with.violations());
    }

    /** The run of the lowest seed in 1..{@link #MAX_SEEDS} whose sweep run with {@code bug} has violations, or null. */
    static SimResult firstCatch(Plant bug) throws Exception {
        for (long from = 1; from <= MAX_SEEDS; from += BATCH) {
            List<Future<SimResult>> runs = new ArrayList<>();
            for (long seed = from; seed < from + BATCH && seed <= MAX_SEEDS; seed++) {
                SimOptions o = sweep(seed, bug).withPlants(Set.of(bug));
                runs.add(pool.submit(() -> SimRun.run(o).withoutLog()));
            }
            for (Future<SimResult> f : runs) {
                SimResult r = f.get();
                if (!r.violations().isEmpty()) {
                    for (Future<SimResult> rest : runs) rest.cancel(false);
                    return r;
                }
            }
        }
        return null;
    }
}
