package dev.cairn.cli;

import dev.cairn.core.env.Address;
import dev.cairn.core.real.MetricsServer;
import dev.cairn.core.real.RealRuntime;
import java.io.IOException;
import picocli.CommandLine.Option;

/** {@code --metrics HOST:PORT}: the node's Prometheus metrics over HTTP (docs/operations.md, "Metrics"). */
final class MetricsOption {
    @Option(names = "--metrics", description = "HOST:PORT to serve Prometheus metrics on, at /metrics (read-only, unauthenticated:"
            + " bind it to loopback or a management network). Off unless given.")
    String listen;

    /** Starts the metrics endpoint of {@code node} if asked for; it lives as long as the process. */
    void serve(RealRuntime.Handle<?> node, String role) throws IOException {
        if (listen == null) return;
        // a master also serves its web page at /
        MetricsServer s = MetricsServer.start(Address.parse(listen), node, role, role.equals("master") ? Dashboard::of : null);
        String at = "http://" + Address.parse(listen).host() + ":" + s.port();
        System.out.println("cairn: " + role + " metrics on " + at + "/metrics" + (role.equals("master") ? ", its page on " + at + "/" : ""));
    }
}
