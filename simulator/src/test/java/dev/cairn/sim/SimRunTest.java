package dev.cairn.sim;

import static org.assertj.core.api.Assertions.assertThat;

import dev.cairn.sim.SimOptions.Fault;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.EnumMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** Seeds in, invariants out: every seed passes, and a seed always replays to the same trace. */
class SimRunTest {
    static final long SWEEP_DURATION = 10_000_000_000L;
    /** Seeds the CI sweep runs with the full fault catalog, swarmed per seed (a longer sweep is for nightly use: docs/operations.md). */
    static final int CI_SEEDS = 500;
    /**
     * Seeds of the CI sweep that still find a real bug, open in issue 5 (each must keep failing until the bug
     * is fixed: then it moves out of this list).
     *
     * <p>None today. The last, 221 (durability: a lease's fresh, empty copies counted as current, so the
     * planner kept an empty copy and dropped full ones), was fixed in {@code Master.topUp}; the seed stays in
     * the sweep as its regression test.
     */
    static final Set<Long> KNOWN_FAILING = Set.of();
    /**
     * Chunks the CI sweep may report "lost with an excuse" (a fault took the last readable copies the auditor's own
     * model knew of): 32 on 2026-11-28, 23 of them in seed 171 (a host loss seconds after a disk death). A coarse guard
     * against a change that loses many chunks and gets them all excused; in runs of 10 s chance dominates the count
     * (with lease revocation turned off it was 23), so the 60 s sweeps of docs/benchmarks.md are the measure of
     * repair. Raise it only with each new excuse read ({@code ./cairn sim --seeds 1..500 --duration 10s --excuses}).
     */
    static final long MAX_EXCUSED_LOSSES = 48;

    @Test void fiveHundredSeedsPassWithTheFullFaultCatalog() throws Exception {
        int threads = Math.max(1, Runtime.getRuntime().availableProcessors());
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        List<Future<SimResult>> runs = new ArrayList<>();
        for (long seed = 1; seed <= CI_SEEDS; seed++) {
            SimOptions o = SimOptions.defaults(seed).withDuration(SWEEP_DURATION);
            runs.add(pool.submit(() -> SimRun.run(o).withoutLog()));
        }
        List<String> failures = new ArrayList<>();
        Map<SimOptions.Fault, Integer> coverage = new EnumMap<>(SimOptions.Fault.class);
        long commits = 0, verified = 0, nfsCommits = 0, nfsCommitsAmid = 0, nfsResends = 0, nfsEcUpdates = 0, excused = 0, aimedAtArrivals = 0, writesBesideRetries = 0, prefixReads = 0;
        List<String> excuses = new ArrayList<>();
        for (Future<SimResult> f : runs) {
            SimResult r = f.get();
            r.faultCounts().forEach((k, c) -> coverage.merge(k, c, Integer::sum));
            commits += r.stats().commits;
            verified += r.stats().verified;
            nfsCommits += r.stats().nfsCommits;
            nfsCommitsAmid += r.stats().nfsCommitsAmid;
            nfsResends += r.stats().nfsResends;
            nfsEcUpdates += r.stats().nfsEcUpdates;
            excused += r.stats().excusedLosses;
            aimedAtArrivals += r.stats().aimedAtArrivals;
            writesBesideRetries += r.stats().nfsWritesBesideRetries;
            prefixReads += r.stats().nfsPrefixReads;
            for (String x : r.excuses()) excuses.add("seed " + r.seed() + ": " + x);
            if (KNOWN_FAILING.contains(r.seed())) {
                assertThat(r.passed()).as("seed %d is listed as finding an open bug but passes: take it off the list", r.seed()).isFalse();
            } else if (!r.passed()) {
                failures.add(r.summary() + "  replay: " + r.options().replayCommand());
            }
        }
        pool.shutdown();
        assertThat(failures).as(String.join("\n", failures)).isEmpty();
        assertThat(excused).as("chunks lost with an excuse:\n" + String.join("\n", excuses)).isLessThanOrEqualTo(MAX_EXCUSED_LOSSES);
        assertThat(commits).as("the workload made progress").isGreaterThan(CI_SEEDS * 20L);
        assertThat(verified).as("acknowledged files were read back").isGreaterThan(CI_SEEDS * 10L);
        assertThat(nfsCommits).as("the NFS lane's COMMITs acknowledged writes").isGreaterThan(CI_SEEDS * 5L);
        assertThat(nfsCommitsAmid).as("COMMITs sent beside WRITEs acknowledged the writes before them").isGreaterThan(CI_SEEDS / 4);
        assertThat(nfsResends).as("a gateway restart made NFS clients resend what it lost").isPositive();
        assertThat(nfsEcUpdates).as("changes in place of erasure-coded files were acknowledged (their chunks rewritten)").isGreaterThan(CI_SEEDS / 4);
        assertThat(aimedAtArrivals).as("aimed faults fired as messages arrived").isGreaterThan(CI_SEEDS / 10);
        assertThat(writesBesideRetries).as("the NFS lane wrote again between a failed COMMIT and its retry").isPositive();
        assertThat(prefixReads).as("NFS reads stopped early (the gateway's read-ahead left over)").isGreaterThan(CI_SEEDS / 10);
        for (SimOptions.Fault kind : SimOptions.Fault.values()) {
            assertThat(coverage.getOrDefault(kind, 0)).as("fault " + kind.cliName() + " fired in the sweep").isPositive();
        }
    }

