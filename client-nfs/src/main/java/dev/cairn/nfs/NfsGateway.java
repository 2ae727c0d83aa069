package dev.cairn.nfs;

import dev.cairn.client.CairnClient;
import dev.cairn.core.env.Address;
import dev.cairn.core.env.Env;
import dev.cairn.core.env.Log;
import dev.cairn.core.env.Node;
import dev.cairn.nfs.fs.ClusterFs;
import dev.cairn.nfs.rpc.NfsService;
import dev.cairn.nfs.v4.Nfs4Server;

/**
 * The NFSv4 gateway node: a cluster client, the file system view that holds WRITEs until COMMIT, and the
 * NFSv4.0/4.1/4.2 server over them. Its NFS port is bound by the runtime that runs it ({@code NfsTcpServer}
 * on the real machine), on this node's own loop. On its own disk it keeps only the record of its clients,
 * for the grace period after a restart ({@link dev.cairn.nfs.v4.state.Grace}); data is in the cluster.
 */
public final class NfsGateway implements Node, dev.cairn.core.metrics.MetricsSource {
    /** How often clients whose lease ran out are dropped. */
    static final long EXPIRY_CHECK_NANOS = 10_000_000_000L;
    /** How often held writes are looked over for a background commit ({@link ClusterFs#writeBackIdle}). */
    static final long WRITE_BACK_CHECK_NANOS = 5_000_000_000L;
    /** The file system id in handles and the fsid attribute. */
    public static final long FSID = 0xCA1A;

    private final Env env;
    private final CairnClient client;
    private final Log log;
    private ClusterFs fs;
    private NfsService service;
    private boolean stopped;

    private final Exports exports;
    private final ClusterFs.Memory memory;

    /** A gateway exporting to this machine only ({@link Exports#DEFAULT}). */
    public NfsGateway(Env env, Address master) { this(env, master, Exports.parse(Exports.DEFAULT)); }

    public NfsGateway(Env env, Address master, Exports exports) { this(env, java.util.List.of(master), exports); }

    /** A gateway of the master group at {@code masters} (a single master: a list of one). */
    public NfsGateway(Env env, java.util.List<Address> masters, Exports exports) { this(env, masters, exports, ClusterFs.Memory.DEFAULT); }

    /** As above, its write-behind within {@code memory} (the real gateway sizes it to its heap). */
    public NfsGateway(Env env, java.util.List<Address> masters, Exports exports, ClusterFs.Memory memory) {
        this.env = env;
        this.exports = exports;
        this.memory = memory;
        this.client = new CairnClient(env, masters);
        this.log = env.log(NfsGateway.class);
    }

    @Override public void start() {
        client.start();
        fs = new ClusterFs(client, env.clock(), memory);
        Nfs4Server server = new Nfs4Server(env.clock(), env.random(), log,
                new Nfs4Server.ServerIdentity("cairn-" + env.hostId(), "cairn"), FSID, fs, exports, env.kv());
        if (env.planted(dev.cairn.core.env.Plant.GATEWAY_VERIFIER_REUSED)) server.plantFixedWriteVerifier(env.hostId().hashCode());
        service = new NfsService(server);
        scheduleExpiry();
        scheduleWriteBack();
        log.info("NFS gateway ready (v4.0, v4.1 and v4.2)");
    }

    @Override public void stop() {
        stopped = true;
        client.stop();
    }

    /** What it holds and the NFS operations it ran, for {@code --metrics}. */
    @Override public void metrics(dev.cairn.core.metrics.MetricsText m) {
        if (service == null) return;
        m.gauge("cairn_nfs_held_bytes", "Bytes of WRITEs answered and not yet made durable by a commit", fs.heldBytes());
        m.gauge("cairn_nfs_open_files", "Files the gateway keeps state for", fs.openFiles());
        long[] calls = service.nfs4().opCalls();
        for (int op = 0; op < calls.length; op++) {
            if (calls[op] > 0) m.counter("cairn_nfs_operations_total", "NFSv4 operations run, by operation", calls[op], "op", dev.cairn.nfs.v4.Op.name(op));
        }
        m.counter("cairn_nfs_compound_errors_total", "COMPOUNDs that ended in an error status", service.nfs4().compoundErrors());
        java.util.List<dev.cairn.core.metrics.MetricsText.Series> latency = new java.util.ArrayList<>();
        for (int op = 0; op < calls.length; op++) {
            var h = service.nfs4().opLatencyOrNull(op);
            if (h != null) latency.add(new dev.cairn.core.metrics.MetricsText.Series(h, "op", dev.cairn.nfs.v4.Op.name(op)));
        }
        m.histogram("cairn_nfs_operation_seconds", "Time from an NFSv4 operation's start to its result, by operation", latency);
    }

    /** What the NFS port hands records to. */
    public NfsService service() { return service; }

    public ClusterFs fs() { return fs; }

    private void scheduleWriteBack() {
        env.scheduler().schedule(WRITE_BACK_CHECK_NANOS, () -> {
            if (stopped) return;
            fs.writeBackIdle();
            scheduleWriteBack();
        });
    }

    private void scheduleExpiry() {
        env.scheduler().schedule(EXPIRY_CHECK_NANOS, () -> {
            if (stopped) return;
            service.nfs4().expireClients();
            scheduleExpiry();
        });
    }
}
