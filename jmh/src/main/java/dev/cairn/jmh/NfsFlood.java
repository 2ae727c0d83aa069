package dev.cairn.jmh;

import dev.cairn.chaos.RealClient;
import dev.cairn.nfs.client.Nfs4Client;
import java.io.BufferedInputStream;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.TreeMap;
import java.util.concurrent.ExecutorService;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.concurrent.Executors;
import java.util.stream.Stream;

/**
 * A hostile NFS client against the gateway's memory: {@code CONNECTIONS} connections each pipeline {@code READS}
 * READs of 1 MiB (NFSv4.0, anonymous stateid) and read no reply for 30 s; then every reply is read, connection
 * after connection. Prints the gateway's resident set while the replies are not read, its heap after a full GC,
 * and how many READs were answered NFS4_OK. Run with {@code ./cairn bench nfs-flood [CONNECTIONS [READS]]}.
 */
public final class NfsFlood {
    static final int MIB = 1 << 20;
    static final int PROC_COMPOUND = 1, OP_PUTROOTFH = 24, OP_LOOKUP = 15, OP_READ = 25;
    static final int UNREAD_SECONDS = 30;

    public static void main(String[] args) throws Exception {
        int connections = args.length > 0 ? Integer.parseInt(args[0]) : 10;
        int reads = args.length > 1 ? Integer.parseInt(args[1]) : 500;
        if (connections < 1 || connections > 1000 || reads < 1 || reads > 100_000) throw new IllegalArgumentException("usage: bench nfs-flood [CONNECTIONS [READS]]");
        String jar = System.getProperty("cairn.jar");
        if (jar == null || !Files.isRegularFile(Path.of(jar))) throw new IllegalStateException("-Dcairn.jar=PATH to the cairn jar is needed (./cairn bench nfs-flood sets it)");
        Path root = Files.createTempDirectory("cairn-bench-flood");
        ExecutorService loop = Executors.newSingleThreadExecutor();
        NfsBench.Processes procs = new NfsBench.Processes(root, jar);
        try {
            NfsBench.Processes.Cluster cluster = procs.startCluster();
            int nfsPort = cluster.nfsPort();
            try (RealClient admin = procs.client(java.util.List.of(cluster.master()), RealClient.CALL_TIMEOUT_SECONDS)) {
                NfsBench.awaitReady(admin, nfsPort);
            }
            // a 4 MiB file to read, written over NFS
            try (dev.cairn.chaos.NfsTcpChannel ch = new dev.cairn.chaos.NfsTcpChannel("127.0.0.1", nfsPort, loop)) {
                Nfs4Client c = new Nfs4Client(ch, 0, 0, "flood-setup");
                NfsBench.call(loop, c::connect);
                byte[] rootFh = NfsBench.call(loop, () -> c.lookup("/"));
                Nfs4Client.OpenFile f = NfsBench.call(loop, () -> c.open(rootFh, "blob", true));
                byte[] mib = new byte[MIB];
                new SplittableRandom(7).nextBytes(mib);
                for (int i = 0; i < 4; i++) {
                    long off = (long) i * MIB;
                    NfsBench.call(loop, () -> c.write(f, off, mib, 2));
                }
                NfsBench.call(loop, () -> c.close(f));
            }
            long pid = procs.pid("nfs");
            System.out.printf(Locale.ROOT, "gateway before: RSS %d MiB%n", rssMib(pid));
            List<Socket> sockets = new ArrayList<>();
            for (int c = 0; c < connections; c++) {
                Socket s = new Socket("127.0.0.1", nfsPort);
                sockets.add(s);
                ByteArrayOutputStream all = new ByteArrayOutputStream();
                for (int i = 0; i < reads; i++) all.write(readCall(c * reads + i, "blob"));
                s.getOutputStream().write(all.toByteArray());
                s.getOutputStream().flush();
            }
            System.out.printf(Locale.ROOT, "sent %d READs of 1 MiB on %d connections; reading none of the replies for %d s%n", connections * reads, connections, UNREAD_SECONDS);
            long peak = 0;
            for (int t = 0; t < UNREAD_SECONDS; t++) {
                Thread.sleep(1000);
                peak = Math.max(peak, rssMib(pid));
            }
            System.out.printf(Locale.ROOT, "gateway while not read: RSS %d MiB (peak), heap after a full GC %s%n", peak, heapAfterGc(pid));
            Map<Integer, Integer> statuses = new TreeMap<>();
            long bytes = 0;
            for (Socket s : sockets) {
                DataInputStream in = new DataInputStream(new BufferedInputStream(s.getInputStream(), 1 << 16));
                for (int i = 0; i < reads; i++) {
                    byte[] r = new byte[in.readInt() & 0x7fff_ffff];
                    in.readFully(r);
                    bytes += r.length;
                    DataInputStream rd = new DataInputStream(new java.io.ByteArrayInputStream(r));
                    rd.skipNBytes(24); // xid, REPLY, MSG_ACCEPTED, verifier, SUCCESS
                    statuses.merge(rd.readInt(), 1, Integer::sum);
                }
                s.close();
            }
            System.out.printf(Locale.ROOT, "read every reply: %d MiB; COMPOUND statuses %s (0 is NFS4_OK); gateway RSS %d MiB, peak %d MiB%n",
                    bytes / MIB, statuses, rssMib(pid), procs.peakRssMib().get("nfs"));
        } finally {
            procs.close();
            loop.shutdownNow();
            try (Stream<Path> all = Files.walk(root)) {
                all.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
            }
        }
    }

