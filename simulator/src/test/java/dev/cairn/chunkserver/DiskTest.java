package dev.cairn.chunkserver;

import static org.assertj.core.api.Assertions.assertThat;

import dev.cairn.core.async.Promise;
import dev.cairn.core.env.Clock;
import dev.cairn.core.env.Volume;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/** The disk's latency report: the oldest call under way counts however calls finish, and finished calls are not kept. */
class DiskTest {
    long now;
    final Clock clock = new Clock() {
        @Override public long nanoTime() { return now; }
        @Override public long wallMillis() { return now / 1_000_000; }
    };
    /** Writes the fake volume has been asked for, each left for the test to finish. */
    final List<Promise<Void>> open = new ArrayList<>();
    final Volume volume = new Volume() {
        @Override public String name() { return "d"; }
        @Override public Promise<Void> write(String file, long offset, byte[] data) { Promise<Void> p = new Promise<>(); open.add(p); return p; }
        @Override public Promise<byte[]> read(String file, long offset, int length) { throw new UnsupportedOperationException(); }
        @Override public Promise<int[]> checksums(String file, long offset, int length, int blockSize) { throw new UnsupportedOperationException(); }
        @Override public Promise<Void> sync(String file) { throw new UnsupportedOperationException(); }
        @Override public Promise<Void> syncDirectory() { throw new UnsupportedOperationException(); }
        @Override public Promise<Void> rename(String from, String to) { throw new UnsupportedOperationException(); }
        @Override public Promise<Void> delete(String file) { throw new UnsupportedOperationException(); }
        @Override public Promise<List<String>> list() { throw new UnsupportedOperationException(); }
    };

    /**
     * Seeded sweep: calls start and finish in random order. While any is under way the report is at least the
     * age of the oldest one under way (a stalled disk must look slow); every call's outcome reaches its caller.
     */
    @Test void theOldestCallUnderWayIsReportedWhateverOrderCallsFinishIn() {
        for (int seed = 0; seed < 100; seed++) {
            SplittableRandom r = new SplittableRandom(seed);
            now = 1_000_000_000L;
            open.clear();
            Disk disk = new Disk(volume, clock, d -> { });
            List<Long> startOf = new ArrayList<>();
            List<Promise<Void>> outs = new ArrayList<>();
            List<Integer> underWay = new ArrayList<>();
            for (int step = 0; step < 400; step++) {
                now += r.nextLong(5_000_000L);
                if (underWay.isEmpty() || r.nextInt(3) > 0) {
                    underWay.add(open.size());
                    startOf.add(now);
                    outs.add(disk.write("f", 0, new byte[1]));
                } else {
                    int i = underWay.remove(r.nextInt(underWay.size()));
                    open.get(i).complete(null);
                    assertThat(outs.get(i).isDone()).as("seed %d: the caller hears at once", seed).isTrue();
                }
                long oldest = underWay.stream().mapToLong(startOf::get).min().orElse(now);
                assertThat(disk.latencyMicros()).as("seed %d step %d", seed, step).isGreaterThanOrEqualTo((now - oldest) / 1000);
            }
        }
    }

    @Test void finishedCallsBehindAStuckOneAreNotKept() {
        Disk disk = new Disk(volume, clock, d -> { });
        disk.write("f", 0, new byte[1]); // never finishes
        for (int i = 0; i < 100_000; i++) {
            now += 1_000;
            disk.write("f", 0, new byte[1]);
            open.get(open.size() - 1).complete(null);
        }
        assertThat(disk.callsHeld()).isLessThanOrEqualTo(2 + dev.cairn.core.async.InFlight.SLACK);
        assertThat(disk.latencyMicros()).as("the stuck call's age").isGreaterThanOrEqualTo(100_000 * 1_000L / 1000);
    }
}
