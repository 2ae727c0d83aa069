package dev.cairn.chaos;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * Each node's data directory on a disk that can lose power: {@code cairn-lossyfs} (a FUSE pass-through written for
 * this, {@code chaos/src/main/c/lossyfs.c}) mounted on it over a backing directory beside it. It passes every call
 * through and remembers what is not yet durable by POSIX's rules (a file's data until the file is fsynced, a name
 * until its directory is); {@link #powerLoss} undoes all of that, as a host's power cut would, once its node is
 * dead. {@link #stall} slows every read, write and sync of a disk (a slow or stalled disk); {@link #fail} makes them
 * fail with EIO (a dying disk). Run as root only (it
 * mounts), with {@code /dev/fuse} and the tool built (it needs libfuse3's headers, Debian's {@code libfuse3-dev}).
 */
public final class LossyDisks implements AutoCloseable {
    /** Where the build puts the tool, in the chaos jar. */
    static final String RESOURCE = "/native/linux-x86_64/cairn-lossyfs";
    /** How long one command to the tool may take (a crash of a disk with many unsynced changes takes a while). */
    static final long COMMAND_SECONDS = 60;
    static final String BACKING_SUFFIX = ".backing";

    private record Mount(Process process, OutputStream in, BufferedReader out, Path mountPoint) {}

    private final Path tool;
    private final Map<String, Mount> mounts = new LinkedHashMap<>();

    private final Metadata metadata;

    private LossyDisks(Path tool, Metadata metadata) {
        this.tool = tool;
        this.metadata = metadata;
    }

    /**
     * Why this process cannot run the tool (null when it can): not root, no {@code /dev/fuse}, or the build had no
     * libfuse3 headers. A mount is not tried here: {@link #mount} says what went wrong if one fails.
     */
    public static String unavailable() {
        if (!"root".equals(System.getProperty("user.name"))) return "it mounts a FUSE filesystem per node: run it as root";
        if (!Files.exists(Path.of("/dev/fuse"))) return "this machine has no /dev/fuse";
        if (LossyDisks.class.getResource(RESOURCE) == null) {
            return "cairn-lossyfs was not built (the build needs libfuse3's headers: apt-get install libfuse3-dev; ./cairn installs it as root)";
        }
        return null;
    }

    /**
     * How names (create, rename, unlink) become durable on the lossy disks. {@code STRICT}: POSIX's letter, once
     * their directory is fsynced. {@code JOURNALED}: as on ext4 or XFS, whose metadata is one ordered journal, once
     * anything is synced after them.
     */
    public enum Metadata { STRICT, JOURNALED }

    /** Mounts a lossy disk on {@code root/NAME} for each node name, over {@code root/NAME.backing}. */
    static LossyDisks mount(Path root, List<String> names, Metadata metadata) throws IOException {
        String why = unavailable();
        if (why != null) throw new IllegalStateException("power loss and disk stalls need cairn-lossyfs: " + why);
        Path tool = root.resolve("cairn-lossyfs");
        try (InputStream in = LossyDisks.class.getResourceAsStream(RESOURCE)) {
            Files.copy(in, tool, StandardCopyOption.REPLACE_EXISTING);
        }
        Files.setPosixFilePermissions(tool, PosixFilePermissions.fromString("rwx------"));
        LossyDisks d = new LossyDisks(tool, metadata);
        try {
            for (String n : names) d.mountOne(n, root.resolve(n), root.resolve(n + BACKING_SUFFIX));
        } catch (IOException | RuntimeException e) {
            d.close();
            throw e;
        }
        return d;
    }

    private void mountOne(String name, Path mountPoint, Path backing) throws IOException {
        Files.createDirectories(mountPoint);
        Files.createDirectories(backing);
        Process p = new ProcessBuilder(tool.toString(), backing.toString(), mountPoint.toString(), metadata.name().toLowerCase(java.util.Locale.ROOT))
                .redirectError(ProcessBuilder.Redirect.appendTo(mountPoint.resolveSibling(name + ".lossyfs.log").toFile())).start();
        Mount m = new Mount(p, p.getOutputStream(), new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8)), mountPoint);
        mounts.put(name, m);
        String first = answer(name, m);
        if (!first.startsWith("ok mounted")) throw new IOException("cairn-lossyfs on " + mountPoint + ": " + first);
    }

    /**
     * Power loss of {@code name}'s disk: every change not yet durable is undone. Its node must be dead already
     * ({@code kill -9} first): a process still writing would meet a disk changing under it.
     *
     * @return what the tool undid ("undid N changes, B bytes")
     */
    public synchronized String powerLoss(String name) throws IOException {
        return command(name, "crash").replaceFirst("^ok crash ", "");
    }

    /**
     * Power loss of {@code name}'s disk that tears writes: each write not yet durable is, drawn from {@code seed}, undone,
     * kept whole (the disk had written it from its cache), or kept as a prefix of whole 512-byte sectors with the rest
     * and the file's size undone; names and truncations are undone as by {@link #powerLoss(String)}.
     *
     * @return what the tool did ("undid N changes, B bytes; K writes reached the disk whole, T in part")
     */
    public synchronized String powerLossTearing(String name, long seed) throws IOException {
        return command(name, "crash torn " + Long.toUnsignedString(seed)).replaceFirst("^ok crash ", "");
    }

    /** Delays every read, write and sync of {@code name}'s disk by {@code millis} (0: back to full speed). */
    public synchronized void stall(String name, int millis) throws IOException {
        command(name, "stall " + millis);
    }

    /** From now on every read, write, sync and name change on {@code name}'s disk fails with EIO, or no longer does. */
    public synchronized void fail(String name, boolean failing) throws IOException {
        command(name, failing ? "fail on" : "fail off");
    }

    public synchronized boolean has(String name) { return mounts.containsKey(name); }

    private String command(String name, String line) throws IOException {
        Mount m = mounts.get(name);
        if (m == null) throw new IllegalArgumentException(name + " has no lossy disk");
        m.in.write((line + "\n").getBytes(StandardCharsets.UTF_8));
        m.in.flush();
        String a = answer(name, m);
        if (!a.startsWith("ok")) throw new IOException("cairn-lossyfs of " + name + " refused '" + line + "': " + a);
        return a;
    }

    /** The tool's next line, within {@link #COMMAND_SECONDS}. */
    private static String answer(String name, Mount m) throws IOException {
        CompletableFuture<String> line = CompletableFuture.supplyAsync(() -> {
            try {
                return m.out.readLine();
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        });
        try {
            String s = line.get(COMMAND_SECONDS, TimeUnit.SECONDS);
            if (s == null) throw new IOException("cairn-lossyfs of " + name + " ended (exit " + exit(m.process) + "): see " + name + ".lossyfs.log");
            return s;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException("interrupted waiting for cairn-lossyfs of " + name);
        } catch (java.util.concurrent.ExecutionException | java.util.concurrent.TimeoutException e) {
            throw new IOException("no answer from cairn-lossyfs of " + name + " within " + COMMAND_SECONDS + " s: " + e);
        }
    }

    private static String exit(Process p) {
        try {
            return p.waitFor(1, TimeUnit.SECONDS) ? String.valueOf(p.exitValue()) : "still running";
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return "unknown";
        }
    }

    /** Unmounts every disk (the nodes must be stopped first: a busy mount is detached lazily). */
    @Override public synchronized void close() {
        for (Mount m : mounts.values()) {
            try {
                m.in.write("quit\n".getBytes(StandardCharsets.UTF_8));
                m.in.close();
            } catch (IOException e) {
                // it ended already
            }
        }
        for (Mount m : mounts.values()) {
            try {
                if (!m.process.waitFor(SmallDisks.COMMAND_SECONDS, TimeUnit.SECONDS)) {
                    m.process.destroyForcibly();
                    new ProcessBuilder("umount", "-l", m.mountPoint.toString()).redirectErrorStream(true).start().waitFor(SmallDisks.COMMAND_SECONDS, TimeUnit.SECONDS);
                }
            } catch (IOException | InterruptedException e) {
                m.process.destroyForcibly();
            }
        }
        mounts.clear();
    }
}
