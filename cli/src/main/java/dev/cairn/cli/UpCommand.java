package dev.cairn.cli;

import dev.cairn.chaos.LocalCluster;
import dev.cairn.chaos.LocalGateway;
import dev.cairn.core.env.Address;
import dev.cairn.chaos.RealClient;
import dev.cairn.core.real.ClusterKey;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code cairn up}: a whole local cluster until Ctrl-C or SIGTERM — by default one process per server
 * (so a chunkserver can be killed and restarted on its own), or all in this process with {@code --in-process}.
 */
@Command(name = "up", description = "Run a local cluster (1 master or a group of --masters, 3 chunkservers on 127.0.0.1, one process each) with data under ./cairn-data.")
final class UpCommand implements Callable<Integer> {
    @Option(names = "--data", description = "Data directory (default: ${DEFAULT-VALUE}).", defaultValue = "cairn-data")
    Path data;

    @Option(names = "--chunkservers", description = "Number of chunkservers (default: ${DEFAULT-VALUE}).", defaultValue = "3")
    int chunkservers;

    @Option(names = "--master-port", description = "Master port (default: ${DEFAULT-VALUE}).", defaultValue = "" + LocalCluster.DEFAULT_MASTER_PORT)
    int masterPort;

    @Option(names = "--masters", description = "Masters: 1, or a Raft group of 3, 5 or 7 on consecutive ports from --master-port,"
            + " each also using its port + " + dev.cairn.master.ratis.RatisLog.RAFT_PORT_OFFSET + " (default: ${DEFAULT-VALUE}).", defaultValue = "1")
    int masters;

    @Option(names = "--chunk-port", description = "First chunkserver port (default: ${DEFAULT-VALUE}).", defaultValue = "" + LocalCluster.DEFAULT_FIRST_CHUNK_PORT)
    int chunkPort;

    @Option(names = "--disks", description = "Data directories (disks) per chunkserver (default: ${DEFAULT-VALUE}).", defaultValue = "1")
    int disks;

    @Option(names = "--nfs-port", description = "NFS gateway port on 127.0.0.1; 0 for none (default: ${DEFAULT-VALUE}).",
            defaultValue = "" + LocalGateway.DEFAULT_PORT)
    int nfsPort;

    @Option(names = "--nfs-exports", description = "Who may mount the gateway, and how (see cairn nfs --help; default: ${DEFAULT-VALUE}).",
            defaultValue = dev.cairn.nfs.Exports.DEFAULT)
    String nfsExports;

    @Option(names = "--metrics-port", description = "First port of the servers' Prometheus metrics on 127.0.0.1 (masters from it,"
            + " the gateway at +9, chunkservers from +10); 0 for none (default: ${DEFAULT-VALUE}).", defaultValue = "" + DEFAULT_METRICS_PORT)
    int metricsPort;

    static final int DEFAULT_METRICS_PORT = 9400;

    /** Where server {@code offset} (see --metrics-port) serves its metrics, or null with none. */
    private Address metricsAt(int offset) { return metricsPort == 0 ? null : new Address(LocalCluster.HOST, metricsPort + offset); }

    @Option(names = "--in-process", description = "Run every server in this one process (faster start, shared fate).")
    boolean inProcess;

    /** How long the processes get to come up before {@code up} reports failure. */
    static final long READY_TIMEOUT_MILLIS = 60_000;

    @Override public Integer call() throws Exception {
        if (chunkservers < 1 || chunkservers > 64) throw new IllegalArgumentException("--chunkservers must be 1..64");
        if (disks < 1 || disks > 16) throw new IllegalArgumentException("--disks must be 1..16");
        if (inProcess && disks != 1) throw new IllegalArgumentException("--disks needs the process-per-server mode (drop --in-process)");
        if (masters != 1 && masters != 3 && masters != 5 && masters != 7) throw new IllegalArgumentException("--masters must be 1, 3, 5 or 7");
        if (inProcess && masters != 1) throw new IllegalArgumentException("--masters needs the process-per-server mode (drop --in-process)");
        if (metricsPort < 0 || metricsPort > 65535 - 10 - chunkservers) throw new IllegalArgumentException("--metrics-port must be 0, or leave room for every server's port");
        dev.cairn.nfs.Exports.parse(nfsExports); // a bad rule is refused before anything starts
        return inProcess ? inProcess() : processes();
    }

