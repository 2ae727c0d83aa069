package dev.cairn.chaos;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The chaos run's networks themselves: a node in a namespace of its own reaches the others and the run, a partition
 * cuts exactly what it says (both ways, or only what the node hears) and nothing else, healing undoes it, and
 * nothing is left behind. A layer that cut too little would let every partition scenario pass without a partition.
 */
class NetNamespacesTest {
    static final int PORT = 7000;
    /** How long a connection that a partition should stop is given before it counts as stopped. */
    static final int CUT_SECONDS = 2;

    @BeforeEach void needsRoot() {
        String why = NetNamespaces.unavailable();
        Assumptions.assumeTrue(why == null, "network namespaces cannot be made here: " + why);
    }

    @Test void partitionsCutWhatTheySayAndHealingUndoesThem() throws Exception {
        List<Process> listeners = new ArrayList<>();
        String id;
        try (NetNamespaces net = NetNamespaces.create(List.of("a", "b", "c"));
             ServerSocket run = new ServerSocket()) {
            id = net.id();
            run.bind(new InetSocketAddress(InetAddress.getByName(net.runAddress()), 0));
            Thread acceptor = new Thread(() -> {
                while (!run.isClosed()) {
                    try (Socket s = run.accept()) {
                        s.getOutputStream().write('k');
                    } catch (IOException e) {
                        return;
                    }
                }
            });
            acceptor.setDaemon(true);
            acceptor.start();
            for (String n : List.of("b", "c")) listeners.add(listen(net, n));
            for (String n : List.of("b", "c")) awaitReachable(net.address(n));
            String runAt = net.runAddress() + "/" + run.getLocalPort();

            assertThat(connects(net, "a", net.address("b") + "/" + PORT)).as("a to b, whole").isTrue();
            assertThat(connects(net, "a", runAt)).as("a to the run, whole").isTrue();

            net.isolate(List.of("a"), false);
            assertThat(net.rules("a")).contains("saddr").contains("daddr");
            assertThat(net.rules("b")).doesNotContain("drop");
            assertThat(connects(net, "a", net.address("b") + "/" + PORT)).as("a to b, a cut off").isFalse();
            assertThat(connects(net, "a", runAt)).as("a to the run, a cut off").isFalse();
            assertThat(connects(net, "c", net.address("b") + "/" + PORT)).as("c to b, a cut off").isTrue();
            assertThat(connects(net, "b", runAt)).as("b to the run, a cut off").isTrue();

            net.heal("a");
            assertThat(connects(net, "a", net.address("b") + "/" + PORT)).as("a to b, healed").isTrue();

            net.isolate(List.of("a", "b"), false); // a side of two: whole inside, cut from the rest
            assertThat(connects(net, "a", net.address("b") + "/" + PORT)).as("a to b, same side").isTrue();
            assertThat(connects(net, "a", net.address("c") + "/" + PORT)).as("a to c, other side").isFalse();
            assertThat(connects(net, "c", net.address("b") + "/" + PORT)).as("c to b, other side").isFalse();
            net.healAll();

            net.isolate(List.of("c"), true); // c hears nothing: its SYN leaves, the answer never arrives
            assertThat(net.rules("c")).contains("saddr").doesNotContain("daddr");
            assertThat(connects(net, "c", net.address("b") + "/" + PORT)).as("c to b, c deaf").isFalse();
            assertThat(connects(net, "a", net.address("b") + "/" + PORT)).as("a to b, c deaf").isTrue();
            net.heal("c");
            assertThat(net.rules("c")).doesNotContain("drop");

            net.cut(List.of("a"), List.of("b"), false, false); // a and b apart; c and the run reach both
            assertThat(connects(net, "a", net.address("b") + "/" + PORT)).as("a to b, a cut from b").isFalse();
            assertThat(connects(net, "a", net.address("c") + "/" + PORT)).as("a to c, a cut from b").isTrue();
            assertThat(connects(net, "a", runAt)).as("a to the run, a cut from b").isTrue();
            assertThat(connects(net, "c", net.address("b") + "/" + PORT)).as("c to b, a cut from b").isTrue();
            net.heal("a");

            net.loss("b", 30);
            assertThat(net.rules("b")).contains("numgen random mod 100 < 30 drop");
            net.heal("b");
            assertThat(connects(net, "c", net.address("b") + "/" + PORT)).as("c to b, healed").isTrue();
        } finally {
            for (Process p : listeners) p.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
        }
        String left = run("ip", "netns", "list");
        assertThat(left).as("namespaces left after close").doesNotContain(id + "-");
        assertThat(run("ip", "link", "show")).as("links left after close").doesNotContain(id + ":");
    }

    /** A listener on {@code node}'s address (this test's own classes, in a JVM run in the node's namespace). */
    private static Process listen(NetNamespaces net, String node) throws IOException {
        List<String> cmd = new ArrayList<>(net.prefix(node));
        cmd.addAll(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(), "-Xmx32m",
                "-cp", System.getProperty("java.class.path"), Listener.class.getName(), net.address(node), String.valueOf(PORT)));
        return new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
    }

    private static void awaitReachable(String address) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (true) {
            try (Socket s = new Socket()) {
                s.connect(new InetSocketAddress(address, PORT), 1000);
                return;
            } catch (IOException e) {
                if (System.nanoTime() > deadline) throw new AssertionError(address + ":" + PORT + " never listened", e);
                Thread.sleep(100);
            }
        }
    }

    /** Whether a TCP connection from inside {@code node}'s namespace to {@code hostSlashPort} opens within {@link #CUT_SECONDS}. */
    private static boolean connects(NetNamespaces net, String node, String hostSlashPort) throws Exception {
        List<String> cmd = new ArrayList<>(net.prefix(node));
        cmd.addAll(List.of("timeout", String.valueOf(CUT_SECONDS), "bash", "-c", "exec 3<>/dev/tcp/" + hostSlashPort));
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        p.getInputStream().readAllBytes();
        assertThat(p.waitFor(CUT_SECONDS + 10, TimeUnit.SECONDS)).isTrue();
        return p.exitValue() == 0;
    }

    private static String run(String... cmd) throws Exception {
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        p.waitFor(30, TimeUnit.SECONDS);
        return out;
    }

    /** Accepts connections on the given address and port and answers each with one byte, until killed. */
    public static final class Listener {
        public static void main(String[] args) throws IOException {
            try (ServerSocket s = new ServerSocket()) {
                s.bind(new InetSocketAddress(InetAddress.getByName(args[0]), Integer.parseInt(args[1])));
                while (true) {
                    try (Socket c = s.accept(); OutputStream out = c.getOutputStream()) {
                        out.write('k');
                    }
                }
            }
        }
    }
}
