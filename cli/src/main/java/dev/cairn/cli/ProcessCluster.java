package dev.cairn.cli;

import dev.cairn.core.env.Address;
import java.io.File;
import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.net.URISyntaxException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * A local cluster of real processes: one master and N chunkservers, each its own JVM running this jar
 * ({@code cairn master} / {@code cairn chunkserver}), logging to {@code DATA/logs/NAME.log}. A process
 * that dies is reported with the command that starts it again; it is not restarted behind the operator's
 * back (a chunkserver that stays away is exactly what the planner must repair).
 */
final class ProcessCluster implements AutoCloseable {
    /** How often each node's JVM hands freed native memory back (glibc's malloc_trim). */
    static final int TRIM_NATIVE_HEAP_MILLIS = 1000;
    /**
     * Heap caps by role: the daemons are meant to stay small. A chunkserver holds only writes and reads in
     * flight; the master its namespace cache; the gateway its write-behind, erasure-coded images (a whole chunk
     * each) and calls in flight, which it sizes to its heap ({@code ClusterFs.Memory.forHeap}; the defaults at
     * 512 MiB). Replicated files alone ran as fast at 160 MiB and half the bounds (~232 MiB resident against ~350),
     * but an erasure-coded file's images ran out of memory below 512 (docs/benchmarks.md, tenth stop).
     */
    static final String MASTER_HEAP = "-Xmx512m", CHUNKSERVER_HEAP = "-Xmx256m", GATEWAY_HEAP = "-Xmx512m";
    /**
     * The serial collector and a small initial heap: the JVM's default (G1, an initial heap of 1/64 of the
     * machine's memory) let an idle chunkserver's resident set grow to 400 MB; with these it stays near
     * 120-140 MB under load (./cairn bench nfs, docs/benchmarks.md), at the same throughput on two cores.
     * The native heap is trimmed every second: what C2's compilations and netty's threads freed goes back to the
     * system instead of staying in glibc's arenas (peak RSS 5-10 % lower, same throughput; 2026-11-29 in
     * docs/benchmarks.md). The flag is experimental in 17 (from 17.0.9) and product from 22; a JVM without it
     * ignores it rather than failing to start.
     */
    static final List<String> MEMORY_FLAGS = List.of("-XX:+UseSerialGC", "-Xms16m", "-XX:+UnlockExperimentalVMOptions",
            "-XX:+IgnoreUnrecognizedVMOptions", "-XX:TrimNativeHeapInterval=" + TRIM_NATIVE_HEAP_MILLIS);
    static final long STOP_WAIT_SECONDS = 10;

    record Child(String name, List<String> command, Process process) {}

    private final Path data;
    private final Path keyFile;
    private final List<Child> children = new ArrayList<>();

    /** A cluster in {@code data}, whose nodes share the key in {@code keyFile} (made by {@link UpCommand}). */
    ProcessCluster(Path data, Path keyFile) {
        this.data = data;
        this.keyFile = keyFile;
    }

    static List<String> javaCommand(String heap) {
        String java = ProcessHandle.current().info().command().orElse("java");
        String jar;
        try {
            jar = new File(UpCommand.class.getProtectionDomain().getCodeSource().getLocation().toURI()).getPath();
        } catch (URISyntaxException e) {
            throw new IllegalStateException("cannot locate the cairn jar", e);
        }
        List<String> cmd = new ArrayList<>();
        cmd.add(java);
        for (String arg : ManagementFactory.getRuntimeMXBean().getInputArguments()) {
            if (!arg.startsWith("-Xmx") && !arg.startsWith("-Xms") && !arg.startsWith("-agentlib") && !MEMORY_FLAGS.contains(arg)) cmd.add(arg);
        }
        cmd.addAll(MEMORY_FLAGS);
        cmd.add(heap);
        cmd.add("-jar");
        cmd.add(jar);
        return cmd;
    }

    void startMaster(Address listen, Address metrics) throws IOException {
        start("master", MASTER_HEAP, withMetrics(metrics, "master", "--listen", listen.toString(), "--data", data.resolve("master").toString()));
    }

