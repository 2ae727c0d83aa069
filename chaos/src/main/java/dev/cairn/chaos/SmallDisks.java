package dev.cairn.chaos;

import java.io.IOException;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * A filesystem of its own for each chunkserver of a chaos run, small enough to fill: a tmpfs of a given size
 * mounted on the chunkserver's data directory (so the run must be root), and a filler file that takes every free
 * byte of one until it is emptied again. The chunkserver meets real ENOSPC from its writes, fsyncs and renames,
 * and real free space again afterwards (what {@code statvfs} says, which it reopens the disk by).
 */
final class SmallDisks implements AutoCloseable {
    /** The file that takes a disk's free space while it is "full". */
    static final String FILLER = ".chaos-filler";
    static final long COMMAND_SECONDS = 30;
    private static final byte[] ZEROS = new byte[1 << 20];

    private final Path root;
    private final List<Path> mounted = new ArrayList<>();

    private SmallDisks(Path root) { this.root = root; }

    /**
     * Whether this process may mount a tmpfs (root, and allowed to mount: a container without the capability is
     * not): tried on a scratch directory of 1 MiB and unmounted again.
     */
    static boolean available() {
        if (!"root".equals(System.getProperty("user.name"))) return false;
        Path probe = null;
        try {
            probe = Files.createTempDirectory("cairn-tmpfs-probe");
            run("mount", "-t", "tmpfs", "-o", "size=1m", "cairn-chaos-probe", probe.toString());
            run("umount", probe.toString());
            return true;
        } catch (IOException | InterruptedException | RuntimeException e) {
            return false;
        } finally {
            try {
                if (probe != null) Files.deleteIfExists(probe);
            } catch (IOException e) {
                // a scratch directory left in the temporary directory
            }
        }
    }

    /** Mounts a tmpfs of {@code bytes} on {@code root/NAME} for each chunkserver name. */
    static SmallDisks mount(Path root, List<String> chunkservers, long bytes) throws IOException, InterruptedException {
        if (!"root".equals(System.getProperty("user.name"))) {
            throw new IllegalStateException("the disk-full scenario mounts a small filesystem (tmpfs) per chunkserver: run it as root");
        }
        SmallDisks d = new SmallDisks(root);
        try {
            for (String cs : chunkservers) {
                Path dir = root.resolve(cs);
                Files.createDirectories(dir);
                run("mount", "-t", "tmpfs", "-o", "size=" + bytes + ",mode=0755", "cairn-chaos-" + cs, dir.toString());
                d.mounted.add(dir);
            }
        } catch (IOException | InterruptedException | RuntimeException e) {
            d.close();
            throw e;
        }
        return d;
    }

    /** Takes every free byte of {@code chunkserver}'s filesystem; returns how many that was. */
    long fill(String chunkserver) throws IOException {
        // never the machine's own disk: only a filesystem this run mounted
        if (!mounted.contains(root.resolve(chunkserver))) throw new IllegalStateException(chunkserver + " has no small filesystem of its own to fill");
        Path filler = root.resolve(chunkserver).resolve(FILLER);
        long n = 0;
        try (OutputStream out = Files.newOutputStream(filler)) {
            while (true) {
                out.write(ZEROS);
                n += ZEROS.length;
            }
        } catch (IOException e) {
            if (!e.getMessage().contains("No space left")) throw e; // ENOSPC is the point; anything else is not
        }
        return n;
    }

    /** Gives {@code chunkserver}'s filesystem its space back. */
    void empty(String chunkserver) throws IOException {
        Files.deleteIfExists(root.resolve(chunkserver).resolve(FILLER));
    }

    /** Unmounts every filesystem mounted (lazily: a node process still running lets go when it exits). */
    @Override public void close() {
        for (Path dir : mounted) {
            try {
                run("umount", "-l", dir.toString());
            } catch (IOException | InterruptedException | RuntimeException e) {
                System.err.println("chaos: could not unmount " + dir + ": " + e.getMessage());
            }
        }
        mounted.clear();
    }

    private static void run(String... cmd) throws IOException, InterruptedException {
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes());
        if (!p.waitFor(COMMAND_SECONDS, TimeUnit.SECONDS) || p.exitValue() != 0) {
            throw new IOException(String.join(" ", cmd) + " failed: " + out.trim());
        }
    }
}
