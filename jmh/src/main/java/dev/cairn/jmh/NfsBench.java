package dev.cairn.jmh;

import dev.cairn.chaos.LocalCluster;
import dev.cairn.chaos.LocalGateway;
import dev.cairn.core.async.Promise;
import dev.cairn.nfs.client.Nfs4Client;
import dev.cairn.nfs.client.Nfs4Client.OpenFile;
import java.io.DataInputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.io.RandomAccessFile;
import java.net.Socket;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Comparator;
import java.util.Locale;
import java.util.SplittableRandom;
import java.util.stream.Stream;

/**
 * {@code ./cairn bench nfs}: the NFS gateway against the local disk, one workload after the other, in one
 * run (the machine is shared, so only ratios from one run mean much). A real cluster (master and three
 * chunkservers on loopback, data under a temporary directory) and a gateway; the client is
 * {@link Nfs4Client} over a TCP socket, one request at a time (no pipelining, unlike the kernel client, so
 * this is a latency-bound floor). The local-disk column does the same with FileChannel in the same
 * temporary directory, fsyncing where NFS commits.
 *
 * <p>Workloads: sequential write of SIZE in 1 MiB UNSTABLE WRITEs then COMMIT; sequential read of it in
 * 1 MiB READs; 4 KiB writes at random aligned offsets in it then COMMIT; 4 KiB random reads; FILES small
 * files created (OPEN+CLOSE with a 100-byte FILE_SYNC write), listed, and removed.
 */
public final class NfsBench {
    static final int MIB = 1 << 20;
    static final int BLOCK = 4096;

    private NfsBench() {}

    public static void main(String[] args) throws Exception {
        int sizeMib = args.length > 0 ? Integer.parseInt(args[0]) : 64;
        int randomOps = args.length > 1 ? Integer.parseInt(args[1]) : 2000;
        int files = args.length > 2 ? Integer.parseInt(args[2]) : 10_000;
        Path root = Files.createTempDirectory("cairn-bench-nfs");
        try (LocalCluster cluster = LocalCluster.start(root.resolve("cluster"), freePort(), java.util.List.of(freePort(), freePort(), freePort()))) {
            cluster.awaitReady();
            try (LocalGateway gw = LocalGateway.start(cluster.runtime(), cluster.masterAddress(), LocalCluster.HOST, 0,
                    dev.cairn.nfs.Exports.parse(dev.cairn.nfs.Exports.DEFAULT), root.resolve("nfs"));
                 TcpChannel ch = new TcpChannel(LocalCluster.HOST, gw.port())) {
                Nfs4Client c = new Nfs4Client(ch, 0, 0, "bench");
                get(c.connect());
                Path local = Files.createDirectories(root.resolve("local"));
                System.out.printf(Locale.ROOT, "%-34s %14s %14s %8s%n", "workload", "cairn nfs", "local disk", "ratio");
                run(c, local, sizeMib, randomOps, files);
            }
        } finally {
            try (Stream<Path> all = Files.walk(root)) {
                all.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
            }
        }
    }

