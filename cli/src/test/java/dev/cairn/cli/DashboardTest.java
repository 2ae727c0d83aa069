package dev.cairn.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.cairn.chaos.LocalCluster;
import dev.cairn.chaos.RealClient;
import dev.cairn.core.env.Address;
import dev.cairn.core.proto.StorageClass;
import dev.cairn.core.real.LoopbackPorts;
import dev.cairn.core.real.MetricsServer;
import java.io.ByteArrayInputStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The master's page: its servers and their disks, the chunk counts, and the plots once the history has samples;
 * a stopped chunkserver shows as down. Rendered by a real browser (headless Chromium's DOM) where one is installed.
 */
class DashboardTest {
    @TempDir Path dir;

    static final Path CHROMIUM = Path.of("/usr/bin/chromium");

    @Test void theMastersPageShowsServersDisksAndChunksAndADownServer() throws Exception {
        List<Integer> p = List.of(LoopbackPorts.take(), LoopbackPorts.take(), LoopbackPorts.take(), LoopbackPorts.take());
        HttpClient http = HttpClient.newHttpClient();
        try (LocalCluster cluster = LocalCluster.start(dir.resolve("c"), p.get(0), p.subList(1, 4))) {
            cluster.awaitReady();
            try (RealClient c = cluster.client()) {
                c.put(new ByteArrayInputStream(new byte[70_000]), "/d", 1 << 20, StorageClass.replicated(2));
            }
            try (MetricsServer m = MetricsServer.start(new Address("127.0.0.1", 0), cluster.masterHandle(), "master", Dashboard::of)) {
                String url = "http://127.0.0.1:" + m.port() + "/";
                String page = pageUntil(http, url, "<td>cs3</td>", "<tr><th>chunks</th><td>1</td></tr>", "disk0 ok");
                assertThat(page).startsWith("<!DOCTYPE html>").contains("<td>cs1</td>", "<td>cs2</td>", "<td>cs3</td>", "HEALTHY", "href='/metrics'");
                cluster.stopChunkserver(2);
                page = pageUntil(http, url, "<span class='bad'>down</span>");
                assertThat(page).contains("<span class='bad'>down</span>");
            }
        }
    }

    /** Headless Chromium (which {@code ./cairn test} installs when run as root) loads the page: its DOM holds the tables. */
    @Test void aRealBrowserRendersThePage() throws Exception {
        org.junit.jupiter.api.Assumptions.assumeTrue(Files.isExecutable(CHROMIUM), CHROMIUM + " not installed (Debian's chromium): browser check skipped");
        List<Integer> p = List.of(LoopbackPorts.take(), LoopbackPorts.take(), LoopbackPorts.take(), LoopbackPorts.take());
        try (LocalCluster cluster = LocalCluster.start(dir.resolve("b"), p.get(0), p.subList(1, 4))) {
            cluster.awaitReady();
            try (MetricsServer m = MetricsServer.start(new Address("127.0.0.1", 0), cluster.masterHandle(), "master", Dashboard::of)) {
                String url = "http://127.0.0.1:" + m.port() + "/";
                pageUntil(HttpClient.newHttpClient(), url, "<td>cs3</td>");
                Path out = dir.resolve("dom.html");
                Process b = new ProcessBuilder(CHROMIUM.toString(), "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                        "--dump-dom", url).redirectError(ProcessBuilder.Redirect.DISCARD).redirectOutput(out.toFile()).start();
                boolean done = b.waitFor(120, TimeUnit.SECONDS);
                if (!done) b.destroyForcibly();
                assertThat(done).as("chromium finished").isTrue();
                String dom = Files.readString(out);
                assertThat(dom).contains("<table class=\"grid\" id=\"servers\">", "<td>cs1</td>", "<td>cs3</td>", "Cairn cluster");
            }
        }
    }

    @Test void plotsNeedTwoSamplesAndScaleToTheirLargestValue() {
        var status = new dev.cairn.core.proto.MasterProtocol.StatusReply(0, dev.cairn.core.proto.Status.OK, "", false, 3, 1, 0, 0, 0, 0, 0, 0, 0, List.of(), 0);
        String none = Dashboard.page(status, List.of(), "single master");
        assertThat(none).contains("DEGRADED", "plots after two samples").doesNotContain("<polyline");
        var h = List.of(new dev.cairn.master.ClusterHistory.Sample(0, 1L << 30, 3, 1, 0, 0, 0, 0, 3),
                new dev.cairn.master.ClusterHistory.Sample(5_000, 2L << 30, 3, 0, 0, 0, 2, 1, 3));
        String two = Dashboard.page(status, h, "single master");
        assertThat(two).contains("<polyline", "space used on live chunkservers: now 2.0 GiB", "copies being made: now 2", "00:00:05 UTC");
        assertThat(Dashboard.esc("<a href='x'>&")).isEqualTo("&lt;a href=&#39;x&#39;&gt;&amp;");
    }

    /** Fetches {@code url} until the page holds every one of {@code want} (at most 60 s). */
    static String pageUntil(HttpClient http, String url, String... want) throws Exception {
        long deadline = System.currentTimeMillis() + 60_000;
        while (true) {
            HttpResponse<String> r = http.send(HttpRequest.newBuilder(URI.create(url)).build(), HttpResponse.BodyHandlers.ofString());
            assertThat(r.statusCode()).isEqualTo(200);
            assertThat(r.headers().firstValue("Content-Type")).contains("text/html; charset=utf-8");
            boolean all = true;
            for (String w : want) all &= r.body().contains(w);
            if (all || System.currentTimeMillis() > deadline) return r.body();
            Thread.sleep(250);
        }
    }
}
