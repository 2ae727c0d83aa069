package dev.cairn.chaos;

import dev.cairn.core.env.Address;
import dev.cairn.core.real.RealRuntime;
import dev.cairn.nfs.Exports;
import dev.cairn.nfs.NfsGateway;
import dev.cairn.nfs.fs.ClusterFs;
import dev.cairn.nfs.real.NfsTcpServer;
import java.nio.file.Path;
import java.util.List;

/** An NFS gateway on the real runtime: the gateway node, and its NFS port bound on the node's own loop. */
public final class LocalGateway implements AutoCloseable {
    /** The standard NFS port. */
    public static final int DEFAULT_PORT = 2049;

    private final RealRuntime runtime;
    private final RealRuntime.Handle<NfsGateway> handle;
    private final NfsTcpServer server;

    private LocalGateway(RealRuntime runtime, RealRuntime.Handle<NfsGateway> handle, NfsTcpServer server) {
        this.runtime = runtime;
        this.handle = handle;
        this.server = server;
    }

    /**
     * Starts a gateway of the cluster whose master is {@code master}, serving NFS on {@code host:port} (0: any
     * free port), exported as {@code exports} says. {@code dataDir} keeps its record of clients (for the grace
     * period after a restart): give the same one to a restarted gateway.
     */
    public static LocalGateway start(RealRuntime runtime, Address master, String host, int port, Exports exports, Path dataDir) {
        return start(runtime, List.of(master), host, port, exports, dataDir);
    }

    /** As above, for a master group: the gateway follows whichever of {@code masters} leads. */
    public static LocalGateway start(RealRuntime runtime, List<Address> masters, String host, int port, Exports exports, Path dataDir) {
        return start(runtime, masters, host, port, exports, dataDir, ClusterFs.Memory.DEFAULT, NfsTcpServer.DEFAULT_LIMITS);
    }

    /**
     * As above, with the write-behind within {@code memory} and the calls in flight within {@code limits} ({@code cairn nfs}
     * sizes both to its heap: {@link ClusterFs.Memory#forHeap}, {@link NfsTcpServer.Limits#forHeap}).
     */
    public static LocalGateway start(RealRuntime runtime, List<Address> masters, String host, int port, Exports exports, Path dataDir,
                                     ClusterFs.Memory memory, NfsTcpServer.Limits limits) {
        RealRuntime.Handle<NfsGateway> h = runtime.start("nfs", dataDir, null, List.of(),
                env -> new NfsGateway(env, masters, exports, memory));
        try {
            NfsTcpServer server = NfsTcpServer.bind(h.eventLoop(), host, port, h.call(NfsGateway::service), limits);
            return new LocalGateway(runtime, h, server);
        } catch (RuntimeException e) {
            runtime.stop(h);
            throw e;
        }
    }

    public int port() { return server.port(); }

    public RealRuntime.Handle<NfsGateway> handle() { return handle; }

    @Override public void close() {
        server.close();
        runtime.stop(handle);
    }
}