    private int processes() throws Exception {
        Path root = data.toAbsolutePath();
        List<Address> group = new ArrayList<>();
        for (int i = 0; i < masters; i++) group.add(new Address(LocalCluster.HOST, masterPort + i));
        Path keyFile = root.resolve(ClusterKey.FILE_NAME);
        ClusterKey key = ClusterKey.loadOrCreate(keyFile);
        ProcessCluster cluster = new ProcessCluster(root, keyFile);
        CountDownLatch stopped = closeOnShutdown(cluster);
        List<String> lines = new ArrayList<>();
        if (masters == 1) {
            cluster.startMaster(group.get(0), metricsAt(0));
            lines.add("  master        " + group.get(0) + "  (pid " + cluster.children().get(0).process().pid() + ")" + metricsNote(0));
        } else {
            for (int i = 1; i <= masters; i++) {
                cluster.startGroupMaster(i, group, metricsAt(i - 1));
                lines.add("  master        " + group.get(i - 1) + "  (pid " + cluster.children().get(i - 1).process().pid() + ", Raft group of " + masters + ")"
                        + metricsNote(i - 1));
            }
        }
        for (int i = 1; i <= chunkservers; i++) {
            Address a = new Address(LocalCluster.HOST, chunkPort + i - 1);
            cluster.startChunkserver("cs" + i, a, group, disks, metricsAt(10 + i - 1));
            lines.add("  chunkserver   cs" + i + " " + a + "  (pid " + cluster.children().get(masters + i - 1).process().pid() + ")" + metricsNote(10 + i - 1));
        }
        if (nfsPort != 0) cluster.startNfs(new Address(LocalCluster.HOST, nfsPort), group, nfsExports, metricsAt(9));
        if (!awaitServers(group, chunkservers, key) || (nfsPort != 0 && !awaitPort(nfsPort))) {
            System.err.println("cairn: the cluster did not come up within " + READY_TIMEOUT_MILLIS / 1000 + " s; see " + root.resolve("logs"));
            cluster.close();
            return 1;
        }
        System.out.println();
        System.out.println("Cairn is up (data in " + root + ", logs in " + root.resolve("logs") + ")");
        lines.forEach(System.out::println);
        if (nfsPort != 0) System.out.println("  nfs gateway   " + LocalCluster.HOST + ":" + nfsPort + "  (pid " + cluster.children().get(masters + chunkservers).process().pid() + ")"
                + metricsNote(9));
        if (metricsPort != 0) {
            System.out.println("  dashboard     http://" + metricsAt(0) + "/" + (masters > 1 ? "  (each master's; a follower's names the leader)" : ""));
        }
        System.out.println();
        printTry(group, keyFile);
        if (nfsPort != 0) printMount(nfsPort);
        System.out.println("Stop: Ctrl-C");
        stopped.await();
        return 0;
    }

    private String metricsNote(int offset) {
        Address a = metricsAt(offset);
        return a == null ? "" : "  metrics http://" + a + "/metrics";
    }

