package dev.cairn.cli;

import dev.cairn.chaos.LocalCluster;
import dev.cairn.core.env.Address;
import java.nio.file.Path;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/** {@code cairn up}: a whole local cluster in this process, until Ctrl-C or SIGTERM. */
@Command(name = "up", description = "Run a local cluster (1 master, 3 chunkservers on 127.0.0.1) with data under ./cairn-data.")
final class UpCommand implements Callable<Integer> {
    @Option(names = "--data", description = "Data directory (default: ${DEFAULT-VALUE}).", defaultValue = "cairn-data")
    Path data;

    @Option(names = "--chunkservers", description = "Number of chunkservers (default: ${DEFAULT-VALUE}).", defaultValue = "3")
    int chunkservers;

    @Option(names = "--master-port", description = "Master port (default: ${DEFAULT-VALUE}).", defaultValue = "" + LocalCluster.DEFAULT_MASTER_PORT)
    int masterPort;

    @Option(names = "--chunk-port", description = "First chunkserver port (default: ${DEFAULT-VALUE}).", defaultValue = "" + LocalCluster.DEFAULT_FIRST_CHUNK_PORT)
    int chunkPort;

    @Override public Integer call() throws Exception {
        if (chunkservers < 1 || chunkservers > 64) throw new IllegalArgumentException("--chunkservers must be 1..64");
        LocalCluster cluster = LocalCluster.start(data.toAbsolutePath(), chunkservers, masterPort, chunkPort);
        CountDownLatch stopped = new CountDownLatch(1);
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            System.out.println("cairn: stopping");
            cluster.close();
            stopped.countDown();
        }, "cairn-shutdown"));
        cluster.awaitReady();
        Address m = cluster.masterAddress();
        System.out.println();
        System.out.println("Cairn is up (data in " + data.toAbsolutePath() + ")");
        System.out.println("  master        " + m);
        cluster.chunkserverConfigs().forEach(c -> System.out.println("  chunkserver   " + c.serverId() + " " + c.listen()));
        System.out.println();
        System.out.println("Try:  ./cairn put ./somefile /somefile && ./cairn ls / && ./cairn get /somefile ./copy");
        System.out.println("Stop: Ctrl-C");
        stopped.await();
        return 0;
    }
}
