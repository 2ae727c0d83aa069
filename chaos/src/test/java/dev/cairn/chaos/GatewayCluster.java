package dev.cairn.chaos;

import java.nio.file.Path;
import java.util.List;

/** What the NFS client tests run against: a real cluster (master + 3 chunkservers) and a gateway, on free loopback ports. */
record GatewayCluster(LocalCluster cluster, LocalGateway gateway) implements AutoCloseable {
    static GatewayCluster start(Path data) throws Exception {
        List<Integer> ports = Ports.free(5);
        LocalCluster cluster = LocalCluster.start(data, ports.get(0), ports.subList(1, 4));
        try {
            cluster.awaitReady();
            return new GatewayCluster(cluster, LocalGateway.start(cluster.runtime(), cluster.masterAddress(), LocalCluster.HOST, ports.get(4),
                    dev.cairn.nfs.Exports.parse(dev.cairn.nfs.Exports.DEFAULT), data.resolve("nfs")));
        } catch (RuntimeException e) {
            cluster.close();
            throw e;
        }
    }

    @Override public void close() { cluster.close(); }
}