    /** A node's arguments, with {@code --metrics} when {@code metrics} is given. */
    private static List<String> withMetrics(Address metrics, String... args) {
        List<String> out = new ArrayList<>(List.of(args));
        if (metrics != null) out.addAll(List.of("--metrics", metrics.toString()));
        return out;
    }

    /** Master {@code n} (from 1) of the group at {@code group}, in its own directory {@code master<n>}. */
    void startGroupMaster(int n, List<Address> group, Address metrics) throws IOException {
        start("master" + n, MASTER_HEAP, withMetrics(metrics, "master", "--listen", group.get(n - 1).toString(), "--peers", join(group),
                "--data", data.resolve("master" + n).toString()));
    }

    static String join(List<Address> addresses) {
        return String.join(",", addresses.stream().map(Address::toString).toList());
    }

    /** A chunkserver with {@code disks} data directories (disk0, disk1, ...) under its own directory. */
    void startChunkserver(String id, Address listen, List<Address> masters, int disks, Address metrics) throws IOException {
        List<String> names = new ArrayList<>();
        for (int d = 0; d < disks; d++) names.add("disk" + d);
        start(id, CHUNKSERVER_HEAP, withMetrics(metrics, "chunkserver", "--id", id, "--listen", listen.toString(), "--master", join(masters),
                "--data", data.resolve(id).toString(), "--volume", String.join(",", names)));
    }

    /** An NFS gateway of the master at {@code master}, serving on {@code listen}. */
    void startNfs(Address listen, List<Address> masters, String exports, Address metrics) throws IOException {
        start("nfs", GATEWAY_HEAP, withMetrics(metrics, "nfs", "--listen", listen.toString(), "--master", join(masters), "--exports", exports,
                "--data", data.resolve("nfs").toString())); // its client records live with the cluster's data, not in the working directory
    }

    private void start(String name, String heap, List<String> nodeArgs) throws IOException {
        Path logs = data.resolve("logs");
        Files.createDirectories(logs);
        List<String> args = new ArrayList<>(nodeArgs);
        args.addAll(List.of("--key-file", keyFile.toString()));
        List<String> cmd = new ArrayList<>(javaCommand(heap));
        cmd.addAll(args);
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.appendTo(logs.resolve(name + ".log").toFile())).start();
        Child c = new Child(name, cmd, p);
        children.add(c);
        p.onExit().thenAccept(x -> {
            if (!closing) {
                System.out.println("cairn: " + name + " (pid " + x.pid() + ") exited with status " + x.exitValue()
                        + "; log: " + logs.resolve(name + ".log") + "; start it again with:");
                System.out.println("  " + restartCommand(heap, args));
            }
        });
    }

    private volatile boolean closing;

    List<Child> children() { return children; }

    /**
     * The command that starts a process again as this cluster started it, ready to paste into a shell: its JVM's
     * memory flags through {@code CAIRN_JAVA_OPTS} (which ./cairn passes to the JVM), every argument quoted where
     * a shell would split or expand it (the exports rule has spaces).
     */
    static String restartCommand(String heap, List<String> args) {
        List<String> jvm = new ArrayList<>(MEMORY_FLAGS);
        jvm.add(heap);
        StringBuilder b = new StringBuilder("CAIRN_JAVA_OPTS=").append(shellQuote(String.join(" ", jvm))).append(" ./cairn");
        for (String a : args) b.append(' ').append(shellQuote(a));
        return b.toString();
    }

    /** {@code s} as one shell word: as it is if it has nothing a shell treats specially, else in single quotes. */
    static String shellQuote(String s) {
        if (!s.isEmpty() && s.matches("[A-Za-z0-9_./:=,@%+-]+")) return s;
        return "'" + s.replace("'", "'\\''") + "'";
    }

    @Override public void close() {
        closing = true;
        for (Child c : children) c.process().destroy(); // SIGTERM: each closes its stores cleanly
        for (Child c : children) {
            try {
                if (!c.process().waitFor(STOP_WAIT_SECONDS, TimeUnit.SECONDS)) c.process().destroyForcibly();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                c.process().destroyForcibly();
            }
        }
    }
}
