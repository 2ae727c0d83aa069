package dev.cairn.cli;

import java.io.ByteArrayOutputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.io.PrintStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.MessageDigest;
import java.security.SecureRandom;
import java.util.HexFormat;
import java.util.List;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * A resident CLI for one-shot client commands: a JVM started once (by {@code ./cairn}, in the caller's directory and
 * environment, which the launcher keys agents by), that runs {@code put}, {@code get}, {@code ls}… as the same
 * command would in a JVM of its own, so a command costs the command, not a JVM start and class loading (1.2–1.4 s).
 *
 * <p>Protocol (loopback only; {@code build-support/agent-client.sh} is the client): the caller sends, each ending in a
 * NUL byte, the token from {@code DIR/token} (a file only its owner can read), a request id, the number of arguments
 * and the arguments. The command's standard output comes back on the connection, as it is written; its standard
 * error and then its exit status go to {@code DIR/ID.err} and {@code DIR/ID.rc} (the status file last, by rename),
 * before the connection is closed; {@code ID.err} exists from the moment the command starts, so a caller that finds
 * neither knows it never ran (a stale port, a refused token) and may run it itself. One command at a time (standard output and error are the process's); callers
 * queue. After {@link #idleMillis} without a request the agent removes its port file and exits.
 */
final class Agent {
    /** The commands an agent runs: one-shot clients. Servers, simulations and chaos runs get a JVM of their own. */
    static final Set<String> COMMANDS = Set.of("put", "get", "ls", "mkdir", "rm", "xattr", "status", "fileinfo", "fsck", "drain", "setclass", "masters");
    /** Request bounds: a caller that sends more is refused (and can always run the command in a JVM of its own). */
    static final int MAX_ARGS = 256, MAX_FIELD_BYTES = 64 << 10;
    /** How long a caller has to send its request once connected. */
    static final int REQUEST_TIMEOUT_MILLIS = 10_000;
    static final Pattern REQUEST_ID = Pattern.compile("[0-9A-Za-z._-]{1,64}");

    private final Path dir;
    private final long idleMillis;
    private final byte[] token;
    private final ServerSocket server;

    private Agent(Path dir, long idleMillis) throws IOException {
        this.dir = dir;
        this.idleMillis = idleMillis;
        Files.createDirectories(dir);
        setPermissions(dir, "rwx------");
        byte[] secret = new byte[16];
        new SecureRandom().nextBytes(secret);
        this.token = HexFormat.of().formatHex(secret).getBytes(StandardCharsets.US_ASCII);
        this.server = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
        // the token before the port: a caller that finds the port finds the token
        writePrivate(dir.resolve("token"), token);
        writePrivate(dir.resolve("port"), String.valueOf(server.getLocalPort()).getBytes(StandardCharsets.US_ASCII));
        Files.deleteIfExists(dir.resolve(STARTING)); // the launcher's mark that an agent is on its way
    }

    /** A directory the launcher makes while it starts an agent, so that callers at the same moment start one only. */
    static final String STARTING = "starting";

    /** Starts an agent on {@code dir} (its token, port and request files); {@link #serve} then answers requests. */
    static Agent open(Path dir, long idleMillis) throws IOException { return new Agent(dir, idleMillis); }

    int port() { return server.getLocalPort(); }

    /** Answers requests until {@link #idleMillis} pass without one; then removes the port file and returns. */
    void serve() throws IOException {
        try (server) {
            server.setSoTimeout((int) Math.min(Integer.MAX_VALUE, idleMillis));
            while (true) {
                Socket s;
                try {
                    s = server.accept();
                } catch (SocketTimeoutException idle) {
                    return;
                }
                try (s) {
                    answer(s);
                } catch (IOException | RuntimeException e) {
                    System.err.println("cairn agent: a request failed: " + e);
                }
            }
        } finally {
            Files.deleteIfExists(dir.resolve("port"));
        }
    }

    /** Request files older than this are a caller's that gave up reading (`| head`) before the status came: removed. */
    static final long LEFTOVER_MILLIS = 60_000;

    private void removeLeftovers() throws IOException {
        long before = System.currentTimeMillis() - LEFTOVER_MILLIS;
        try (var files = Files.list(dir)) {
            for (Path f : files.toList()) {
                String name = f.getFileName().toString();
                if ((name.endsWith(".rc") || name.endsWith(".err")) && Files.getLastModifiedTime(f).toMillis() < before) Files.deleteIfExists(f);
            }
        }
    }

    private void answer(Socket s) throws IOException {
        removeLeftovers();
        s.setSoTimeout(REQUEST_TIMEOUT_MILLIS);
        InputStream in = s.getInputStream();
        byte[] given = field(in);
        if (!MessageDigest.isEqual(given, token)) return; // not our owner: nothing said, nothing run
        String id = new String(field(in), StandardCharsets.UTF_8);
        if (!REQUEST_ID.matcher(id).matches()) return;
        int n;
        try {
            n = Integer.parseInt(new String(field(in), StandardCharsets.US_ASCII));
        } catch (NumberFormatException e) {
            return;
        }
        if (n < 0 || n > MAX_ARGS) return;
        String[] args = new String[n];
        for (int i = 0; i < n; i++) args[i] = new String(field(in), StandardCharsets.UTF_8);
        // the command starts: from here on the caller must not run it again itself, whatever happens to this agent
        writePrivate(dir.resolve(id + ".err"), new byte[0]);
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        int rc;
        PrintStream out = new PrintStream(s.getOutputStream(), true, StandardCharsets.UTF_8);
        if (n == 0 || !COMMANDS.contains(args[0]) || List.of(args).contains("--watch")) {
            err.writeBytes(("cairn agent: '" + (n == 0 ? "" : args[0]) + "' is not run by the agent\n").getBytes(StandardCharsets.UTF_8));
            rc = Main.EXIT_USAGE;
        } else {
            rc = run(args, out, new PrintStream(err, true, StandardCharsets.UTF_8));
        }
        out.flush();
        writePrivate(dir.resolve(id + ".err"), err.toByteArray());
        writePrivate(dir.resolve(id + ".rc"), (rc + "\n").getBytes(StandardCharsets.US_ASCII));
    }

    /** Runs one command with the process's standard output and error taken by {@code out} and {@code err}. */
    private static int run(String[] args, PrintStream out, PrintStream err) {
        PrintStream stdout = System.out, stderr = System.err;
        System.setOut(out);
        System.setErr(err);
        try {
            return Main.run(args);
        } catch (RuntimeException | Error e) {
            err.println("cairn: " + e);
            return 1;
        } finally {
            System.out.flush();
            System.err.flush();
            System.setOut(stdout);
            System.setErr(stderr);
        }
    }

    /** One NUL-terminated field, of at most {@link #MAX_FIELD_BYTES}. */
    private static byte[] field(InputStream in) throws IOException {
        ByteArrayOutputStream b = new ByteArrayOutputStream();
        while (true) {
            int c = in.read();
            if (c < 0) throw new EOFException("the request ended early");
            if (c == 0) return b.toByteArray();
            if (b.size() >= MAX_FIELD_BYTES) throw new IOException("a request field longer than " + MAX_FIELD_BYTES + " bytes");
            b.write(c);
        }
    }

    /** Written under a temporary name readable by its owner only, then renamed into place. */
    private static void writePrivate(Path f, byte[] data) throws IOException {
        Path tmp = f.resolveSibling(f.getFileName() + ".tmp");
        Files.write(tmp, data);
        setPermissions(tmp, "rw-------");
        Files.move(tmp, f, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
    }

    private static void setPermissions(Path p, String perms) throws IOException {
        try {
            Files.setPosixFilePermissions(p, PosixFilePermissions.fromString(perms));
        } catch (UnsupportedOperationException e) {
            // not a POSIX filesystem: the token is as private as the directory
        }
    }
}