    /**
     * Seeds the sweep at the default 60 s found failing, run at that length. 504 (convergence: a copy created
     * and never synced was counted by the master for good) fails without {@code ChunkStore.abandoned}; 462
     * and 742 (durability: a copy left out of a lease was taken for current at the new version, so the
     * planner dropped a good copy) fail without the chunk's data version ({@code ChunkRecord.current}); 383
     * (durability: a copy that took a bump whose reply was lost re-registered while a lease held its chunk,
     * and stayed unrecorded through the master's start-up grace, its file unreadable) fails without
     * {@code Master.judgeDeferred} running during the grace window. 1897 (durability: disks failed by read
     * errors on two servers came back at a restart and kept their old part of an erasure-coded chunk over
     * the other parts rebuilt on those servers' other disks) fails without the failure marks of
     * {@code ChunkStore}. 1990 (durability, a checker's miss: a rebuilt part written a sector off under its
     * incoming name went unrecorded as damage, so the loss it caused with a disk death looked unexcused) fails
     * without {@code SimRun} mapping incoming names to their chunk. 1836 (unexpected-error: a commit released an NFS
     * writer's pieces between a failed lease and the next, and {@code ChunkSession}'s count of pieces to take again
     * went negative) fails without the per-piece {@code owed} mark. 466 (durability: the NFS gateway let go of a
     * WRITE taken while a commit ran, synced by it but past the size it committed, and the next COMMIT acknowledged
     * it lost) fails without {@code ClusterFs.flushSessions} releasing only what the committed size covers.
     */
    @ParameterizedTest
    @ValueSource(longs = {383, 462, 466, 504, 742, 1836, 1897, 1990})
    void seedsTheLongSweepFoundStayFixed(long seed) {
        SimResult r = SimRun.run(SimOptions.defaults(seed)).withoutLog();
        assertThat(r.passed()).as(r.summary() + "  replay: " + r.options().replayCommand()).isTrue();
    }

