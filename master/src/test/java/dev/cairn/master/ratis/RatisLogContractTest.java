package dev.cairn.master.ratis;

import static org.assertj.core.api.Assertions.assertThat;

import dev.cairn.core.env.Address;
import dev.cairn.core.env.Cancellable;
import dev.cairn.core.env.Scheduler;
import dev.cairn.master.meta.ReplicatedLogContract;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The replicated-log contract on Apache Ratis: three members in this JVM, on loopback ports, each with its own thread. */
class RatisLogContractTest extends ReplicatedLogContract {
    @TempDir Path dir;

    /** Snapshots and purges after a few entries, in small segments, so that the contract's purge test is quick. */
    static final RatisLog.Tuning TUNING = new RatisLog.Tuning(20, 1024);

    /**
     * The leader's log lost its early entries before any snapshot was due (segment names a power cut took on a
     * filesystem that does not journal them; here the segments are deleted while every member is down), and a member
     * with a replaced disk needs those entries: only a snapshot file can bring it back. Before the log took a snapshot
     * at start when it found none, the leader offered one with no file, and Ratis failed every install for ever.
     */
    @Test void aMemberWithAReplacedDiskCatchesUpAfterTheLogLostEntriesNoSnapshotHeld() throws Exception {
        try (RatisHarness h = harness()) {
            int[] all = {0, 1, 2};
            for (int i : all) h.start(i);
            int few = 3; // well below a snapshot's interval
            for (int n = 0; n < few; n++) commit(h, all, "early" + n);
            allHold(h, h.recorder(leader(h, all)).applied(), all);
            for (int i : all) assertThat(h.snapshotFiles(i)).as("snapshot files of member %d", i).isEmpty();
            h.wipe(2);
            for (int i : new int[] {0, 1}) {
                h.crash(i);
                h.loseLogSegments(i);
            }
            for (int i : all) h.start(i);
            commit(h, all, "after");
            List<String> log = new java.util.ArrayList<>();
            for (int n = 0; n < few; n++) log.add("early" + n);
            log.add("after");
            allHold(h, log, all);
            assertThat(h.recorder(2).installs()).as("snapshots installed on the wiped member").isPositive();
        }
    }

    /** The contract's harness, and what only Ratis's files allow: losing the log's segments while the store stays. */
    interface RatisHarness extends Harness {
        /** Deletes member {@code i}'s log segments (it must be down); its store and Raft metadata stay. */
        void loseLogSegments(int i) throws Exception;

        /** The snapshot files member {@code i} holds. */
        List<Path> snapshotFiles(int i) throws Exception;
    }

    @Override protected RatisHarness harness() throws Exception {
        List<Address> clients = RatisLog.freeLoopbackGroup(3);
        List<RatisLog.Peer> peers = RatisLog.Peer.of(clients);
        return new RatisHarness() {
            @Override public void loseLogSegments(int i) throws Exception {
                assertThat(logs[i]).as("member %d is down", i).isNull();
                Path current = dir.resolve("m" + i).resolve(RatisLog.GROUP.getUuid().toString()).resolve("current");
                List<Path> segments;
                try (var s = Files.list(current)) {
                    segments = s.filter(f -> f.getFileName().toString().startsWith("log_")).toList();
                }
                assertThat(segments).as("member %d's log segments", i).isNotEmpty();
                for (Path f : segments) Files.delete(f);
            }

            @Override public List<Path> snapshotFiles(int i) throws Exception {
                Path sm = dir.resolve("m" + i).resolve(RatisLog.GROUP.getUuid().toString()).resolve("sm");
                if (!Files.isDirectory(sm)) return List.of();
                try (var s = Files.list(sm)) {
                    return s.filter(Files::isRegularFile).toList();
                }
            }

            final RatisLog[] logs = new RatisLog[3];
            final ScheduledExecutorService[] loops = new ScheduledExecutorService[3];
            final Recorder[] recorders = {new Recorder(), new Recorder(), new Recorder()};

            @Override public void start(int i) {
                loops[i] = Executors.newSingleThreadScheduledExecutor();
                ScheduledExecutorService loop = loops[i];
                Scheduler s = new Scheduler() {
                    @Override public void execute(Runnable task) { loop.execute(task); }

                    @Override public Cancellable schedule(long delayNanos, Runnable task) {
                        var f = loop.schedule(task, delayNanos, TimeUnit.NANOSECONDS);
                        return () -> f.cancel(false);
                    }
                };
                Recorder r = recorders[i];
                logs[i] = new RatisLog(peers, clients.get(i), dir.resolve("m" + i), s, TUNING);
                RatisLog log = logs[i];
                run(i, () -> log.start(r.appliedTerm(), r.appliedIndex(), r));
            }

            private void run(int i, Runnable r) {
                try {
                    loops[i].submit(r).get(60, TimeUnit.SECONDS);
                } catch (Exception e) {
                    throw new AssertionError(e);
                }
            }

            @Override public void crash(int i) throws Exception {
                logs[i].stop();
                loops[i].shutdownNow();
                assertThat(loops[i].awaitTermination(10, TimeUnit.SECONDS)).isTrue();
                logs[i] = null;
            }

            @Override public void wipe(int i) throws Exception {
                crash(i);
                RealWaits.deleteTree(dir.resolve("m" + i));
                recorders[i].wipe();
            }

            @Override public int entriesToPurge() { return (int) TUNING.snapshotEvery() * 3; }

            @Override public Outcome propose(int i, byte[] entry) {
                Outcome o = new Outcome();
                RatisLog log = logs[i];
                loops[i].execute(() -> log.propose(entry).onComplete((v, e) -> o.set(e)));
                return o;
            }

            @Override public Outcome confirm(int i) {
                Outcome o = new Outcome();
                RatisLog log = logs[i];
                Recorder r = recorders[i];
                loops[i].execute(() -> log.confirmLeadership().onComplete((v, e) -> o.set(e, r)));
                return o;
            }

            @Override public Recorder recorder(int i) { return recorders[i]; }

            @Override public void await(String what, BooleanSupplier done) { RealWaits.await(what, done); }

            @Override public void close() throws Exception {
                for (int i = 0; i < 3; i++) if (logs[i] != null) crash(i);
            }
        };
    }
}
