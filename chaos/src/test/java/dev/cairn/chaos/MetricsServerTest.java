package dev.cairn.chaos;

import static org.assertj.core.api.Assertions.assertThat;

import dev.cairn.core.env.Address;
import dev.cairn.core.proto.StorageClass;
import dev.cairn.core.real.MetricsServer;
import java.io.ByteArrayInputStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.util.List;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A real cluster's metrics over HTTP, read as Prometheus would: every line a comment or a well-formed sample, the
 * cluster's state in the master's (three servers alive, the chunk a put made, copies on every server's disk) and the
 * requests a chunkserver took in its own.
 */
class MetricsServerTest {
    @TempDir Path dir;

    /** A sample line of the text format: name, optional labels with quoted (escaped) values, a number. */
    static final Pattern SAMPLE = Pattern.compile("[a-zA-Z_:][a-zA-Z0-9_:]*(\\{([a-zA-Z_][a-zA-Z0-9_]*=\"([^\"\\\\]|\\\\.)*\",?)*\\})? "
            + "(-?[0-9.]+(E-?[0-9]+)?|NaN|[+-]Inf)");

    @Test void aClustersMetricsReadAsPrometheusWould() throws Exception {
        List<Integer> p = Ports.free(4);
        HttpClient http = HttpClient.newHttpClient();
        try (LocalCluster cluster = LocalCluster.start(dir, p.get(0), p.subList(1, 4))) {
            cluster.awaitReady();
            try (RealClient c = cluster.client()) {
                c.put(new ByteArrayInputStream(new byte[100_000]), "/m", 1 << 20, StorageClass.replicated(3));
            }
            try (MetricsServer master = MetricsServer.start(new Address("127.0.0.1", 0), cluster.masterHandle(), "master");
                 MetricsServer cs = MetricsServer.start(new Address("127.0.0.1", 0), cluster.chunkserverHandle(0), "chunkserver")) {
                HttpResponse<String> r = http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + master.port() + "/metrics")).build(),
                        HttpResponse.BodyHandlers.ofString());
                assertThat(r.statusCode()).isEqualTo(200);
                assertThat(r.headers().firstValue("Content-Type")).contains("text/plain; version=0.0.4; charset=utf-8");
                wellFormed(r.body());
                // the counts follow the planner's pass and the disks the next heartbeats: scraped until they are in
                List<String> lines = scrapeUntil(http, master.port(), "cairn_chunks 1", "cairn_master_grace 0",
                        "cairn_disk_state{server=\"cs2\",disk=\"disk0\",state=\"ok\"} 1");
                assertThat(lines).contains("cairn_chunkservers{state=\"alive\"} 3", "cairn_chunks 1", "cairn_chunks_under_goal 0",
                        "cairn_chunkserver_chunks{server=\"cs1\"} 1", "cairn_disk_state{server=\"cs2\",disk=\"disk0\",state=\"ok\"} 1",
                        "cairn_up{role=\"master\",node=\"master\"} 1");
                assertThat(lines).anyMatch(l -> l.startsWith("process_resident_memory_bytes "));
                assertThat(lines).anyMatch(l -> l.startsWith("cairn_transport_received_bytes_total "));
                assertThat(lines).as("the create's latency").anyMatch(l -> l.startsWith("cairn_master_request_seconds_count{kind=\"Create\"} "));

                List<String> csLines = scrapeUntil(http, cs.port(), "cairn_chunkserver_chunks 1");
                assertThat(csLines).contains("cairn_chunkserver_registered 1", "cairn_chunkserver_chunks 1",
                        "cairn_chunkserver_requests_total{kind=\"WriteData\"} 1", "cairn_chunkserver_written_bytes_total 100000");
                // the disk's calls timed by kind: the write and the syncs that made it durable
                for (String op : List.of("write", "sync")) {
                    String count = "cairn_disk_operation_seconds_count{disk=\"disk0\",op=\"" + op + "\"} ";
                    assertThat(csLines).as("disk %s latency", op).anyMatch(l -> l.startsWith(count) && Long.parseLong(l.substring(count.length())) > 0);
                }
                assertThat(csLines).anyMatch(l -> l.startsWith("cairn_disk_operation_seconds_bucket{disk=\"disk0\",op=\"sync\",le=\"+Inf\"} "));
                assertThat(csLines).contains("cairn_disk_read_errors_total{disk=\"disk0\"} 0");

                assertThat(http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + master.port() + "/other")).build(),
                        HttpResponse.BodyHandlers.discarding()).statusCode()).isEqualTo(404);
                assertThat(http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + master.port() + "/metrics"))
                        .POST(HttpRequest.BodyPublishers.noBody()).build(), HttpResponse.BodyHandlers.discarding()).statusCode()).isEqualTo(405);
            }
        }
    }

    /** Scrapes {@code port} until every one of {@code want} is a line of it (at most 60 s); its sample lines. */
    static List<String> scrapeUntil(HttpClient http, int port, String... want) throws Exception {
        long deadline = System.currentTimeMillis() + 60_000;
        while (true) {
            String body = http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/metrics")).build(),
                    HttpResponse.BodyHandlers.ofString()).body();
            List<String> lines = wellFormed(body);
            if (lines.containsAll(List.of(want)) || System.currentTimeMillis() > deadline) return lines;
            Thread.sleep(200);
        }
    }

    /** The sample lines of {@code text}, each checked well-formed; every family declared once before its samples. */
    static List<String> wellFormed(String text) {
        java.util.Set<String> typed = new java.util.HashSet<>();
        for (String line : text.split("\n")) {
            if (line.startsWith("# TYPE ")) {
                assertThat(typed.add(line.split(" ")[2])).as("declared once: %s", line).isTrue();
            } else if (!line.startsWith("# HELP ")) {
                assertThat(line).as("a sample line").matches(SAMPLE);
                String name = line.split("[{ ]")[0];
                // a histogram's samples are its family's name with _bucket, _sum or _count
                String family = typed.contains(name) ? name : name.replaceFirst("_(bucket|sum|count)$", "");
                assertThat(typed).as("%s declared before its samples", name).contains(family);
            }
        }
        return text.lines().filter(l -> !l.startsWith("#")).toList();
    }
}