    /**
     * Seeds the 10 s and 30 s sweeps of 2026-11-25 failed on, each at its duration, pinned while they still
     * reach the code they found wrong (a schedule change may move them off it; the bug's own test stays):
     * 341 (a registration racing a planner delete), 1198 (copies deleted on metadata a restart found but not
     * yet durable), 3145 (a commit carrying another writer's chunk), 3245 (an EC part rebuilt trimmed after a
     * truncate), 4491 (a chunk lost between its sync and its commit), 4548 (a misdirected header write), 5499
     * (two planner copies of one chunk on one server); at 60 s, 5027 (a bump that reached a holder and was lost
     * with the master's power, its version handed out again with other writes), 5230 (a current copy deleted below
     * the goal during a run of failed leases, fixed with the lease's top-up kept off servers its bump addressed)
     * and 5061 (a deletion judged 15 s after it was decided, behind a stalled disk); 1677 at 10 s (a chunk a commit
     * named before its length reached it, the file then grown over it by another writer: unreadable) and 3076 at
     * 30 s (a chunk no commit named, whose copies the checkers then required to hold what readers never read); 9193
     * at 60 s (a part of such an erasure-coded chunk rebuilt at the file's length from empty parts, failing forever).
     * From the 60 s sweep of 12001..12500: 12361 (a stale copy deleted before the planner copy replacing it was
     * durable, the copy then failed), 12373 (another part rebuilt on a server whose written-off disk came back with
     * the only copy of its part, which recovery then deleted), 12028 (a stale part of another version refused as
     * if current, keeping an ec(2,2) chunk short of its goal) and 12200 (a checker's error: a read overlapping an
     * acknowledged overwrite judged against the file as it was at the read's end only); of the builds fixing those,
     * 12419 (a duplicate part dropped to make room for a missing one, its twin silently corrupt: now the missing
     * part is rebuilt over the duplicate) and 12157 (that rebuild refused for the part a written-off disk held);
     * from 13001..13500, 13090 (a draining copy dropped for one current a version behind that lacked writes synced
     * under the newer lease, and the commit then acknowledged with two copies of three) and 13366 (a copy a client
     * write found corrupt never reported to the master, which counted it intact and never repaired the chunk), 5031 (a
     * master paused 22 s planned on servers silent all that while and deleted a drained copy whose only other copy's
     * disk had died), 13596 (a copy of an empty erasure-coded part reported mid-copy at a re-registration, counted,
     * its source deleted as extra, the copy then failed), 13898 (a copy refused for a full disk abandoned, that is
     * deleted, the durable part it was to replace) and 13852 (an erasure-coded part registered at 0 bytes mid-upload,
     * marked stale at the commit: the chunk unreadable until the next inventory); 2623 at 10 s (a stale copy on a
     * full disk refused the copy replacing it, for good, while the server's other disk had room); 5112 at 60 s (a
     * writer committed an erasure-coded file's old, longer size over another writer's shorter last chunk, which then
     * counted short and could not be read); 9698 at 10 s (a checker's gap, from the 10,000-seed sweep of 2026-11-28: a
     * misdirected write judged when it landed, its damage durable only at the next sync, after a disk death took the
     * other copy; the loss was blamed on nothing) and 6389 at 10 s (the other checker's gap of that sweep: bit flips
     * on two erasure-coded parts nobody had read yet, then the sound extra copy of one deleted; the planner could not
     * know, and the loss is now the faults', as long as the master was not told the kept copies were bad).
     */
    @ParameterizedTest(name = "seed {0} at {1} s")
    @org.junit.jupiter.params.provider.CsvSource({"341, 10", "1198, 10", "3145, 30", "3245, 30", "4491, 30", "4548, 30", "5499, 30", "5027, 60", "5061, 60", "5230, 60", "1677, 10", "3076, 30", "9193, 60", "12361, 60", "12373, 60", "12028, 60", "12200, 60", "12419, 60", "12157, 60", "13090, 60", "13366, 60", "5031, 60", "13596, 60", "13898, 60", "13852, 60", "2623, 10", "5112, 60", "9698, 10", "6389, 10"})
    void seedsTheSweepsOfTheDataPathFoundStayFixed(long seed, int seconds) {
        SimResult r = SimRun.run(SimOptions.defaults(seed).withDuration(seconds * 1_000_000_000L)).withoutLog();
        assertThat(r.passed()).as(r.summary() + "  replay: " + r.options().replayCommand()).isTrue();
    }

    /**
     * A group of three masters over the simulated Raft log, with the full fault catalog (leader crashes, power
     * losses and isolation among them): seeds the first group sweeps failed on, now fixed — 30, 44, 59 (a
     * remove retried on a new leader after its first answer was lost met its own effect: NOT_FOUND; fixed by op
     * ids), 21 (an empty erasure-coded part deleted to make room for a copy that then failed), 474 (a reader whose file shrank mid-read crashed on a buffer sized by the new length) and 68 (a
     * restarted master's previous incarnation still delivered log entries into its new, wiped store) and 969 (an archive
     * rewrite whose swap a deposed leader proposed, heard fail, and cleaned up after — deleting the new chunks the next
     * term had committed, the file's only ones; now an outcome the log lost track of leaves them to the inventories) and 2312
     * (two overlapping writes in flight through the gateway's file system, the first one's attribute fetch answered
     * after a retry: it landed over the second's bytes, and the commit made them durable) — each with
     * leaders lost and elected along the way, and snapshots installed on masters behind the purged log in all but 30.
     */
    @ParameterizedTest(name = "seed {0} with three masters")
    @org.junit.jupiter.params.provider.ValueSource(longs = {21, 30, 44, 59, 474, 68, 969, 2312})
    void aMasterGroupLosesNothingThroughLeaderLoss(long seed) {
        SimResult r = SimRun.run(SimOptions.defaults(seed).withMasters(3)).withoutLog();
        assertThat(r.passed()).as(r.summary() + "  replay: " + r.options().replayCommand()).isTrue();
        assertThat(r.masterElections()).as("leaders were lost and elected: " + r.summary()).isGreaterThan(1);
    }

    /**
     * Masters behind the purged log catch up by installing a snapshot in such runs. Which seed does it moves with
     * every change to the system (seed 59 did until the sweep gained its NFS lane), so the test counts over three.
     */
    @Test void aMasterGroupBehindThePurgedLogInstallsSnapshots() {
        long installs = 0;
        StringBuilder runs = new StringBuilder();
        for (long seed : new long[] {21, 44, 474}) {
            SimResult r = SimRun.run(SimOptions.defaults(seed).withMasters(3)).withoutLog();
            installs += r.snapshotInstalls();
            runs.append(r.summary());
        }
        assertThat(installs).as("snapshots installed: " + runs).isPositive();
    }

