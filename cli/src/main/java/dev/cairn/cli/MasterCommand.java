package dev.cairn.cli;

import dev.cairn.core.env.Address;
import dev.cairn.core.real.RealRuntime;
import dev.cairn.master.Master;
import dev.cairn.master.MasterConfig;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/** {@code cairn master}: one master process. */
@Command(name = "master", description = "Run a master.")
final class MasterCommand implements Callable<Integer> {
    @Option(names = "--listen", defaultValue = "127.0.0.1:7100", description = "HOST:PORT (default: ${DEFAULT-VALUE}).")
    String listen;

    @Option(names = "--data", required = true, description = "Metadata directory.")
    Path data;

    @Option(names = "--goal", defaultValue = "3", description = "Default copies per chunk (default: ${DEFAULT-VALUE}).")
    int goal;

    @Override public Integer call() throws Exception {
        Address a = Address.parse(listen);
        if (goal < 1 || goal > 16) throw new IllegalArgumentException("--goal must be 1..16");
        RealRuntime rt = new RealRuntime();
        rt.start("master", data.toAbsolutePath(), a, List.of(), env -> new Master(env, new MasterConfig(a, goal, MasterConfig.DEFAULT_HEARTBEAT_TIMEOUT_NANOS)));
        return waitForSignal(rt);
    }

    static int waitForSignal(RealRuntime rt) throws InterruptedException {
        CountDownLatch done = new CountDownLatch(1);
        Runtime.getRuntime().addShutdownHook(new Thread(() -> { rt.close(); done.countDown(); }, "cairn-shutdown"));
        done.await();
        return 0;
    }
}
