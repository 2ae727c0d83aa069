package dev.cairn.core.real;

import dev.cairn.core.env.Clock;
import dev.cairn.core.env.Env;
import dev.cairn.core.env.KvStore;
import dev.cairn.core.env.Log;
import dev.cairn.core.env.Scheduler;
import dev.cairn.core.env.Transport;
import dev.cairn.core.env.Volume;
import io.netty.channel.EventLoop;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.TreeMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.random.RandomGenerator;

/** One node's Env on the real machine: its own event loop, sockets, data directories and RocksDB. */
public final class RealEnv implements Env {
    /** I/O threads per volume: a stalled disk holds up only its own queue. */
    static final int IO_THREADS_PER_VOLUME = 2;

    private final String hostId;
    private final Path root;
    /** Volumes that live elsewhere than under {@link #root} (a disk's own mount point). */
    private final java.util.Map<String, Path> volumeDirs;
    private final EventLoop loop;
    private final LoopScheduler scheduler;
    private final NettyTransport transport;
    private final RandomGenerator random = new SplittableRandom(new SecureRandom().nextLong());
    private final TreeMap<String, FileVolume> volumes = new TreeMap<>();
    private final List<ExecutorService> pools = new ArrayList<>();
    private RocksKv kv;

    RealEnv(String hostId, Path root, java.util.Map<String, Path> volumeDirs, EventLoop loop, ClusterKey key, int netThreads) {
        this.hostId = hostId;
        this.root = root;
        this.volumeDirs = java.util.Map.copyOf(volumeDirs);
        this.loop = loop;
        this.scheduler = new LoopScheduler(loop);
        this.transport = new NettyTransport(loop, hostId, key, netThreads);
    }

    NettyTransport nettyTransport() { return transport; }

    EventLoop loop() { return loop; }

    @Override public String hostId() { return hostId; }

    @Override public Clock clock() { return RealClock.INSTANCE; }

    @Override public Scheduler scheduler() { return scheduler; }

    @Override public RandomGenerator random() { return random; }

    @Override public Transport transport() { return transport; }

    @Override public synchronized Volume volume(String name) {
        return volumes.computeIfAbsent(name, n -> {
            Path dir = volumeDirs.getOrDefault(n, root.resolve(n));
            FileVolume.check(dir);
            return new FileVolume(n, dir, pool(IO_THREADS_PER_VOLUME, hostId + "-" + n), scheduler);
        });
    }

    /** Checks a volume's directory up front so a bad one stops the node before it starts. */
    public void requireVolume(String name) { volume(name); }

    @Override public synchronized KvStore kv() {
        if (kv == null) kv = new RocksKv(root.resolve("kv"), pool(1, hostId + "-kv"), scheduler);
        return kv;
    }

    @Override public Log log(Class<?> owner) { return new Slf4jLog(owner, hostId); }

    private ExecutorService pool(int threads, String name) {
        int[] n = {0};
        ExecutorService p = Executors.newFixedThreadPool(threads, r -> {
            Thread t = new Thread(r, "cairn-io-" + name + "-" + n[0]++);
            t.setDaemon(true);
            return t;
        });
        pools.add(p);
        return p;
    }

    synchronized void close() {
        transport.stop();
        for (ExecutorService p : pools) p.shutdown();
        for (ExecutorService p : pools) {
            try { p.awaitTermination(10, TimeUnit.SECONDS); } catch (InterruptedException e) { Thread.currentThread().interrupt(); }
        }
        for (FileVolume v : volumes.values()) v.close();
        if (kv != null) kv.close();
    }
}