    /** The first commands to try; on a master port other than the default, with where the master is (CAIRN_MASTER). */
    static void printTry(List<Address> group, Path keyFile) {
        String env = group.size() > 1 ? "export CAIRN_MASTER=" + ProcessCluster.join(group) + "   # every master of the group\n      "
                : group.get(0).port() == LocalCluster.DEFAULT_MASTER_PORT ? "" : "export CAIRN_MASTER=" + group.get(0) + "   # the master is not on the default port\n      ";
        if (!keyFile.equals(Path.of(RealClient.DEFAULT_KEY_FILE).toAbsolutePath())) {
            env += "export CAIRN_KEY_FILE=" + ProcessCluster.shellQuote(keyFile.toString()) + "   # the cluster key, outside ./" + RealClient.DEFAULT_KEY_FILE + "\n      ";
        }
        System.out.println("Try:  " + env + "./cairn put ./somefile /somefile && ./cairn ls / && ./cairn get /somefile ./copy");
        System.out.println("      ./cairn status --watch      ./cairn fileinfo /somefile");
    }

    private static void printMount(int port) {
        System.out.println("Mount (NFSv4.2; vers=4.1 and 4.0 work too):");
        System.out.println("      mount -t nfs4 -o vers=4.2,port=" + port + " " + LocalCluster.HOST + ":/ /mnt/cairn");
    }

    /** Waits until something accepts connections on 127.0.0.1:{@code port}. */
    private static boolean awaitPort(int port) throws InterruptedException {
        long deadline = System.currentTimeMillis() + READY_TIMEOUT_MILLIS;
        while (System.currentTimeMillis() < deadline) {
            try (java.net.Socket s = new java.net.Socket(LocalCluster.HOST, port)) {
                return true;
            } catch (java.io.IOException e) {
                Thread.sleep(200);
            }
        }
        return false;
    }

    /** Closes the cluster on Ctrl-C or SIGTERM; the latch opens when it is closed. */
    private static CountDownLatch closeOnShutdown(AutoCloseable cluster) {
        CountDownLatch stopped = new CountDownLatch(1);
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            System.out.println("cairn: stopping");
            try {
                cluster.close();
            } catch (Exception e) {
                System.err.println("cairn: stopping: " + e);
            }
            stopped.countDown();
        }, "cairn-shutdown"));
        return stopped;
    }

    /** Waits until the master answers and every chunkserver has registered. */
    private static boolean awaitServers(List<Address> group, int n, ClusterKey key) throws InterruptedException {
        long deadline = System.currentTimeMillis() + READY_TIMEOUT_MILLIS;
        while (System.currentTimeMillis() < deadline) {
            try (RealClient c = RealClient.connect(group, RealClient.CALL_TIMEOUT_SECONDS, key)) {
                long up = c.await(x -> x.status()).servers().stream().filter(s -> s.alive()).count();
                if (up >= n) return true;
            } catch (RuntimeException e) {
                // not up yet
            }
            Thread.sleep(500);
        }
        return false;
    }

    private int inProcess() throws Exception {
        Path keyFile = data.toAbsolutePath().resolve(ClusterKey.FILE_NAME);
        LocalCluster cluster = LocalCluster.start(data.toAbsolutePath(), chunkservers, masterPort, chunkPort, ClusterKey.loadOrCreate(keyFile));
        CountDownLatch stopped = closeOnShutdown(cluster);
        cluster.awaitReady();
        Address m = cluster.masterAddress();
        if (nfsPort != 0) LocalGateway.start(cluster.runtime(), m, LocalCluster.HOST, nfsPort, dev.cairn.nfs.Exports.parse(nfsExports),
                data.toAbsolutePath().resolve("nfs"));
        System.out.println();
        System.out.println("Cairn is up (data in " + data.toAbsolutePath() + ")");
        System.out.println("  master        " + m);
        cluster.chunkserverConfigs().forEach(c -> System.out.println("  chunkserver   " + c.serverId() + " " + c.listen()));
        if (nfsPort != 0) System.out.println("  nfs gateway   " + LocalCluster.HOST + ":" + nfsPort);
        System.out.println();
        printTry(List.of(m), keyFile);
        if (nfsPort != 0) printMount(nfsPort);
        System.out.println("Stop: Ctrl-C");
        stopped.await();
        return 0;
    }
}