    /** A framed COMPOUND (4.0, AUTH_NONE): PUTROOTFH, LOOKUP name, READ 1 MiB at 0 with the anonymous stateid. */
    static byte[] readCall(int xid, String name) throws IOException {
        ByteArrayOutputStream b = new ByteArrayOutputStream();
        DataOutputStream d = new DataOutputStream(b);
        d.writeInt(xid);
        d.writeInt(0); // CALL
        d.writeInt(2); // RPC version
        d.writeInt(100003);
        d.writeInt(4);
        d.writeInt(PROC_COMPOUND);
        d.writeLong(0); // AUTH_NONE credential
        d.writeLong(0); // AUTH_NONE verifier
        d.writeInt(0); // tag ""
        d.writeInt(0); // minor version 0
        d.writeInt(3);
        d.writeInt(OP_PUTROOTFH);
        d.writeInt(OP_LOOKUP);
        byte[] n = name.getBytes(StandardCharsets.UTF_8);
        d.writeInt(n.length);
        d.write(n);
        d.write(new byte[(4 - n.length % 4) % 4]);
        d.writeInt(OP_READ);
        d.write(new byte[16]); // the anonymous stateid
        d.writeLong(0);
        d.writeInt(MIB);
        byte[] body = b.toByteArray();
        ByteArrayOutputStream framed = new ByteArrayOutputStream(body.length + 4);
        new DataOutputStream(framed).writeInt(0x8000_0000 | body.length);
        framed.write(body);
        return framed.toByteArray();
    }

    static long rssMib(long pid) throws IOException {
        for (String line : Files.readAllLines(Path.of("/proc", String.valueOf(pid), "status"))) {
            if (line.startsWith("VmRSS:")) return Long.parseLong(line.replaceAll("[^0-9]", "")) / 1024;
        }
        return -1;
    }

    /** The gateway's heap in use after a full GC (the generations' "used"), from the JDK's jcmd beside this java. */
    static String heapAfterGc(long pid) throws Exception {
        Path javaBin = Path.of(ProcessHandle.current().info().command().orElse("java"));
        String jcmd = javaBin.getParent() == null ? "jcmd" : javaBin.getParent().resolve("jcmd").toString();
        new ProcessBuilder(jcmd, String.valueOf(pid), "GC.run").redirectErrorStream(true).start().waitFor();
        Process p = new ProcessBuilder(jcmd, String.valueOf(pid), "GC.heap_info").redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        p.waitFor();
        Matcher g = Pattern.compile("(?m)^\\s*(def new generation|tenured generation|garbage-first heap|PSYoungGen|ParOldGen)\\s+total \\d+K, used (\\d+)K").matcher(out);
        long usedKib = 0;
        boolean any = false;
        while (g.find()) {
            usedKib += Long.parseLong(g.group(2));
            any = true;
        }
        return any ? usedKib / 1024 + " MiB" : "(not known: jcmd said " + out.strip().lines().findFirst().orElse("nothing") + ")";
    }
}
