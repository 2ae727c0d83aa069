package dev.cairn.core.real;

import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashSet;
import java.util.Set;
import java.util.concurrent.ThreadLocalRandom;

/**
 * Free ports on 127.0.0.1 for clusters that tests, chaos runs and benchmarks start on this machine.
 *
 * <p>Why not {@code new ServerSocket(0)}: that hands out a port from the kernel's ephemeral range, the same range
 * every outgoing connection takes its local port from. Between choosing a port and the node process binding it
 * (a JVM start, 1–3 s), any connection made meanwhile (a master dialling a peer, Ratis, a client) may take it,
 * and the node then dies at start with "address in use" (a chaos run in CI lost a chunkserver this way). Ports
 * here come from below the ephemeral range, are checked free by binding them, and are never handed out twice by
 * one process, so two nodes of one cluster cannot be given the same port either.
 */
public final class LoopbackPorts {
    private LoopbackPorts() {}

    /** The lowest port handed out: above the well-known and most registered service ports. */
    static final int LOWEST = 10_000;
    /** Linux's default first ephemeral port, used when {@link #RANGE_FILE} cannot be read. */
    static final int DEFAULT_EPHEMERAL_LOW = 32_768;
    static final Path RANGE_FILE = Path.of("/proc/sys/net/ipv4/ip_local_port_range");
    /** How many random candidates are tried before falling back to a kernel-chosen port. */
    static final int ATTEMPTS = 1_000;

    private static final Set<Integer> GIVEN = new HashSet<>();
    private static final InetAddress LOOPBACK = loopback();

    private static InetAddress loopback() {
        try {
            return InetAddress.getByAddress(new byte[] {127, 0, 0, 1});
        } catch (java.net.UnknownHostException e) {
            throw new AssertionError(e); // four bytes are always a valid address
        }
    }

    /** One free port. */
    public static int take() throws IOException {
        return take(0);
    }

    /**
     * A free port {@code p} such that {@code p + partnerOffset} is free too (a master's Raft port sits at a fixed
     * offset from its client port); both are recorded as given. {@code partnerOffset} 0 means no partner.
     */
    public static synchronized int take(int partnerOffset) throws IOException {
        if (partnerOffset < 0) throw new IllegalArgumentException("partner offset " + partnerOffset + " is negative");
        int high = ephemeralLow() - partnerOffset;
        ThreadLocalRandom random = ThreadLocalRandom.current();
        for (int i = 0; i < ATTEMPTS && high > LOWEST; i++) {
            int p = LOWEST + random.nextInt(high - LOWEST);
            if (usable(p) && (partnerOffset == 0 || usable(p + partnerOffset))) {
                GIVEN.add(p);
                if (partnerOffset != 0) GIVEN.add(p + partnerOffset);
                return p;
            }
        }
        // an odd port range: fall back to the kernel's choice, still never repeating one
        for (int i = 0; i < ATTEMPTS; i++) {
            int p;
            try (ServerSocket s = new ServerSocket(0, 1, LOOPBACK)) {
                p = s.getLocalPort();
            }
            if (!GIVEN.contains(p) && (partnerOffset == 0 || (p + partnerOffset <= 65_535 && usable(p + partnerOffset)))) {
                GIVEN.add(p);
                if (partnerOffset != 0) GIVEN.add(p + partnerOffset);
                return p;
            }
        }
        throw new IOException("no free loopback port found after " + 2 * ATTEMPTS + " tries");
    }

    private static boolean usable(int port) {
        if (GIVEN.contains(port)) return false;
        try (ServerSocket s = new ServerSocket(port, 1, LOOPBACK)) {
            return true;
        } catch (IOException e) {
            return false;
        }
    }

    /** The first port of the kernel's ephemeral range (where outgoing connections take their ports). */
    static int ephemeralLow() {
        try {
            String[] range = Files.readString(RANGE_FILE, StandardCharsets.US_ASCII).trim().split("\\s+");
            return Integer.parseInt(range[0]);
        } catch (IOException | RuntimeException e) {
            return DEFAULT_EPHEMERAL_LOW;
        }
    }
}
