package dev.cairn.jmh;

import dev.cairn.chaos.LocalCluster;
import dev.cairn.chaos.RealClient;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

/**
 * The replicated write path end to end on this machine: a 64 MiB file put through a local cluster
 * (1 master + 3 chunkservers on loopback, one disk) until it is fsynced on all three copies, against the
 * same bytes written and fsynced three times with FileChannel on the same disk (what three replicas cost
 * without Cairn). Compare the two in one run; the machine is shared. {@code nodes=keyed} runs the cluster with a cluster
 * key (every node connection authenticated, every frame signed with HMAC-SHA256), {@code open} without: what node
 * authentication costs on the write path.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MILLISECONDS)
@Warmup(iterations = 2)
@Measurement(iterations = 5)
@Fork(value = 1, jvmArgsAppend = {"-Dorg.slf4j.simpleLogger.defaultLogLevel=warn"})
public class PipelineBench {
    static final int SIZE = 64 << 20;

    @Param({"open", "keyed"}) public String nodes;

    private Path dir;
    private LocalCluster cluster;
    private RealClient client;
    private byte[] data;
    private int n;

    @Setup(Level.Trial) public void setup() throws Exception {
        dir = Files.createTempDirectory("cairn-bench");
        data = new byte[SIZE];
        new SplittableRandom(1).nextBytes(data);
        List<Integer> ports = new ArrayList<>();
        for (int i = 0; i < 4; i++) ports.add(dev.cairn.core.real.LoopbackPorts.take());
        cluster = LocalCluster.start(dir.resolve("cluster"), ports.get(0), ports.subList(1, 4),
                nodes.equals("keyed") ? dev.cairn.core.real.ClusterKey.random() : null);
        cluster.awaitReady();
        client = cluster.client();
    }

    @TearDown(Level.Trial) public void teardown() throws IOException {
        client.close();
        cluster.close();
        try (Stream<Path> s = Files.walk(dir)) {
            s.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
        }
    }

    @Benchmark public long cairnPutDurableOn3Copies() throws IOException {
        String path = "/f" + n++;
        long written = client.put(new ByteArrayInputStream(data), path, 0, dev.cairn.core.proto.StorageClass.replicated(3));
        client.remove(path);
        return written;
    }

    @Benchmark public long localDiskWriteAndFsync3Times() throws IOException {
        long total = 0;
        for (int copy = 0; copy < 3; copy++) {
            Path p = dir.resolve("local" + copy);
            try (FileChannel ch = FileChannel.open(p, StandardOpenOption.CREATE, StandardOpenOption.WRITE, StandardOpenOption.TRUNCATE_EXISTING)) {
                ByteBuffer b = ByteBuffer.wrap(data);
                while (b.hasRemaining()) total += ch.write(b);
                ch.force(true);
            }
            Files.delete(p);
        }
        return total;
    }
}
