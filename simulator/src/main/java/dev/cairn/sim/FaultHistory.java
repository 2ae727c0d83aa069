package dev.cairn.sim;

import dev.cairn.sim.SimOptions.Fault;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * What the faults did, kept by the simulator outside the system under test: every fault injected (for
 * the trace, the timeline and the coverage counts) and every copy of a chunk a fault destroyed (a host or
 * disk lost for good, a bit flipped, a write misdirected), taken from the simulated disks' ground truth
 * at the moment of the fault. The durability checker excuses a lost chunk only from this record.
 */
public final class FaultHistory {
    /** One injected fault: when, what, where. */
    public record Event(long timeNanos, Fault kind, String target, String detail) {}

    private final List<Event> events = new ArrayList<>();
    private final EnumMap<Fault, Integer> counts = new EnumMap<>(Fault.class);
    /** Chunk id -> when and on which hosts a copy (part) of it was destroyed, in time order. */
    private final TreeMap<Long, List<Destroyed>> destroyed = new TreeMap<>();

    /** A copy of a chunk destroyed on a host at an instant. */
    private record Destroyed(long timeNanos, String host) {}

    void record(long now, Fault kind, String target, String detail) {
        events.add(new Event(now, kind, target, detail));
        counts.merge(kind, 1, Integer::sum);
    }

    /** A copy of {@code chunkId} on {@code host} is gone or corrupt as of {@code now}. */
    void destroyed(long now, long chunkId, String host) { destroyed.computeIfAbsent(chunkId, k -> new ArrayList<>()).add(new Destroyed(now, host)); }

    /** Hosts on which a fault destroyed a copy of the chunk at or after {@code since}. */
    public Set<String> destroyedSince(long chunkId, long since) {
        TreeSet<String> out = new TreeSet<>();
        for (Destroyed d : destroyed.getOrDefault(chunkId, List.of())) if (d.timeNanos() >= since) out.add(d.host());
        return out;
    }

    /** When a fault last destroyed the copy of {@code chunkId} on {@code host}, or -1 if none did. */
    public long lastDestroyed(long chunkId, String host) {
        long last = -1;
        for (Destroyed d : destroyed.getOrDefault(chunkId, List.of())) if (d.host().equals(host)) last = Math.max(last, d.timeNanos());
        return last;
    }

    public List<Event> events() { return events; }

    public Map<Fault, Integer> counts() { return counts; }

    public int total() { return events.size(); }
}
