package dev.cairn.chaos;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * The cluster's nodes as real processes, and the crude things a nemesis does to them: {@code kill -9}, a restart
 * with the same command, {@code SIGSTOP}/{@code SIGCONT}. Each node logs to {@code DIR/logs/NAME.log}, appended
 * across restarts so a report can point at what a node said before and after.
 */
public final class NodeProcesses implements AutoCloseable {
    /** How long a graceful stop at the end may take before the process is killed. */
    static final long STOP_WAIT_SECONDS = 10;

    private record Node(List<String> command, Process process, boolean paused) {}

    /** Where Debian's libfaketime is (package {@code faketime}). */
    public static final Path LIBFAKETIME = Path.of("/usr/lib/x86_64-linux-gnu/faketime/libfaketimeMT.so.1");

    private final Path logs;
    private final Path clocks;
    private final List<String> launcher;
    private final boolean fakeClocks;
    private final Map<String, Node> nodes = new LinkedHashMap<>();

    /**
     * {@code launcher} runs the cairn CLI (e.g. {@code java -Xmx256m -jar cairn.jar}); node arguments follow it.
     * With {@code fakeClocks}, every node runs under libfaketime reading its wall-clock offset from a file of its
     * own once a second ({@link #stepClock}); its monotonic clock is left alone.
     */
    public NodeProcesses(Path dir, List<String> launcher, boolean fakeClocks) throws IOException {
        this.logs = Files.createDirectories(dir.resolve("logs"));
        this.clocks = Files.createDirectories(dir.resolve("clocks"));
        this.launcher = List.copyOf(launcher);
        this.fakeClocks = fakeClocks;
        if (fakeClocks && !Files.isReadable(LIBFAKETIME)) {
            throw new IllegalStateException("clock faults need libfaketime at " + LIBFAKETIME + " (Debian package faketime)");
        }
    }

    /** Steps {@code name}'s wall clock to {@code offsetSeconds} from the real one (0: back to true time). */
    public void stepClock(String name, long offsetSeconds) throws IOException {
        if (!fakeClocks) throw new IllegalStateException("this cluster was started without fake clocks");
        Path f = clocks.resolve(name);
        Path tmp = clocks.resolve(name + ".tmp");
        Files.writeString(tmp, (offsetSeconds >= 0 ? "+" : "") + offsetSeconds + "\n");
        Files.move(tmp, f, java.nio.file.StandardCopyOption.REPLACE_EXISTING, java.nio.file.StandardCopyOption.ATOMIC_MOVE);
    }

    /** What each node's command starts with: nothing, or what puts it in a network of its own ({@link NetNamespaces#prefix}). */
    private java.util.function.Function<String, List<String>> prefix = name -> List.of();

    /** Nodes started from now on run under {@code prefix.apply(name)} (e.g. {@code nsenter --net=… --}). */
    public synchronized void prefixWith(java.util.function.Function<String, List<String>> prefix) { this.prefix = prefix; }

    public synchronized void start(String name, List<String> args) throws IOException {
        List<String> cmd = new ArrayList<>(prefix.apply(name));
        cmd.addAll(launcher);
        cmd.addAll(args);
        nodes.put(name, new Node(cmd, spawn(name, cmd), false));
    }

    private Process spawn(String name, List<String> cmd) throws IOException {
        ProcessBuilder b = new ProcessBuilder(cmd).redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.appendTo(logs.resolve(name + ".log").toFile()));
        if (fakeClocks) {
            if (!Files.exists(clocks.resolve(name))) stepClock(name, 0);
            b.environment().put("LD_PRELOAD", LIBFAKETIME.toString());
            b.environment().put("FAKETIME_TIMESTAMP_FILE", clocks.resolve(name).toString());
            b.environment().put("FAKETIME_CACHE_DURATION", "1");
            b.environment().put("FAKETIME_DONT_FAKE_MONOTONIC", "1");
            // without this libfaketime rewrites every timed wait of the JVM and its threads spin: seconds of system time
            b.environment().put("FAKETIME_FORCE_MONOTONIC_FIX", "0");
        }
        return b.start();
    }

    public synchronized List<String> names() { return List.copyOf(nodes.keySet()); }

    public synchronized boolean running(String name) {
        Node n = nodes.get(name);
        return n != null && n.process.isAlive();
    }

    public synchronized boolean paused(String name) { return nodes.get(name).paused; }

    public synchronized long pid(String name) { return nodes.get(name).process.pid(); }

    /** {@code kill -9}: no shutdown hook, no flush, exactly a crash of the process (not of its host's page cache). */
    public synchronized void kill(String name) throws InterruptedException {
        Node n = nodes.get(name);
        n.process.destroyForcibly();
        n.process.waitFor(STOP_WAIT_SECONDS, TimeUnit.SECONDS);
        nodes.put(name, new Node(n.command, n.process, false));
    }

    /** Starts a killed node again with the command it first had (same data directory, same port). */
    public synchronized void restart(String name) throws IOException {
        Node n = nodes.get(name);
        if (n.process.isAlive()) throw new IllegalStateException(name + " is still running");
        nodes.put(name, new Node(n.command, spawn(name, n.command), false));
    }

    /** {@code SIGSTOP}: the process stops dead, sockets open, as a stalled host or a long GC pause looks from outside. */
    public synchronized void pause(String name) throws IOException, InterruptedException {
        signal(name, "STOP");
        Node n = nodes.get(name);
        nodes.put(name, new Node(n.command, n.process, true));
    }

    public synchronized void resume(String name) throws IOException, InterruptedException {
        signal(name, "CONT");
        Node n = nodes.get(name);
        nodes.put(name, new Node(n.command, n.process, false));
    }

    private void signal(String name, String sig) throws IOException, InterruptedException {
        Process kill = new ProcessBuilder("kill", "-" + sig, String.valueOf(nodes.get(name).process.pid())).redirectErrorStream(true).start();
        if (!kill.waitFor(STOP_WAIT_SECONDS, TimeUnit.SECONDS) || kill.exitValue() != 0) {
            throw new IOException("kill -" + sig + " of " + name + " failed: " + new String(kill.getInputStream().readAllBytes()).strip());
        }
    }

    public Path log(String name) { return logs.resolve(name + ".log"); }

    /** How many of a dead node's last log lines a report quotes (a CI run keeps only the report, not the logs). */
    static final int QUOTED_LOG_LINES = 4;

    /** The node's last few log lines, joined for a one-line report; empty if it has no log. */
    public String logTail(String name) {
        try {
            List<String> lines = Files.readAllLines(log(name), java.nio.charset.StandardCharsets.UTF_8);
            return String.join(" | ", lines.subList(Math.max(0, lines.size() - QUOTED_LOG_LINES), lines.size()));
        } catch (IOException | RuntimeException e) {
            return "";
        }
    }

    @Override public synchronized void close() {
        for (Map.Entry<String, Node> e : nodes.entrySet()) {
            if (e.getValue().paused) {
                try {
                    signal(e.getKey(), "CONT");
                } catch (IOException | InterruptedException ignored) {
                    // it is destroyed below either way
                }
            }
            e.getValue().process.destroy();
        }
        for (Node n : nodes.values()) {
            try {
                if (!n.process.waitFor(STOP_WAIT_SECONDS, TimeUnit.SECONDS)) n.process.destroyForcibly();
            } catch (InterruptedException ie) {
                Thread.currentThread().interrupt();
                n.process.destroyForcibly();
            }
        }
    }
}
