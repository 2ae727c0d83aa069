package dev.cairn.chaos;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.cairn.core.proto.StorageClass;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A second NFS client implementation: Debian's libnfs utilities ({@code nfs-ls}, {@code nfs-cat}) list and
 * read over NFSv4.0 (their v4 writes are broken in that version, so files are written through the cluster's
 * client library) from a real cluster and gateway on loopback. {@code ./cairn test} installs libnfs-utils
 * when run as root; elsewhere the test skips, saying why.
 */
class LibNfsClientTest {
    static final String NFS_CAT = "/usr/bin/nfs-cat", NFS_LS = "/usr/bin/nfs-ls";
    static final long TIMEOUT_SECONDS = 120;
    static GatewayCluster setup;
    static LocalCluster cluster;
    static LocalGateway gateway;
    @TempDir static Path data;

    @BeforeAll static void start() throws Exception {
        assumeTrue(Files.isExecutable(Path.of(NFS_CAT)) && Files.isExecutable(Path.of(NFS_LS)),
                "libnfs-utils (nfs-cat, nfs-ls) not installed: libnfs client test skipped");
        setup = GatewayCluster.start(data);
        cluster = setup.cluster();
        gateway = setup.gateway();
    }

    @AfterAll static void stop() {
        if (setup != null) setup.close();
    }

    /** An nfs:// URL of a path under the export "/" (libnfs splits export and path at the double slash). */
    static String url(String path) { return "nfs://127.0.0.1/" + path + "?version=4&nfsport=" + gateway.port(); }

    static byte[] run(String... cmd) throws Exception {
        Process p = new ProcessBuilder(cmd).redirectInput(ProcessBuilder.Redirect.from(new java.io.File("/dev/null"))).start();
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        Thread pump = new Thread(() -> {
            try {
                p.getInputStream().transferTo(out);
            } catch (IOException ignored) {
                // the process went away: what arrived is checked below
            }
        });
        pump.start();
        boolean done = p.waitFor(TIMEOUT_SECONDS, TimeUnit.SECONDS);
        if (!done) p.destroyForcibly();
        pump.join(10_000);
        String err = new String(p.getErrorStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(done).as("%s finished within %d s", String.join(" ", cmd), TIMEOUT_SECONDS).isTrue();
        assertThat(p.exitValue()).as("%s: %s", String.join(" ", cmd), err).isZero();
        return out.toByteArray();
    }

    @Test void libnfsListsAndReadsWhatTheClusterHolds() throws Exception {
        byte[] big = new byte[5 * 1024 * 1024 + 777];
        new SplittableRandom(3).nextBytes(big);
        try (RealClient c = cluster.client()) {
            c.mkdir("/libnfs");
            c.put(new ByteArrayInputStream(big), "/libnfs/big.bin", 1 << 20, StorageClass.DEFAULT);
            for (int i = 0; i < 20; i++) {
                c.put(new ByteArrayInputStream(("file " + i + "\n").getBytes(StandardCharsets.UTF_8)), "/libnfs/f" + i, 1 << 20, StorageClass.DEFAULT);
            }
        }
        String listing = new String(run(NFS_LS, url("/libnfs")), StandardCharsets.UTF_8);
        for (int i = 0; i < 20; i++) assertThat(listing).contains(" f" + i + "\n");
        assertThat(listing).containsPattern("\\s" + big.length + " big\\.bin\n");
        assertThat(run(NFS_CAT, url("/libnfs/big.bin"))).as("5 MiB read by libnfs over NFSv4.0").isEqualTo(big);
        assertThat(new String(run(NFS_CAT, url("/libnfs/f7")), StandardCharsets.UTF_8)).isEqualTo("file 7\n");
    }
}