    @Test void sameSeedSameTraceInOneJvm() {
        SimOptions o = SimOptions.defaults(42).withDuration(SWEEP_DURATION);
        List<String> first = new ArrayList<>(), second = new ArrayList<>();
        SimResult a = SimRun.run(o, first::add);
        SimResult b = SimRun.run(o, second::add);
        assertThat(first).hasSameSizeAs(second);
        for (int i = 0; i < first.size(); i++) assertThat(second.get(i)).as("event " + i).isEqualTo(first.get(i));
        assertThat(b.traceHash()).isEqualTo(a.traceHash());
        assertThat(b.events()).isEqualTo(a.events());
    }

    @Test void sameSeedSameHashInAFreshJvm() throws Exception {
        long seed = 42, seconds = 10;
        SimResult here = SimRun.run(SimOptions.defaults(seed).withDuration(seconds * 1_000_000_000L));
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        Process p = new ProcessBuilder(java, "-cp", System.getProperty("java.class.path"), SimMain.class.getName(),
                Long.toString(seed), Long.toString(seconds)).redirectErrorStream(true).start();
        String hash = null;
        StringBuilder all = new StringBuilder();
        try (BufferedReader in = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8))) {
            for (String line; (line = in.readLine()) != null; ) {
                all.append(line).append('\n');
                if (line.trim().startsWith("trace hash ")) hash = line.trim().substring("trace hash ".length());
            }
        }
        assertThat(p.waitFor(120, TimeUnit.SECONDS)).isTrue();
        assertThat(p.exitValue()).as(all.toString()).isZero();
        assertThat(hash).as(all.toString()).isEqualTo(here.traceHash());
    }

    @Test void theBuiltInDeterminismCheckPassesASeedAndNamesWhereTwoRunsPartWays() {
        SimOptions o = SimOptions.defaults(7).withDuration(5_000_000_000L);
        DeterminismCheck.Outcome same = DeterminismCheck.run(o);
        assertThat(same.deterministic()).as(same.toString()).isTrue();
        assertThat(same.events()).isPositive();
        // two different seeds stand in for a non-deterministic run: the check must catch and place it
        DeterminismCheck.Outcome differ = DeterminismCheck.compare(o, SimOptions.defaults(8).withDuration(5_000_000_000L));
        assertThat(differ.deterministic()).isFalse();
        assertThat(differ.firstDiverging()).isGreaterThanOrEqualTo(0);
        assertThat(differ.first()).isNotEqualTo(differ.second());
    }

    @Test void differentSeedsGiveDifferentSchedules() {
        String a = SimRun.run(SimOptions.defaults(1).withDuration(5_000_000_000L)).traceHash();
        String b = SimRun.run(SimOptions.defaults(2).withDuration(5_000_000_000L)).traceHash();
        assertThat(a).isNotEqualTo(b);
    }

    @Test void withoutFaultsEveryWriteSucceedsAndEveryReadWorks() {
        SimResult r = SimRun.run(SimOptions.defaults(7).withDuration(SWEEP_DURATION).withFaults(EnumSet.noneOf(Fault.class)));
        assertThat(r.violations()).as(r.summary()).isEmpty();
        assertThat(r.faults()).isZero();
        assertThat(r.stats().writeFailures).isZero();
        assertThat(r.stats().readErrors).isZero();
    }

    @Test void aSeedDrawsItsOwnFaultMixAndReplaysIt() {
        SimResult a = SimRun.run(SimOptions.defaults(11).withDuration(5_000_000_000L));
        SimResult b = SimRun.run(SimOptions.defaults(12).withDuration(5_000_000_000L));
        assertThat(a.mix()).isNotEqualTo(b.mix());
        assertThat(SimRun.run(SimOptions.defaults(11).withDuration(5_000_000_000L)).mix()).isEqualTo(a.mix());
        assertThat(a.options().replayCommand()).isEqualTo("./cairn sim --seed 11 --duration 5s --faults all --chunkservers 5");
    }

    @Test void onlyPowerLossStillKeepsEveryAcknowledgedByte() {
        for (long seed = 100; seed < 104; seed++) {
            SimResult r = SimRun.run(SimOptions.defaults(seed).withDuration(SWEEP_DURATION).withFaults(EnumSet.of(Fault.POWER_LOSS)));
            assertThat(r.violations()).as(r.summary()).isEmpty();
        }
    }
}
