package dev.cairn.master;

import static org.assertj.core.api.Assertions.assertThat;

import dev.cairn.core.proto.Types.DiskReport;
import dev.cairn.core.proto.Types.DiskState;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

class DiskJudgeTest {
    static DiskReport disk(String name, long micros) { return new DiskReport(name, DiskState.OK, micros, 0, 0); }

    @Test void aDiskIsSlowOnlyAfterEnoughBeatsFarAboveTheMedianAndRecoversTheSameWay() {
        Map<String, Integer> streaks = new HashMap<>();
        Set<String> slow = Set.of();
        long median = 50_000;
        List<DiskReport> bad = List.of(disk("d0", 1_000_000), disk("d1", 40_000));
        for (int beat = 1; beat < DiskJudge.BEATS; beat++) {
            slow = DiskJudge.judge(bad, median, slow, streaks);
            assertThat(slow).as("beat " + beat).isEmpty();
        }
        slow = DiskJudge.judge(bad, median, slow, streaks);
        assertThat(slow).containsExactly("d0");
        List<DiskReport> good = List.of(disk("d0", 30_000), disk("d1", 40_000));
        for (int beat = 1; beat < DiskJudge.BEATS; beat++) slow = DiskJudge.judge(good, median, slow, streaks);
        assertThat(slow).containsExactly("d0");
        slow = DiskJudge.judge(good, median, slow, streaks);
        assertThat(slow).isEmpty();
    }

    @Test void underTheFloorOrFailedIsNeverSlow() {
        Map<String, Integer> streaks = new HashMap<>();
        Set<String> slow = Set.of();
        List<DiskReport> disks = List.of(disk("fast-cluster", DiskJudge.FLOOR_MICROS), new DiskReport("dead", DiskState.FAILED, 10_000_000, 0, 0));
        for (int beat = 0; beat < 3 * DiskJudge.BEATS; beat++) slow = DiskJudge.judge(disks, 10, slow, streaks);
        assertThat(slow).isEmpty();
    }

    @Test void theMedianIgnoresFailedDisks() {
        assertThat(DiskJudge.median(List.of(List.of(disk("a", 10), disk("b", 30)),
                List.of(disk("c", 20), new DiskReport("d", DiskState.FAILED, 1_000_000_000, 0, 0))))).isEqualTo(20);
        assertThat(DiskJudge.median(List.of())).isZero();
    }

    /** Seeded sweep: a verdict flips exactly when the last BEATS samples were all on the other side of the bar. */
    @Test void verdictsFlipOnlyOnSustainedEvidence() {
        for (long seed = 1; seed <= 300; seed++) {
            SplittableRandom r = new SplittableRandom(seed);
            long median = r.nextLong(1_000, 100_000);
            long bar = Math.max(DiskJudge.FLOOR_MICROS, (long) (DiskJudge.FACTOR * median));
            Map<String, Integer> streaks = new HashMap<>();
            Set<String> slow = Set.of();
            boolean expected = false;
            int run = 0;
            for (int beat = 0; beat < 200; beat++) {
                boolean above = r.nextInt(100) < (r.nextBoolean() ? 90 : 20);
                long latency = above ? bar + 1 + r.nextLong(1_000_000) : r.nextLong(bar + 1);
                slow = DiskJudge.judge(List.of(disk("d", latency)), median, slow, streaks);
                run = above != expected ? run + 1 : 0;
                if (run >= DiskJudge.BEATS) {
                    expected = above;
                    run = 0;
                }
                assertThat(slow.contains("d")).as("seed " + seed + " beat " + beat).isEqualTo(expected);
            }
        }
    }
}
