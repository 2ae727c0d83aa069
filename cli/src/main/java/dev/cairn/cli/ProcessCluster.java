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
    /** Heap per process: the daemons are meant to stay small. */
    static final String HEAP = "-Xmx512m";
    static final long STOP_WAIT_SECONDS = 10;

    record Child(String name, List<String> command, Process process) {}

    private final Path data;
    private final List<Child> children = new ArrayList<>();

    ProcessCluster(Path data) { this.data = data; }

    static List<String> javaCommand() {
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
            if (!arg.startsWith("-Xmx") && !arg.startsWith("-agentlib")) cmd.add(arg);
        }
        cmd.add(HEAP);
        cmd.add("-jar");
        cmd.add(jar);
        return cmd;
    }

    void startMaster(Address listen) throws IOException {
        start("master", List.of("master", "--listen", listen.toString(), "--data", data.resolve("master").toString()));
    }

    /** A chunkserver with {@code disks} data directories (disk0, disk1, ...) under its own directory. */
    void startChunkserver(String id, Address listen, Address master, int disks) throws IOException {
        List<String> names = new ArrayList<>();
        for (int d = 0; d < disks; d++) names.add("disk" + d);
        start(id, List.of("chunkserver", "--id", id, "--listen", listen.toString(), "--master", master.toString(),
                "--data", data.resolve(id).toString(), "--volume", String.join(",", names)));
    }

    /** An NFS gateway of the master at {@code master}, serving on {@code listen}. */
    void startNfs(Address listen, Address master, String exports) throws IOException {
        start("nfs", List.of("nfs", "--listen", listen.toString(), "--master", master.toString(), "--exports", exports));
    }

    private void start(String name, List<String> args) throws IOException {
        Path logs = data.resolve("logs");
        Files.createDirectories(logs);
        List<String> cmd = new ArrayList<>(javaCommand());
        cmd.addAll(args);
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.appendTo(logs.resolve(name + ".log").toFile())).start();
        Child c = new Child(name, cmd, p);
        children.add(c);
        p.onExit().thenAccept(x -> {
            if (!closing) {
                System.out.println("cairn: " + name + " (pid " + x.pid() + ") exited with status " + x.exitValue()
                        + "; log: " + logs.resolve(name + ".log") + "; start it again with:");
                System.out.println("  " + String.join(" ", quoted(args)));
            }
        });
    }

    private volatile boolean closing;

    List<Child> children() { return children; }

    private static List<String> quoted(List<String> args) {
        List<String> out = new ArrayList<>();
        out.add("./cairn");
        out.addAll(args);
        return out;
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
