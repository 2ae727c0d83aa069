package dev.cairn.chaos;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.cairn.core.proto.CairnException;
import dev.cairn.core.proto.StorageClass;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.util.List;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** A real local cluster: data survives a chunkserver loss during a write and a full restart. */
class LocalClusterTest {
    @TempDir Path dir;

    static byte[] random(int n, long seed) {
        byte[] b = new byte[n];
        new SplittableRandom(seed).nextBytes(b);
        return b;
    }

    @Test void writesContinueWhenAChunkserverDiesAndDataSurvivesARestart() throws Exception {
        // four chunkservers for replicated(3): with one dead, a new lease still finds three (a lease never has
        // fewer copies than the class requires, so with two dead the write would be refused, not half-done)
        List<Integer> p = Ports.free(5);
        int masterPort = p.get(0);
        List<Integer> chunkPorts = p.subList(1, 5);
        byte[] a = random(5 << 20, 1), b = random(3 << 20, 2);
        try (LocalCluster cluster = LocalCluster.start(dir, masterPort, chunkPorts)) {
            cluster.awaitReady();
            try (RealClient c = cluster.client()) {
                assertThat(c.put(new ByteArrayInputStream(a), "/a", 1 << 20, StorageClass.DEFAULT)).isEqualTo(a.length);
                cluster.stopChunkserver(1);
                // the chain that includes the dead server fails; the client takes a new lease without it
                assertThat(c.put(new ByteArrayInputStream(b), "/b", 1 << 20, StorageClass.DEFAULT)).isEqualTo(b.length);
                cluster.stopChunkserver(2);
                assertThatThrownBy(() -> c.put(new ByteArrayInputStream(b), "/c", 1 << 20, StorageClass.DEFAULT))
                        .isInstanceOf(CairnException.class).hasMessageContaining("requires");
                // the failed put left no short file behind, so trying again once the servers are back just works
                assertThatThrownBy(() -> c.lookup("/c")).isInstanceOfSatisfying(CairnException.class, e -> assertThat(e.status()).isEqualTo(dev.cairn.core.proto.Status.NOT_FOUND));
                cluster.restartChunkserver(2);
                assertThat(c.put(new ByteArrayInputStream(b), "/c", 1 << 20, StorageClass.DEFAULT)).isEqualTo(b.length);
                ByteArrayOutputStream out = new ByteArrayOutputStream();
                c.get("/a", out);
                assertThat(out.toByteArray()).isEqualTo(a);
                cluster.restartChunkserver(1);
            }
        }
        try (LocalCluster again = LocalCluster.start(dir, masterPort, chunkPorts)) {
            again.awaitReady();
            try (RealClient c = again.client()) {
                for (var e : new Object[][] {{"/a", a}, {"/b", b}}) {
                    ByteArrayOutputStream out = new ByteArrayOutputStream();
                    c.get((String) e[0], out);
                    assertThat(out.toByteArray()).as((String) e[0]).isEqualTo(e[1]);
                }
                assertThatThrownBy(() -> c.get("/missing", new ByteArrayOutputStream())).isInstanceOf(CairnException.class).hasMessageContaining("NOT_FOUND");
            }
        }
        assertThat(Files.isDirectory(dir.resolve("master/kv"))).isTrue();
        assertThat(Files.isDirectory(dir.resolve("cs1/disk0"))).isTrue();
    }

    @Test void anEc83FileOnElevenRealServersReadsBackWithThreeStopped() throws Exception {
        List<Integer> p = Ports.free(12);
        byte[] data = random(9 << 20, 3);
        try (LocalCluster cluster = LocalCluster.start(dir, p.get(0), p.subList(1, 12))) {
            cluster.awaitReady();
            try (RealClient c = cluster.client()) {
                c.put(new ByteArrayInputStream(data), "/ec", 4 << 20, StorageClass.ec(8, 3));
                assertThat(c.lookup("/ec").storageClass()).isEqualTo(StorageClass.ec(8, 3));
                for (int i : new int[] {2, 5, 9}) cluster.stopChunkserver(i);
                ByteArrayOutputStream out = new ByteArrayOutputStream();
                c.get("/ec", out);
                assertThat(out.toByteArray()).isEqualTo(data);
                cluster.stopChunkserver(0); // a fourth: more than m
                assertThatThrownBy(() -> c.get("/ec", new ByteArrayOutputStream())).isInstanceOf(CairnException.class).hasMessageContaining("UNAVAILABLE");
            }
        }
    }
}
