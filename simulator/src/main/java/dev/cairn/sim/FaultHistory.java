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
    /** Chunk id -> hosts on which a copy (part) of it was destroyed. */
    private final TreeMap<Long, TreeSet<String>> destroyed = new TreeMap<>();

    void record(long now, Fault kind, String target, String detail) {
        events.add(new Event(now, kind, target, detail));
        counts.merge(kind, 1, Integer::sum);
    }

    /** A copy of {@code chunkId} on {@code host} is gone or corrupt. */
    void destroyed(long chunkId, String host) { destroyed.computeIfAbsent(chunkId, k -> new TreeSet<>()).add(host); }

    /** Failure domains (hosts) that lost a copy of the chunk to a fault during the run. */
    public Set<String> destroyedOn(long chunkId) { return destroyed.getOrDefault(chunkId, new TreeSet<>()); }

    public List<Event> events() { return events; }

    public Map<Fault, Integer> counts() { return counts; }

    public int total() { return events.size(); }
}
