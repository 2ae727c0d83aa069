package dev.cairn.cli;

import dev.cairn.core.env.Address;
import dev.cairn.core.real.RealRuntime;
import dev.cairn.master.Master;
import dev.cairn.master.MasterConfig;
import dev.cairn.master.MasterReplica;
import dev.cairn.master.ratis.RatisLog;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/** {@code cairn master}: one master process, alone or one of a Raft group ({@code --peers}). */
@Command(name = "master", description = "Run a master.")
final class MasterCommand implements Callable<Integer> {
    @Option(names = "--listen", defaultValue = "127.0.0.1:7100", description = "HOST:PORT (default: ${DEFAULT-VALUE}).")
    String listen;

    @Option(names = "--data", required = true, description = "Metadata directory.")
    Path data;

    @Option(names = "--goal", defaultValue = "3", description = "Default copies per chunk (default: ${DEFAULT-VALUE}).")
    int goal;

    @Option(names = "--peers", description = "The master group: every master's HOST:PORT, this one's included, comma-separated"
            + " (each also uses PORT+" + RatisLog.RAFT_PORT_OFFSET + " for Raft). Without it, a single master.")
    String peers;

    @picocli.CommandLine.Mixin KeyOption key;

    @picocli.CommandLine.Mixin MetricsOption metrics;

    @Override public Integer call() throws Exception {
        Address a = Address.parse(listen);
        if (goal < 1 || goal > 16) throw new IllegalArgumentException("--goal must be 1..16");
        MasterConfig config = new MasterConfig(a, goal, MasterConfig.DEFAULT_HEARTBEAT_TIMEOUT_NANOS);
        Path dir = data.toAbsolutePath();
        RealRuntime rt = key.serverRuntime();
        if (peers == null) {
            metrics.serve(rt.start("master", dir, a, List.of(), env -> new Master(env, config)), "master");
        } else {
            List<Address> group = Address.parseList(peers);
            if (!group.contains(a)) throw new IllegalArgumentException("--peers must list this master's --listen address " + a);
            List<RatisLog.Peer> members = RatisLog.Peer.of(group);
            metrics.serve(rt.start("master", dir, a, List.of(), env -> new MasterReplica(env, config, new RatisLog(members, a, dir.resolve("raft"), env.scheduler()))), "master");
        }
        return waitForSignal(rt);
    }

    static int waitForSignal(RealRuntime rt) throws InterruptedException {
        CountDownLatch done = new CountDownLatch(1);
        Runtime.getRuntime().addShutdownHook(new Thread(() -> { rt.close(); done.countDown(); }, "cairn-shutdown"));
        done.await();
        return 0;
    }
}
