package dev.cairn.chaos;

import dev.cairn.chunkserver.ChunkServer;
import dev.cairn.chunkserver.ChunkServerConfig;
import dev.cairn.core.env.Address;
import dev.cairn.core.real.ClusterKey;
import dev.cairn.core.real.RealRuntime;
import dev.cairn.master.Master;
import dev.cairn.master.MasterConfig;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * A whole cluster in one JVM on real sockets and disks: one master and N chunkservers on 127.0.0.1,
 * each on its own event loop with its own data directory under {@code root}. What {@code cairn up} runs.
 */
public final class LocalCluster implements AutoCloseable {
    public static final String HOST = "127.0.0.1";
    public static final int DEFAULT_MASTER_PORT = 7100;
    public static final int DEFAULT_FIRST_CHUNK_PORT = 7201;
    public static final long DEFAULT_CAPACITY_BYTES = 1L << 40;
    static final long READY_TIMEOUT_MILLIS = 30_000;

    private final RealRuntime runtime;
    private final Path root;
    private final Address masterAddress;
    private final RealRuntime.Handle<Master> master;
    private final List<RealRuntime.Handle<ChunkServer>> chunkservers = new ArrayList<>();
    private final List<ChunkServerConfig> configs = new ArrayList<>();

    private LocalCluster(Path root, int masterPort, List<Integer> chunkPorts, ClusterKey key) {
        this.runtime = key == null ? new RealRuntime() : new RealRuntime(key);
        this.root = root;
        this.masterAddress = new Address(HOST, masterPort);
        try {
            this.master = runtime.start("master", root.resolve("master"), masterAddress, List.of(),
                    env -> new Master(env, MasterConfig.defaults(masterAddress)));
            for (int i = 1; i <= chunkPorts.size(); i++) {
                ChunkServerConfig c = new ChunkServerConfig("cs" + i, new Address(HOST, chunkPorts.get(i - 1)), masterAddress,
                        List.of("disk0"), DEFAULT_CAPACITY_BYTES);
                configs.add(c);
                chunkservers.add(startChunkserver(c));
            }
        } catch (RuntimeException e) {
            runtime.close();
            throw e;
        }
    }

    /** Chunkservers cs1..csN listen on consecutive ports from {@code firstChunkPort}. */
    public static LocalCluster start(Path root, int chunkservers, int masterPort, int firstChunkPort) {
        List<Integer> ports = new ArrayList<>();
        for (int i = 0; i < chunkservers; i++) ports.add(firstChunkPort + i);
        return new LocalCluster(root, masterPort, ports, null);
    }

    /** As above, every node (and {@link #client()}) proving membership with {@code key}. */
    public static LocalCluster start(Path root, int chunkservers, int masterPort, int firstChunkPort, ClusterKey key) {
        List<Integer> ports = new ArrayList<>();
        for (int i = 0; i < chunkservers; i++) ports.add(firstChunkPort + i);
        return new LocalCluster(root, masterPort, ports, key);
    }

    /** Chunkserver cs(i+1) listens on {@code chunkPorts.get(i)}. */
    public static LocalCluster start(Path root, int masterPort, List<Integer> chunkPorts) {
        return new LocalCluster(root, masterPort, List.copyOf(chunkPorts), null);
    }

    /** As above, every node (and {@link #client()}) proving membership with {@code key}. */
    public static LocalCluster start(Path root, int masterPort, List<Integer> chunkPorts, ClusterKey key) {
        return new LocalCluster(root, masterPort, List.copyOf(chunkPorts), key);
    }

    private RealRuntime.Handle<ChunkServer> startChunkserver(ChunkServerConfig c) {
        return runtime.start(c.serverId(), root.resolve(c.serverId()), c.listen(), c.volumes(), env -> new ChunkServer(env, c));
    }

    public Address masterAddress() { return masterAddress; }

    public List<ChunkServerConfig> chunkserverConfigs() { return List.copyOf(configs); }

    public RealRuntime runtime() { return runtime; }

    /** The master's node, for what runs beside it (its metrics endpoint). */
    public RealRuntime.Handle<Master> masterHandle() { return master; }

    /** Chunkserver {@code i}'s node (from 0), as started last. */
    public RealRuntime.Handle<ChunkServer> chunkserverHandle(int i) { return chunkservers.get(i); }

    /** Waits until every chunkserver has registered with the master. */
    public void awaitReady() {
        long deadline = System.currentTimeMillis() + READY_TIMEOUT_MILLIS;
        while (master.call(Master::liveServers) < chunkservers.size()) {
            if (System.currentTimeMillis() > deadline) {
                throw new IllegalStateException("chunkservers did not register within " + READY_TIMEOUT_MILLIS + " ms");
            }
            try {
                Thread.sleep(20);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException(e);
            }
        }
    }

    /** Stops chunkserver {@code i} (0-based) as a process crash would (the OS keeps its written files). */
    public void stopChunkserver(int i) { runtime.stop(chunkservers.get(i)); }

    public void restartChunkserver(int i) { chunkservers.set(i, startChunkserver(configs.get(i))); }

    public RealClient client() { return RealClient.on(runtime, masterAddress); }

    @Override public void close() { runtime.close(); }
}
