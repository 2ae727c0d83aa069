package dev.cairn.master.ratis;

import static org.assertj.core.api.Assertions.assertThat;

import dev.cairn.core.env.Address;
import dev.cairn.core.env.Cancellable;
import dev.cairn.core.env.Scheduler;
import dev.cairn.master.meta.ReplicatedLogContract;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.io.TempDir;

/** The replicated-log contract on Apache Ratis: three members in this JVM, on loopback ports, each with its own thread. */
class RatisLogContractTest extends ReplicatedLogContract {
    @TempDir Path dir;

    /** Snapshots and purges after a few entries, in small segments, so that the contract's purge test is quick. */
    static final RatisLog.Tuning TUNING = new RatisLog.Tuning(20, 1024);

    @Override protected Harness harness() throws Exception {
        List<Address> clients = RatisLog.freeLoopbackGroup(3);
        List<RatisLog.Peer> peers = RatisLog.Peer.of(clients);
        return new Harness() {
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

            @Override public Recorder recorder(int i) { return recorders[i]; }

            @Override public void await(String what, BooleanSupplier done) { RealWaits.await(what, done); }

            @Override public void close() throws Exception {
                for (int i = 0; i < 3; i++) if (logs[i] != null) crash(i);
            }
        };
    }
}
