package dev.cairn.chunkserver;

import dev.cairn.core.env.Address;
import dev.cairn.core.proto.Types.Topology;
import java.util.List;

/**
 * A chunkserver's settings.
 *
 * @param serverId stable identity across restarts (the master tracks copies by it)
 * @param listen where clients and peers send data
 * @param master where to register
 * @param volumes names of this host's data directories (disks)
 * @param capacityBytes advertised capacity
 * @param topology host, rack and disk label, for failure domains and placement
 * @param scrubBytesPerSecond how fast the scrubber re-reads and verifies stored chunks (0: never)
 */
public record ChunkServerConfig(String serverId, Address listen, Address master, List<String> volumes, long capacityBytes, Topology topology,
                                long scrubBytesPerSecond) {
    /** Background verification rate: a small fraction of one disk's bandwidth. */
    public static final long DEFAULT_SCRUB_BYTES_PER_SECOND = 16L << 20;

    public ChunkServerConfig {
        if (scrubBytesPerSecond < 0) throw new IllegalArgumentException("negative scrub rate");
        if (serverId == null || serverId.isEmpty()) throw new IllegalArgumentException("empty server id");
        if (volumes.isEmpty()) throw new IllegalArgumentException("a chunkserver needs at least one volume");
        volumes = List.copyOf(volumes);
    }

    /** A server that is its own host, in the default rack, with unlabelled disks. */
    public ChunkServerConfig(String serverId, Address listen, Address master, List<String> volumes, long capacityBytes) {
        this(serverId, listen, master, volumes, capacityBytes, Topology.of(serverId), DEFAULT_SCRUB_BYTES_PER_SECOND);
    }
}
