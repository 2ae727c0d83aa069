package dev.cairn.chunkserver;

import dev.cairn.core.env.Address;
import dev.cairn.core.proto.Types.Topology;
import java.util.List;

/**
 * A chunkserver's settings.
 *
 * @param serverId stable identity across restarts (the master tracks copies by it)
 * @param listen where clients and peers send data
 * @param masters the master, or every master of its group (the server registers with whichever leads)
 * @param volumes names of this host's data directories (disks)
 * @param capacityBytes advertised capacity; 0 to measure it (the disks' chunk bytes plus their filesystems' free space)
 * @param topology host, rack and disk label, for failure domains and placement
 * @param scrubBytesPerSecond most the scrubber re-reads and verifies of stored chunks per second (0: never)
 * @param scrubIntervalNanos shortest time the scrubber takes to re-read every chunk once: rounds are spread
 *                           over it (0: back to back at the full rate)
 */
public record ChunkServerConfig(String serverId, Address listen, List<Address> masters, List<String> volumes, long capacityBytes, Topology topology,
                                long scrubBytesPerSecond, long scrubIntervalNanos) {
    /** Background verification rate cap: a small fraction of one disk's bandwidth. */
    public static final long DEFAULT_SCRUB_BYTES_PER_SECOND = 16L << 20;
    /** Every chunk verified about once a week (Ceph's deep-scrub interval); a disk too big for that at the cap takes longer. */
    public static final long DEFAULT_SCRUB_INTERVAL_NANOS = 7 * 24 * 3600 * 1_000_000_000L;

    /** Advertised when the capacity is to be measured and the disks cannot say how much is free. */
    public static final long FALLBACK_CAPACITY_BYTES = 1L << 40;

    public ChunkServerConfig {
        if (capacityBytes < 0) throw new IllegalArgumentException("negative capacity");
        if (scrubBytesPerSecond < 0) throw new IllegalArgumentException("negative scrub rate");
        if (scrubIntervalNanos < 0) throw new IllegalArgumentException("negative scrub interval");
        if (serverId == null || serverId.isEmpty()) throw new IllegalArgumentException("empty server id");
        if (volumes.isEmpty()) throw new IllegalArgumentException("a chunkserver needs at least one volume");
        volumes = List.copyOf(volumes);
        if (masters.isEmpty()) throw new IllegalArgumentException("a chunkserver needs a master");
        masters = List.copyOf(masters);
    }

    /** A server that is its own host, in the default rack, with unlabelled disks. */
    public ChunkServerConfig(String serverId, Address listen, Address master, List<String> volumes, long capacityBytes) {
        this(serverId, listen, List.of(master), volumes, capacityBytes, Topology.of(serverId), DEFAULT_SCRUB_BYTES_PER_SECOND, DEFAULT_SCRUB_INTERVAL_NANOS);
    }
}
