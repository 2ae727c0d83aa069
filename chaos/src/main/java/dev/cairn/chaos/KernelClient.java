package dev.cairn.chaos;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

/**
 * The Linux kernel's NFS client as a chaos workload: {@code nfs-vm} (the shared tools beside the repository, or
 * {@code $CAIRN_NFS_VM}) boots Debian's kernel in QEMU, mounts the gateway (from 127.0.0.1, which QEMU's user
 * network makes every guest connection come from) and runs {@code chaos/kernel-writer.sh}, which copies source
 * files to the mount, each fsynced, until its time is up and then reads them back. Each line the VM prints reaches
 * {@code lines} as nfs-vm passes it on (the guest's console comes through when the VM ends). Root only (nfs-vm
 * installs packages and runs QEMU as root).
 */
final class KernelClient implements AutoCloseable {
    /** The guest's memory: the source files are in its initramfs. */
    static final int GUEST_MEMORY_MB = 512;
    /** How long the VM may take to boot and mount before the run gives up (emulated, a boot takes ~10–30 s). */
    static final long READY_BOUND_SECONDS = 180;
    /** After the guest's writing time: its last copy (perhaps stalled behind a restarting gateway), the read-back and shutdown. */
    static final long FINISH_BOUND_SECONDS = 300;

    private final Process process;
    private final Thread reader;

    private KernelClient(Process process, Thread reader) {
        this.process = process;
        this.reader = reader;
    }

    /** nfs-vm, or null where it cannot be found. */
    static Path findNfsVm() {
        String env = System.getenv("CAIRN_NFS_VM");
        if (env != null && !env.isEmpty()) return Files.isExecutable(Path.of(env)) ? Path.of(env) : null;
        for (Path p = Path.of("").toAbsolutePath(); p != null; p = p.getParent()) {
            Path candidate = p.resolve("shared").resolve("tools").resolve("nfs-vm");
            if (Files.isExecutable(candidate)) return candidate;
        }
        return null;
    }

    /** Why this process cannot run the kernel client, or null if it can. */
    static String unavailable() {
        if (findNfsVm() == null) return "nfs-vm (the shared tools' kernel NFS client in QEMU) not found: set CAIRN_NFS_VM or keep shared/tools/nfs-vm beside the repository";
        if (!"root".equals(System.getProperty("user.name"))) return "nfs-vm runs as root only";
        return null;
    }

    /**
     * Boots the VM against the gateway at 127.0.0.1:{@code port} and starts the guest: it writes under {@code dir} of the
     * export for {@code seconds}, copying {@code sources} (the files {@code f0..} of {@code sourceDir}) in turn.
     * {@code log} gets every line the VM prints; {@code lines} those of the guest script.
     */
    static KernelClient start(int port, String dir, long seconds, Path sourceDir, int sources, Path work, Consumer<String> lines) throws IOException {
        Path vm = findNfsVm();
        if (vm == null) throw new IOException(unavailable());
        Path script = work.resolve("kernel-writer.sh");
        try (InputStream in = KernelClient.class.getResourceAsStream("/chaos/kernel-writer.sh")) {
            if (in == null) throw new IOException("chaos/kernel-writer.sh is missing from the jar");
            Files.write(script, in.readAllBytes());
        }
        List<String> cmd = new ArrayList<>(List.of(vm.toString(), "--server-port", String.valueOf(port), "--export", "/", "--vers", "4.2",
                "--mem", String.valueOf(GUEST_MEMORY_MB), "--include", sourceDir + ":/opt/chaos-src",
                "--timeout", String.valueOf(READY_BOUND_SECONDS + seconds + FINISH_BOUND_SECONDS),
                "--script", script.toString(), "--", dir, String.valueOf(seconds), String.valueOf(sources)));
        Path log = work.resolve("logs").resolve("kernel-client.log");
        Files.createDirectories(log.getParent());
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).redirectInput(ProcessBuilder.Redirect.from(new java.io.File("/dev/null"))).start();
        Thread t = new Thread(() -> {
            try (BufferedReader r = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8));
                 var out = Files.newBufferedWriter(log)) {
                for (String line; (line = r.readLine()) != null; ) {
                    out.write(line);
                    out.newLine();
                    out.flush();
                    lines.accept(line.strip());
                }
            } catch (IOException e) {
                lines.accept("failed the VM's output: " + e.getMessage());
            }
        }, "chaos-kernel-client");
        t.setDaemon(true);
        t.start();
        return new KernelClient(p, t);
    }

    boolean running() { return process.isAlive(); }

    /** Waits for the VM to end (its output read to the end); its exit status, or -1 if it did not end in time (it is then killed). */
    int await(long seconds) throws InterruptedException {
        if (!process.waitFor(seconds, TimeUnit.SECONDS)) {
            stop();
            return -1;
        }
        reader.join(10_000);
        return process.exitValue();
    }

    @Override public void close() throws InterruptedException {
        if (process.isAlive()) stop();
        reader.join(10_000);
    }

    /** SIGTERM first: nfs-vm's trap then stops QEMU, which a SIGKILL of the script would leave running. */
    private void stop() throws InterruptedException {
        process.destroy();
        if (!process.waitFor(STOP_BOUND_SECONDS, TimeUnit.SECONDS)) process.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
    }

    /** How long nfs-vm has to stop its VM after a SIGTERM. */
    static final long STOP_BOUND_SECONDS = 15;
}
