package dev.cairn.master;

import dev.cairn.core.proto.Types.DiskReport;
import dev.cairn.core.proto.Types.DiskState;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

/**
 * Judges which disks are slow by comparing each disk's reported latency with its peers' (every working
 * disk of every live server): a disk is slow when its latency has stayed above {@link #FACTOR} times
 * the cluster median, and above {@link #FLOOR_MICROS}, for {@link #BEATS} heartbeats in a row; it
 * recovers after as many heartbeats back under the bar. Relative, because a whole cluster under load is
 * slow together and none of its disks is to blame; sustained, because one long fsync is not a trend. A
 * pure function over counters the caller keeps, so it can be tested without a cluster.
 */
final class DiskJudge {
    /** How far above the median a disk must be. */
    static final double FACTOR = 8;
    /** Latencies under this are never slow, whatever the median (an idle cluster's medians are tiny). */
    static final long FLOOR_MICROS = 200_000;
    /** Consecutive heartbeats (about a second each) a verdict needs. */
    static final int BEATS = 5;

    private DiskJudge() {}

    /** The median latency of the working disks in {@code reports} (0 if none). */
    static long median(List<List<DiskReport>> reports) {
        List<Long> all = new ArrayList<>();
        for (List<DiskReport> server : reports) {
            for (DiskReport d : server) if (d.state() != DiskState.FAILED) all.add(d.latencyMicros());
        }
        if (all.isEmpty()) return 0;
        Collections.sort(all);
        return all.get(all.size() / 2);
    }

    /**
     * One heartbeat's judgement of one server's disks. {@code streaks} holds, per disk, how many
     * heartbeats in a row it has been on the other side of the bar from its verdict; it is updated.
     *
     * @return the names of the disks judged slow now (in name order)
     */
    static Set<String> judge(List<DiskReport> disks, long medianMicros, Set<String> slowBefore, Map<String, Integer> streaks) {
        long bar = Math.max(FLOOR_MICROS, (long) (FACTOR * medianMicros));
        Set<String> slow = new TreeSet<>();
        for (DiskReport d : disks) {
            boolean was = slowBefore.contains(d.name());
            boolean above = d.state() != DiskState.FAILED && d.latencyMicros() > bar;
            int streak = above != was ? streaks.getOrDefault(d.name(), 0) + 1 : 0;
            boolean now = streak >= BEATS ? above : was;
            if (now != was) streak = 0;
            streaks.put(d.name(), streak);
            if (now) slow.add(d.name());
        }
        streaks.keySet().retainAll(names(disks));
        return slow;
    }

    private static Set<String> names(List<DiskReport> disks) {
        Set<String> out = new TreeSet<>();
        for (DiskReport d : disks) out.add(d.name());
        return out;
    }
}
