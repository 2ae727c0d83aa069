package dev.cairn.core.real;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import dev.cairn.core.env.Address;
import dev.cairn.core.metrics.MetricsSource;
import dev.cairn.core.metrics.MetricsText;
import java.io.IOException;
import java.io.OutputStream;
import java.lang.management.GarbageCollectorMXBean;
import java.lang.management.ManagementFactory;
import java.lang.management.MemoryUsage;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;

/**
 * A node's metrics over HTTP ({@code GET /metrics}, Prometheus's text format), on {@code --metrics HOST:PORT}: what
 * the node says of itself ({@link MetricsSource}, asked on its own loop), its transport's frames, bytes and
 * connections, and the process's memory, collections and threads. Read-only and unauthenticated, like most
 * exporters: bind it to loopback or a management network. One request at a time on one thread; a node that does
 * not answer within {@link #COLLECT_SECONDS} gets a 503, not a scrape that hangs.
 */
public final class MetricsServer implements AutoCloseable {
    /** How long a scrape waits for the node's loop. */
    static final long COLLECT_SECONDS = 5;
    /** Connections waiting to be accepted. */
    static final int BACKLOG = 16;
    static final String CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8";
    private static final Path PROC_STATUS = Path.of("/proc/self/status");

    private final HttpServer http;
    private final ExecutorService worker;

    private MetricsServer(HttpServer http, ExecutorService worker) {
        this.http = http;
        this.worker = worker;
    }

    /** Serves {@code node}'s metrics on {@code listen} (port 0: any free port, see {@link #port}). */
    public static MetricsServer start(Address listen, RealRuntime.Handle<?> node, String role) throws IOException {
        return start(listen, node, role, null);
    }

    /**
     * As above, and at {@code /} a page of HTML that {@code home} makes from the node, on the node's own loop (the
     * master's dashboard); null for none.
     */
    public static MetricsServer start(Address listen, RealRuntime.Handle<?> node, String role,
                                      java.util.function.Function<Object, String> home) throws IOException {
        HttpServer http = HttpServer.create(new InetSocketAddress(listen.host(), listen.port()), BACKLOG);
        ExecutorService worker = Executors.newSingleThreadExecutor(r -> {
            Thread t = new Thread(r, "cairn-metrics-" + role);
            t.setDaemon(true);
            return t;
        });
        http.setExecutor(worker);
        http.createContext("/", exchange -> {
            try (exchange) {
                serve(exchange, node, role, home);
            }
        });
        http.start();
        return new MetricsServer(http, worker);
    }

    public int port() { return http.getAddress().getPort(); }

    private static void serve(HttpExchange ex, RealRuntime.Handle<?> node, String role, java.util.function.Function<Object, String> home) throws IOException {
        String path = ex.getRequestURI().getPath();
        boolean page = path.equals("/") && home != null;
        if (!path.equals("/metrics") && !page) {
            reply(ex, 404, "not found: the metrics are at /metrics\n");
            return;
        }
        if (!ex.getRequestMethod().equals("GET") && !ex.getRequestMethod().equals("HEAD")) {
            ex.getResponseHeaders().set("Allow", "GET, HEAD");
            reply(ex, 405, "GET or HEAD\n");
            return;
        }
        String body;
        try {
            body = page ? onLoop(node, home) : collect(node, role);
        } catch (Exception e) {
            reply(ex, 503, "the node did not answer within " + COLLECT_SECONDS + " s: " + e + "\n");
            return;
        }
        ex.getResponseHeaders().set("Content-Type", page ? "text/html; charset=utf-8" : CONTENT_TYPE);
        if (page) ex.getResponseHeaders().set("Cache-Control", "no-store");
        reply(ex, 200, body);
    }

    private static void reply(HttpExchange ex, int status, String body) throws IOException {
        byte[] b = body.getBytes(StandardCharsets.UTF_8);
        boolean head = ex.getRequestMethod().equals("HEAD");
        ex.sendResponseHeaders(status, head ? -1 : b.length);
        if (!head) {
            try (OutputStream out = ex.getResponseBody()) {
                out.write(b);
            }
        }
    }

