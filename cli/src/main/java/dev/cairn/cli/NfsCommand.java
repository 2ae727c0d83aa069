package dev.cairn.cli;

import dev.cairn.chaos.LocalGateway;
import dev.cairn.core.env.Address;
import dev.cairn.core.real.RealRuntime;
import dev.cairn.nfs.Exports;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/** {@code cairn nfs}: one NFSv4 gateway process. */
@Command(name = "nfs", description = "Run an NFSv4.2/4.1/4.0 gateway of a cluster.")
final class NfsCommand implements Callable<Integer> {
    @Option(names = "--listen", defaultValue = "127.0.0.1:" + LocalGateway.DEFAULT_PORT, description = "HOST:PORT to serve NFS on (default: ${DEFAULT-VALUE}).")
    String listen;

    @Option(names = "--master", defaultValue = "${env:CAIRN_MASTER:-127.0.0.1:7100}", description = "The master, or every master of a group, comma-separated (default: $CAIRN_MASTER, else 127.0.0.1:7100).")
    String master;

    @Option(names = "--exports", defaultValue = Exports.DEFAULT, description = "Who may mount, and how: "
            + "\"ADDRESS[/PREFIX] [rw|ro] [root_squash|no_root_squash] [anonuid=N] [anongid=N]; ...\" (default: ${DEFAULT-VALUE}).")
    String exports;

    @Option(names = "--data", defaultValue = "cairn-nfs", description = "Directory for the gateway's record of its clients, "
            + "which gives them a grace period to reclaim locks after a restart (default: ${DEFAULT-VALUE}).")
    java.nio.file.Path data;

    @picocli.CommandLine.Mixin KeyOption key;

    @picocli.CommandLine.Mixin MetricsOption metrics;

    /**
     * Below this heap the gateway's memory bounds (write-behind, calls in flight, erasure-coded uploads' chunk images)
     * can add up to more than it has: an erasure-coded benchmark at -Xmx256m stalled with a full heap (when an upload
     * still held its parts whole beside the image; it now codes a range of stripes at a time).
     */
    static final long MIN_HEAP_MIB = 448;

    @Override public Integer call() throws Exception {
        Address a = Address.parse(listen);
        Exports rules;
        try {
            rules = Exports.parse(exports);
        } catch (IllegalArgumentException e) {
            System.err.println("cairn nfs: " + e.getMessage());
            return 2;
        }
        RealRuntime rt = key.serverRuntime();
        LocalGateway g = LocalGateway.start(rt, Address.parseList(master), a.host(), a.port(), rules, data.toAbsolutePath());
        System.out.println("cairn: NFS gateway on " + a.host() + ":" + g.port() + " for master " + master);
        long heapMib = Runtime.getRuntime().maxMemory() >> 20;
        if (heapMib < MIN_HEAP_MIB) {
            System.err.println("cairn nfs: warning: a heap of " + heapMib + " MiB is small for the gateway's bounds (write-behind "
                    + (dev.cairn.nfs.fs.ClusterFs.MAX_HELD_BYTES >> 20) + " MiB, calls in flight " + (dev.cairn.nfs.real.NfsTcpServer.MAX_CALL_BYTES >> 20)
                    + " MiB, erasure-coded chunk images besides); under load it may run out of memory. Give it -Xmx"
                    + ProcessCluster.GATEWAY_HEAP.substring(4) + " (what ./cairn up gives it).");
        }
        metrics.serve(g.handle(), "nfs");
        return MasterCommand.waitForSignal(rt);
    }
}
