package dev.cairn.cli;

import dev.cairn.nfs.fs.ClusterFs;
import dev.cairn.nfs.real.NfsTcpServer;

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
     * Below this heap the gateway's bounds stop scaling down ({@link ClusterFs.Memory#MIN_SCALE}): they are a quarter of
     * the defaults there, and a smaller heap may not hold them with the garbage between collections.
     */
    static final long MIN_HEAP_MIB = (long) (ClusterFs.Memory.FULL_HEAP_BYTES * ClusterFs.Memory.MIN_SCALE) >> 20;

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
        // the write-behind and the calls in flight sized to this heap (ProcessCluster.GATEWAY_HEAP under ./cairn up)
        long heap = Runtime.getRuntime().maxMemory();
        ClusterFs.Memory memory = ClusterFs.Memory.forHeap(heap);
        NfsTcpServer.Limits limits = NfsTcpServer.Limits.forHeap(heap);
        LocalGateway g = LocalGateway.start(rt, Address.parseList(master), a.host(), a.port(), rules, data.toAbsolutePath(), memory, limits);
        System.out.println("cairn: NFS gateway on " + a.host() + ":" + g.port() + " for master " + master + " (write-behind "
                + (memory.heldBytes() >> 20) + " MiB, " + (memory.fileHeldBytes() >> 20) + " per file; calls in flight "
                + (limits.maxCallBytes() >> 20) + " MiB; heap " + (heap >> 20) + " MiB)");
        if (heap >> 20 < MIN_HEAP_MIB) {
            System.err.println("cairn nfs: warning: a heap of " + (heap >> 20) + " MiB is small for the gateway: under load it may run out of"
                    + " memory. Give it at least -Xmx" + MIN_HEAP_MIB + "m (./cairn up gives it " + ProcessCluster.GATEWAY_HEAP.substring(4) + ").");
        }
        metrics.serve(g.handle(), "nfs");
        return MasterCommand.waitForSignal(rt);
    }
}