    /** {@code f} applied to the node on its loop, waited for at most {@link #COLLECT_SECONDS}. */
    private static <T> T onLoop(RealRuntime.Handle<?> node, java.util.function.Function<Object, T> f) throws Exception {
        CompletableFuture<T> out = new CompletableFuture<>();
        node.eventLoop().execute(() -> {
            try {
                out.complete(f.apply(node.node()));
            } catch (Throwable t) {
                out.completeExceptionally(t);
            }
        });
        return out.get(COLLECT_SECONDS, TimeUnit.SECONDS);
    }

    /** The whole text: the node's own part from its loop, then the transport's and the process's. */
    static String collect(RealRuntime.Handle<?> node, String role) throws Exception {
        MetricsText m = new MetricsText();
        m.gauge("cairn_up", "1 while the node runs; its role as a label", 1, "role", role, "node", node.env().hostId());
        onLoop(node, n -> {
            if (n instanceof MetricsSource s) s.metrics(m);
            return null;
        });
        NettyTransport t = ((RealEnv) node.env()).nettyTransport();
        m.counter("cairn_transport_frames_received_total", "Node protocol frames received", t.framesIn());
        m.counter("cairn_transport_received_bytes_total", "Bytes of node protocol frames received", t.bytesIn());
        m.counter("cairn_transport_frames_sent_total", "Node protocol frames sent", t.framesOut());
        m.counter("cairn_transport_sent_bytes_total", "Bytes of node protocol frames sent", t.bytesOut());
        m.gauge("cairn_transport_connections", "Node protocol connections open, to and from peers", t.connections());
        m.counter("cairn_transport_refused_total", "Connections refused by the cluster-key handshake", t.refusedPeers());
        process(m);
        return m.text();
    }

    /** The JVM and the process: heap, resident memory, collections, threads. */
    static void process(MetricsText m) {
        MemoryUsage heap = ManagementFactory.getMemoryMXBean().getHeapMemoryUsage();
        MemoryUsage other = ManagementFactory.getMemoryMXBean().getNonHeapMemoryUsage();
        m.gauge("jvm_memory_used_bytes", "JVM memory in use", heap.getUsed(), "area", "heap");
        m.gauge("jvm_memory_used_bytes", "JVM memory in use", other.getUsed(), "area", "nonheap");
        m.gauge("jvm_memory_committed_bytes", "JVM memory committed", heap.getCommitted(), "area", "heap");
        m.gauge("jvm_memory_committed_bytes", "JVM memory committed", other.getCommitted(), "area", "nonheap");
        m.gauge("jvm_memory_max_bytes", "The largest the heap may grow", heap.getMax(), "area", "heap");
        for (GarbageCollectorMXBean gc : ManagementFactory.getGarbageCollectorMXBeans()) {
            m.counter("jvm_gc_collections_total", "Garbage collections", Math.max(0, gc.getCollectionCount()), "gc", gc.getName());
        }
        for (GarbageCollectorMXBean gc : ManagementFactory.getGarbageCollectorMXBeans()) {
            m.counter("jvm_gc_collection_seconds_total", "Time in garbage collections", Math.max(0, gc.getCollectionTime()) / 1e3, "gc", gc.getName());
        }
        m.gauge("jvm_threads", "Live threads", ManagementFactory.getThreadMXBean().getThreadCount());
        long rss = procStatusKib("VmRSS:"), peak = procStatusKib("VmHWM:");
        if (rss >= 0) m.gauge("process_resident_memory_bytes", "Resident set size", rss * 1024);
        if (peak >= 0) m.gauge("process_resident_memory_peak_bytes", "Peak resident set size", peak * 1024);
        m.gauge("process_uptime_seconds", "Seconds since the process started", ManagementFactory.getRuntimeMXBean().getUptime() / 1e3);
    }

    /** A "Name: N kB" line of /proc/self/status, in KiB; -1 where there is none (not Linux). */
    private static long procStatusKib(String field) {
        try {
            for (String line : Files.readAllLines(PROC_STATUS, StandardCharsets.US_ASCII)) {
                if (line.startsWith(field)) return Long.parseLong(line.substring(field.length()).trim().split("\\s+")[0]);
            }
        } catch (IOException | RuntimeException e) {
            // not Linux, or unreadable: left out
        }
        return -1;
    }

    @Override public void close() {
        http.stop(0);
        worker.shutdownNow();
    }
}