    private static void run(Nfs4Client c, Path local, int sizeMib, int randomOps, int files) throws Exception {
        byte[] rootFh = get(c.lookup("/"));
        byte[] mib = new byte[MIB];
        new SplittableRandom(1).nextBytes(mib);
        long size = (long) sizeMib * MIB;

        OpenFile f = get(c.open(rootFh, "seq", true));
        long t = System.nanoTime();
        for (long off = 0; off < size; off += MIB) get(c.write(f, off, mib, Nfs4Client.UNSTABLE));
        get(c.commit(f.fh()));
        double nfs = mibPerSecond(size, t);
        Path lf = local.resolve("seq");
        t = System.nanoTime();
        try (FileChannel fc = FileChannel.open(lf, StandardOpenOption.CREATE, StandardOpenOption.WRITE)) {
            for (long off = 0; off < size; off += MIB) fc.write(ByteBuffer.wrap(mib), off);
            fc.force(true);
        }
        report("sequential write 1 MiB + COMMIT", nfs, mibPerSecond(size, t), "MiB/s");

        t = System.nanoTime();
        for (long off = 0; off < size; off += MIB) get(c.read(f, off, MIB));
        nfs = mibPerSecond(size, t);
        t = System.nanoTime();
        try (RandomAccessFile raf = new RandomAccessFile(lf.toFile(), "r")) {
            byte[] buf = new byte[MIB];
            for (long off = 0; off < size; off += MIB) {
                raf.seek(off);
                raf.readFully(buf);
            }
        }
        report("sequential read 1 MiB", nfs, mibPerSecond(size, t), "MiB/s");

        byte[] block = new byte[BLOCK];
        long blocks = size / BLOCK;
        SplittableRandom r = new SplittableRandom(2);
        t = System.nanoTime();
        for (int i = 0; i < randomOps; i++) get(c.write(f, r.nextLong(blocks) * BLOCK, block, Nfs4Client.UNSTABLE));
        get(c.commit(f.fh()));
        nfs = opsPerSecond(randomOps, t);
        r = new SplittableRandom(2);
        t = System.nanoTime();
        try (FileChannel fc = FileChannel.open(lf, StandardOpenOption.WRITE)) {
            for (int i = 0; i < randomOps; i++) fc.write(ByteBuffer.wrap(block), r.nextLong(blocks) * BLOCK);
            fc.force(true);
        }
        report("random write 4 KiB + COMMIT", nfs, opsPerSecond(randomOps, t), "ops/s");

        r = new SplittableRandom(3);
        t = System.nanoTime();
        for (int i = 0; i < randomOps; i++) get(c.read(f, r.nextLong(blocks) * BLOCK, BLOCK));
        nfs = opsPerSecond(randomOps, t);
        r = new SplittableRandom(3);
        t = System.nanoTime();
        try (FileChannel fc = FileChannel.open(lf, StandardOpenOption.READ)) {
            for (int i = 0; i < randomOps; i++) fc.read(ByteBuffer.wrap(block), r.nextLong(blocks) * BLOCK);
        }
        report("random read 4 KiB", nfs, opsPerSecond(randomOps, t), "ops/s");
        get(c.close(f));

        byte[] dir = get(c.mkdir(rootFh, "many"));
        Path ldir = Files.createDirectories(local.resolve("many"));
        byte[] small = new byte[100];
        t = System.nanoTime();
        for (int i = 0; i < files; i++) {
            OpenFile g = get(c.open(dir, "f" + i, true));
            get(c.write(g, 0, small, Nfs4Client.FILE_SYNC));
            get(c.close(g));
        }
        nfs = opsPerSecond(files, t);
        t = System.nanoTime();
        for (int i = 0; i < files; i++) {
            try (FileChannel fc = FileChannel.open(ldir.resolve("f" + i), StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE)) {
                fc.write(ByteBuffer.wrap(small));
                fc.force(true);
            }
        }
        report(files + " files: create + write + sync", nfs, opsPerSecond(files, t), "files/s");

        t = System.nanoTime();
        int listed = get(c.list(dir)).size();
        nfs = opsPerSecond(listed, t);
        t = System.nanoTime();
        long n;
        try (Stream<Path> s = Files.list(ldir)) {
            n = s.count();
        }
        report(files + " files: list", nfs, opsPerSecond(n, t), "names/s");
        if (listed != files || n != files) throw new IllegalStateException("listed " + listed + " / " + n + " of " + files);

        t = System.nanoTime();
        for (int i = 0; i < files; i++) get(c.remove(dir, "f" + i));
        nfs = opsPerSecond(files, t);
        t = System.nanoTime();
        for (int i = 0; i < files; i++) Files.delete(ldir.resolve("f" + i));
        report(files + " files: remove", nfs, opsPerSecond(files, t), "files/s");
    }

    private static double mibPerSecond(long bytes, long t0) { return bytes / (double) MIB / ((System.nanoTime() - t0) / 1e9); }

    private static double opsPerSecond(long ops, long t0) { return ops / ((System.nanoTime() - t0) / 1e9); }

    private static void report(String what, double nfs, double local, String unit) {
        System.out.printf(Locale.ROOT, "%-34s %8.1f %-5s %8.1f %-5s %7.2f%n", what, nfs, unit, local, unit, nfs / local);
    }

    /** The channel answers before it returns, so every promise here is complete when it comes back. */
    private static <T> T get(Promise<T> p) throws Exception {
        if (!p.isDone()) throw new IllegalStateException("a call did not complete synchronously");
        if (p.isFailed()) throw new IllegalStateException(p.error());
        return p.value();
    }

    private static int freePort() throws IOException {
        try (java.net.ServerSocket s = new java.net.ServerSocket(0)) {
            return s.getLocalPort();
        }
    }

    /** One TCP connection to the gateway with RPC record marking (RFC 5531 §11); one call at a time. */
    static final class TcpChannel implements Nfs4Client.Channel, AutoCloseable {
        static final int MAX_REPLY = 4 * MIB;
        private final Socket socket;
        private final OutputStream out;
        private final DataInputStream in;

        TcpChannel(String host, int port) throws IOException {
            socket = new Socket(host, port);
            socket.setTcpNoDelay(true);
            out = socket.getOutputStream();
            in = new DataInputStream(socket.getInputStream());
        }

        @Override public synchronized Promise<byte[]> call(byte[] record) {
            try {
                out.write(ByteBuffer.allocate(4).putInt(0x8000_0000 | record.length).array());
                out.write(record);
                out.flush();
                java.io.ByteArrayOutputStream reply = new java.io.ByteArrayOutputStream();
                boolean last;
                do {
                    int mark = in.readInt();
                    last = mark < 0;
                    int len = mark & 0x7fff_ffff;
                    if (reply.size() + len > MAX_REPLY) throw new IOException("reply over " + MAX_REPLY + " bytes");
                    byte[] frag = new byte[len];
                    in.readFully(frag);
                    reply.write(frag);
                } while (!last);
                return Promise.completed(reply.toByteArray());
            } catch (IOException e) {
                return Promise.failed(e);
            }
        }

        @Override public void close() throws IOException { socket.close(); }
    }
}
