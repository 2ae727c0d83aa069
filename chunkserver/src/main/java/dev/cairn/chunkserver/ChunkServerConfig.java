package dev.cairn.chunkserver;

import dev.cairn.core.env.Address;
import java.util.List;

/**
 * A chunkserver's settings.
 *
 * @param serverId stable identity across restarts (the master tracks copies by it)
 * @param listen where clients and peers send data
 * @param master where to register
 * @param volumes names of this host's data directories (disks)
 * @param capacityBytes advertised capacity
 */
public record ChunkServerConfig(String serverId, Address listen, Address master, List<String> volumes, long capacityBytes) {
    public ChunkServerConfig {
        if (serverId == null || serverId.isEmpty()) throw new IllegalArgumentException("empty server id");
        if (volumes.isEmpty()) throw new IllegalArgumentException("a chunkserver needs at least one volume");
        volumes = List.copyOf(volumes);
    }
}
