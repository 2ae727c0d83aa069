package dev.cairn.sim;

import dev.cairn.client.CairnClient;
import dev.cairn.client.FileWriter;
import dev.cairn.core.async.Promise;
import dev.cairn.core.proto.MasterProtocol.ChunkInfo;
import dev.cairn.core.proto.MasterProtocol.CopyInfo;
import dev.cairn.core.proto.MasterProtocol.FileInfoReply;
import dev.cairn.core.proto.MasterProtocol.StatusReply;
import dev.cairn.core.proto.StorageClass;
import dev.cairn.sim.runtime.SimHost;
import dev.cairn.sim.runtime.SimWorld;
import dev.cairn.sim.runtime.Simulation;
import dev.cairn.sim.workload.Oracle;
import java.util.ArrayList;
import java.util.List;
import java.util.function.BooleanSupplier;
import java.util.function.Predicate;
import java.util.function.Supplier;

/** A simulated cluster driven step by step from a test: write, read, look at the master's view, wait for a state. */
abstract class ClusterScenario {
    static final int CHUNK = 1 << 20;
    static final long SECOND = 1_000_000_000L;

    final Simulation sim = new Simulation(21);
    final SimWorld world = new SimWorld(sim, Boolean.getBoolean("cairn.sim.verbose"));
    SimCluster c;

    void cluster(int chunkservers) {
        cluster(new SimCluster(world, chunkservers));
    }

    void cluster(SimCluster cluster) {
        c = cluster;
        c.startAll();
        sim.runUntil(sim.now() + 2 * SECOND);
    }

    <T> T run(Supplier<Promise<T>> op) {
        return sim.await(c.clientHost(), op, 600 * SECOND);
    }

    byte[] write(String path, StorageClass cls, int length, long seed) {
        byte[] data = Oracle.content(seed, length);
        CairnClient client = c.client();
        FileWriter w = client.writer(run(() -> client.create(path, CHUNK, cls)));
        run(() -> w.write(data).flatMap(v -> w.close()));
        return data;
    }

    byte[] read(String path) {
        CairnClient client = c.client();
        return run(() -> client.lookup(path).flatMap(a -> client.reader(a).readAll()));
    }

    FileInfoReply info(String path) { return run(() -> c.client().fileInfo(path)); }

    StatusReply status() { return run(() -> c.client().status()); }

    SimHost host(String serverId) { return c.chunkservers().get(Integer.parseInt(serverId.substring(2)) - 1); }

    /** Runs virtual time until {@code done} holds for the file's chunks, checking once a second; fails after {@code limitSeconds}. */
    void awaitChunks(String path, int limitSeconds, Predicate<List<ChunkInfo>> done, String what) {
        for (int i = 0; i < limitSeconds; i++) {
            if (done.test(info(path).chunks())) return;
            sim.runUntil(sim.now() + SECOND);
        }
        throw new AssertionError(what + " not reached in " + limitSeconds + " s; chunks: " + info(path).chunks() + "; status: " + status());
    }

    /** Runs virtual time until {@code done} holds, checking once a second; fails after {@code limitSeconds}. */
    void await(int limitSeconds, BooleanSupplier done, String what) {
        for (int i = 0; i < limitSeconds; i++) {
            if (done.getAsBoolean()) return;
            sim.runUntil(sim.now() + SECOND);
        }
        throw new AssertionError(what + " not reached in " + limitSeconds + " s; status: " + status());
    }

    static List<String> current(ChunkInfo chunk) {
        List<String> out = new ArrayList<>();
        for (CopyInfo copy : chunk.copies()) if (copy.current()) out.add(copy.serverId());
        return out;
    }

    static boolean exactly(List<ChunkInfo> chunks, int copies) {
        for (ChunkInfo ch : chunks) if (current(ch).size() != copies || ch.copies().size() != copies) return false;
        return true;
    }

}
