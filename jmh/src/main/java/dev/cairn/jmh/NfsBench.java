package dev.cairn.jmh;

import dev.cairn.chaos.NfsTcpChannel;
import dev.cairn.chaos.RealClient;
import dev.cairn.core.async.Promise;
import dev.cairn.core.env.Address;
import dev.cairn.core.proto.StorageClass;
import dev.cairn.nfs.client.Nfs4Client;
import dev.cairn.nfs.client.Nfs4Client.OpenFile;
import java.io.IOException;
import java.net.Socket;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.function.IntFunction;
import java.util.stream.Stream;

/**
 * {@code ./cairn bench nfs}: the NFS gateway against the local disk, one workload after the other, in one run
 * (the machine is shared, so only ratios from one run mean much), driven the way fio's nfs engine drives a
 * server: {@link #inFlight} requests in flight over one TCP connection (several with {@code --connections}).
 *
 * <p>The cluster is what {@code ./cairn up} starts: a master, chunkservers and a gateway, each its own JVM
 * running the cairn jar with the memory flags and heap cap {@code ./cairn up} gives its role, data under a
 * temporary directory, talking over loopback. The files are in a directory of the chosen class ({@code --class}, default {@code replicated(2)}). The local-disk column
 * does the same work with FileChannel in the same temporary directory, fsyncing where NFS commits. At the
 * end each process's peak resident set ({@code VmHWM}) is read from /proc.
 *
 * <p>Workloads: sequential write of the file in 1 MiB UNSTABLE WRITEs, then COMMIT; sequential read of it in
 * 1 MiB READs; 4 KiB writes at random aligned offsets over it, then COMMIT; 4 KiB random reads; FILES small
 * files created (OPEN create, a 100-byte WRITE, COMMIT, CLOSE), listed, and removed. {@code --json} ends with
 * one JSON object of the figures.
 *
 * <p>{@code --rounds N} runs every workload N times on the same processes, each round on files of its own. The first
 * round meets processes a few seconds old: on two cores their JIT compilers took half the CPU through its random-write
 * phase (perf), so later rounds measure what a cluster that has been up a while does; the JSON holds the last round.
 */
public final class NfsBench {
    static final int MIB = 1 << 20;
    static final int BLOCK = 4096;
    static final long READY_MILLIS = 60_000;

    private final int sizeMib, randomOps, files, inFlight, connections, rounds;
    private final StorageClass cls;
    private final Map<String, Double> results = new LinkedHashMap<>();
    /** Every NFS call and its continuation runs on this one thread (Promise is single-threaded). */
    private final ExecutorService loop = Executors.newSingleThreadExecutor(r -> new Thread(r, "bench-loop"));

    private NfsBench(int sizeMib, int randomOps, int files, int inFlight, int connections, int rounds, StorageClass cls) {
        this.sizeMib = sizeMib;
        this.rounds = rounds;
        this.randomOps = randomOps;
        this.files = files;
        this.inFlight = inFlight;
        this.connections = connections;
        this.cls = cls;
    }

    public static void main(String[] args) throws Exception {
        int sizeMib = 1024, randomOps = 20_000, files = 10_000, inFlight = 16, connections = 1, rounds = 1;
        StorageClass cls = StorageClass.replicated(2);
        boolean json = false;
        List<String> positional = new ArrayList<>();
        for (int i = 0; i < args.length; i++) {
            switch (args[i]) {
                case "--json" -> json = true;
                case "--class" -> cls = StorageClass.parse(args[++i]);
                case "--inflight" -> inFlight = Integer.parseInt(args[++i]);
                case "--connections" -> connections = Integer.parseInt(args[++i]);
                case "--rounds" -> rounds = Integer.parseInt(args[++i]);
                default -> positional.add(args[i]);
            }
        }
        if (positional.size() > 0) sizeMib = Integer.parseInt(positional.get(0));
        if (positional.size() > 1) randomOps = Integer.parseInt(positional.get(1));
        if (positional.size() > 2) files = Integer.parseInt(positional.get(2));
        if (sizeMib < 1 || randomOps < 1 || files < 1 || inFlight < 1 || inFlight > Nfs4Client.MAX_SLOTS || connections < 1 || connections > 64 || rounds < 1 || rounds > 10) {
            throw new IllegalArgumentException("usage: bench nfs [MIB [OPS [FILES]]] [--class CLASS] [--inflight 1.." + Nfs4Client.MAX_SLOTS
                    + "] [--connections N] [--rounds 1..10] [--json]");
        }
        NfsBench b = new NfsBench(sizeMib, randomOps, files, inFlight, connections, rounds, cls);
        try {
            b.run();
        } finally {
            b.loop.shutdownNow();
        }
        if (json) System.out.println(b.json());
    }

    private void run() throws Exception {
        Path root = Files.createTempDirectory("cairn-bench-nfs");
        String jar = System.getProperty("cairn.jar");
        if (jar == null || !Files.isRegularFile(Path.of(jar))) throw new IllegalStateException("-Dcairn.jar=PATH to the cairn jar is needed (./cairn bench nfs sets it)");
        Processes procs = new Processes(root, jar);
        try {
            Processes.Cluster cluster = procs.startCluster();
            Address master = cluster.master();
            int nfsPort = cluster.nfsPort();
            try (RealClient admin = procs.client(List.of(master), RealClient.CALL_TIMEOUT_SECONDS)) {
                awaitReady(admin, nfsPort);
                admin.mkdir("/bench");
                admin.await(c -> c.setClass("/bench", cls));
            }
            List<NfsTcpChannel> channels = new ArrayList<>();
            List<Nfs4Client> clients = new ArrayList<>();
            try {
                for (int i = 0; i < connections; i++) {
                    NfsTcpChannel ch = new NfsTcpChannel("127.0.0.1", nfsPort, loop);
                    channels.add(ch);
                    Nfs4Client c = new Nfs4Client(ch, 0, 0, "bench-" + i);
                    call(c::connect);
                    clients.add(c);
                }
                Path local = Files.createDirectories(root.resolve("local"));
                System.out.printf(Locale.ROOT, "cairn NFS gateway (%s, %d in flight over %d connection%s) vs the local disk; file %d MiB%n", cls, inFlight,
                        connections, connections == 1 ? "" : "s", sizeMib);
                for (int r = 1; r <= rounds; r++) {
                    if (rounds > 1) System.out.printf(Locale.ROOT, "round %d of %d%s%n", r, rounds, r == 1 ? " (processes just started: their JIT compilers share the cores)" : "");
                    System.out.printf(Locale.ROOT, "%-38s %14s %14s %8s%n", "workload", "cairn nfs", "local disk", "ratio");
                    workloads(clients, local, r);
                }
            } finally {
                for (NfsTcpChannel ch : channels) ch.close();
            }
            Map<String, Long> peaks = procs.peakRssMib();
            System.out.println("peak RSS (MiB): " + peaks);
            results.put("gateway_peak_rss_mib", (double) peaks.getOrDefault("nfs", -1L));
            long cs = 0;
            for (var e : peaks.entrySet()) if (e.getKey().startsWith("cs")) cs = Math.max(cs, e.getValue());
            results.put("chunkserver_peak_rss_mib", (double) cs);
            results.put("master_peak_rss_mib", (double) peaks.getOrDefault("master", -1L));
        } finally {
            procs.close();
            if (Boolean.getBoolean("cairn.bench.keep")) {
                System.out.println("kept (data and each process's log under logs/): " + root);
            } else {
                try (Stream<Path> all = Files.walk(root)) {
                    all.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
                }
            }
        }
    }

    static void awaitReady(RealClient admin, int nfsPort) throws Exception {
        long deadline = System.currentTimeMillis() + READY_MILLIS;
        while (true) {
            try {
                if (admin.await(c -> c.status()).servers().size() >= 3) {
                    try (Socket s = new Socket("127.0.0.1", nfsPort)) {
                        return;
                    }
                }
            } catch (RuntimeException | IOException e) {
                if (System.currentTimeMillis() > deadline) throw new IllegalStateException("the cluster did not come up: " + e.getMessage(), e);
            }
            if (System.currentTimeMillis() > deadline) throw new IllegalStateException("the cluster did not come up in " + READY_MILLIS + " ms");
            Thread.sleep(200);
        }
    }

    /** One round of every workload, on files of its own; the figures kept (for {@code --json}) are the last round's. */
    private void workloads(List<Nfs4Client> clients, Path local, int round) throws Exception {
        Nfs4Client c0 = clients.get(0);
        byte[] rootFh = call(() -> c0.lookup("/bench"));
        byte[] mib = new byte[MIB];
        new SplittableRandom(1).nextBytes(mib);
        long size = (long) sizeMib * MIB;
        int pieces = sizeMib;

        // every connection opens the file (its own open state)
        List<OpenFile> opens = new ArrayList<>();
        for (Nfs4Client c : clients) opens.add(call(() -> c.open(rootFh, "seq" + round, true)));
        long t = System.nanoTime();
        window(pieces, i -> clients.get(i % clients.size()).write(opens.get(i % clients.size()), (long) i * MIB, mib, Nfs4Client.UNSTABLE));
        call(() -> c0.commit(opens.get(0).fh()));
        double nfs = mibPerSecond(size, t);
        Path lf = local.resolve("seq" + round);
        t = System.nanoTime();
        try (FileChannel fc = FileChannel.open(lf, StandardOpenOption.CREATE, StandardOpenOption.WRITE)) {
            for (long off = 0; off < size; off += MIB) fc.write(ByteBuffer.wrap(mib), off);
            fc.force(true);
        }
        report("seq_write_mib_s", "sequential write 1 MiB + COMMIT", nfs, mibPerSecond(size, t), "MiB/s");

        t = System.nanoTime();
        window(pieces, i -> clients.get(i % clients.size()).read(opens.get(i % clients.size()), (long) i * MIB, MIB));
        nfs = mibPerSecond(size, t);
        t = System.nanoTime();
        try (FileChannel fc = FileChannel.open(lf, StandardOpenOption.READ)) {
            ByteBuffer buf = ByteBuffer.allocate(MIB);
            for (long off = 0; off < size; off += MIB) {
                buf.clear();
                fc.read(buf, off);
            }
        }
        report("seq_read_mib_s", "sequential read 1 MiB", nfs, mibPerSecond(size, t), "MiB/s");

        byte[] block = new byte[BLOCK];
        new SplittableRandom(4).nextBytes(block);
        long blocks = size / BLOCK;
        long[] writeAt = offsets(2, randomOps, blocks);
        t = System.nanoTime();
        window(randomOps, i -> clients.get(i % clients.size()).write(opens.get(i % clients.size()), writeAt[i], block, Nfs4Client.UNSTABLE));
        call(() -> c0.commit(opens.get(0).fh()));
        nfs = opsPerSecond(randomOps, t);
        t = System.nanoTime();
        try (FileChannel fc = FileChannel.open(lf, StandardOpenOption.WRITE)) {
            for (long at : writeAt) fc.write(ByteBuffer.wrap(block), at);
            fc.force(true);
        }
        report("rand_write_ops_s", "random write 4 KiB + COMMIT", nfs, opsPerSecond(randomOps, t), "ops/s");

        long[] readAt = offsets(3, randomOps, blocks);
        t = System.nanoTime();
        window(randomOps, i -> clients.get(i % clients.size()).read(opens.get(i % clients.size()), readAt[i], BLOCK));
        nfs = opsPerSecond(randomOps, t);
        t = System.nanoTime();
        try (FileChannel fc = FileChannel.open(lf, StandardOpenOption.READ)) {
            ByteBuffer buf = ByteBuffer.allocate(BLOCK);
            for (long at : readAt) {
                buf.clear();
                fc.read(buf, at);
            }
        }
        report("rand_read_ops_s", "random read 4 KiB", nfs, opsPerSecond(randomOps, t), "ops/s");
        for (int i = 0; i < clients.size(); i++) {
            Nfs4Client c = clients.get(i);
            OpenFile f = opens.get(i);
            call(() -> c.close(f));
        }
        Files.delete(lf);

        byte[] dir = call(() -> c0.mkdir(rootFh, "many" + round));
        Path ldir = Files.createDirectories(local.resolve("many" + round));
        byte[] small = new byte[100];
        t = System.nanoTime();
        window(files, i -> {
            Nfs4Client c = clients.get(i % clients.size());
            return c.open(dir, "f" + i, true).flatMap(g -> c.write(g, 0, small, Nfs4Client.UNSTABLE)
                    .flatMap(w -> c.commit(g.fh())).flatMap(v -> c.close(g)));
        });
        double createNfs = seconds(t);
        t = System.nanoTime();
        for (int i = 0; i < files; i++) {
            try (FileChannel fc = FileChannel.open(ldir.resolve("f" + i), StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE)) {
                fc.write(ByteBuffer.wrap(small));
                fc.force(true);
            }
        }
        reportSeconds("create_10k_s", files + " files: create + write + commit", createNfs, seconds(t));

        t = System.nanoTime();
        int listed = call(() -> c0.list(dir)).size();
        double listNfs = seconds(t);
        t = System.nanoTime();
        long n;
        try (Stream<Path> s = Files.list(ldir)) {
            n = s.count();
        }
        reportSeconds("list_10k_s", files + " files: list", listNfs, seconds(t));
        if (listed != files || n != files) throw new IllegalStateException("listed " + listed + " / " + n + " of " + files);

        t = System.nanoTime();
        window(files, i -> clients.get(i % clients.size()).remove(dir, "f" + i));
        double removeNfs = seconds(t);
        t = System.nanoTime();
        for (int i = 0; i < files; i++) Files.delete(ldir.resolve("f" + i));
        reportSeconds("remove_10k_s", files + " files: remove", removeNfs, seconds(t));
    }

    private static long[] offsets(long seed, int n, long blocks) {
        SplittableRandom r = new SplittableRandom(seed);
        long[] out = new long[n];
        for (int i = 0; i < n; i++) out[i] = r.nextLong(blocks) * BLOCK;
        return out;
    }

    /** Runs {@code op(0..n-1)} on the loop with {@link #inFlight} per connection in flight; fails on the first failure. */
    private void window(int n, IntFunction<Promise<?>> op) throws Exception {
        CompletableFuture<Void> done = new CompletableFuture<>();
        loop.execute(() -> {
            int[] next = {0}, finished = {0};
            Runnable[] issue = new Runnable[1];
            issue[0] = () -> {
                int i = next[0]++;
                Promise<?> p;
                try {
                    p = op.apply(i);
                } catch (RuntimeException e) {
                    done.completeExceptionally(e);
                    return;
                }
                p.onComplete((v, e) -> {
                    if (e != null) {
                        done.completeExceptionally(new IllegalStateException("operation " + i + " failed", e));
                        return;
                    }
                    if (++finished[0] == n) done.complete(null);
                    else if (next[0] < n && !done.isDone()) issue[0].run();
                });
            };
            for (int k = 0; k < Math.min(n, inFlight * connections); k++) issue[0].run();
        });
        done.get(30, TimeUnit.MINUTES);
    }

    /** One call on the loop, waited for. */
    private <T> T call(java.util.function.Supplier<Promise<T>> op) throws Exception { return call(loop, op); }

    /** One call on {@code loop}, waited for. */
    static <T> T call(ExecutorService loop, java.util.function.Supplier<Promise<T>> op) throws Exception {
        CompletableFuture<T> f = new CompletableFuture<>();
        loop.execute(() -> op.get().onComplete((v, e) -> {
            if (e != null) f.completeExceptionally(e); else f.complete(v);
        }));
        return f.get(10, TimeUnit.MINUTES);
    }

    private static double mibPerSecond(long bytes, long t0) { return bytes / (double) MIB / seconds(t0); }

    private static double opsPerSecond(long ops, long t0) { return ops / seconds(t0); }

    private static double seconds(long t0) { return (System.nanoTime() - t0) / 1e9; }

    private void report(String key, String what, double nfs, double local, String unit) {
        results.put(key, nfs);
        results.put("local_" + key, local);
        System.out.printf(Locale.ROOT, "%-38s %8.1f %-5s %8.1f %-5s %7.2f%n", what, nfs, unit, local, unit, nfs / local);
    }

    private void reportSeconds(String key, String what, double nfs, double local) {
        results.put(key, nfs);
        results.put("local_" + key, local);
        System.out.printf(Locale.ROOT, "%-38s %8.2f %-5s %8.2f %-5s %7.2f%n", what, nfs, "s", local, "s", nfs / local);
    }

    private String json() {
        StringBuilder b = new StringBuilder("{");
        for (var e : results.entrySet()) {
            if (b.length() > 1) b.append(", ");
            b.append('"').append(e.getKey()).append("\": ").append(String.format(Locale.ROOT, "%.2f", e.getValue()));
        }
        return b.append(", \"class\": \"").append(cls).append("\", \"in_flight\": ").append(inFlight).append(", \"connections\": ")
                .append(connections).append(", \"file_mib\": ").append(sizeMib).append('}').toString();
    }

    static int freePort() throws IOException {
        return dev.cairn.core.real.LoopbackPorts.take();
    }

    /** The cluster's processes, each the cairn jar with the heap cap ./cairn up gives it. */
    static final class Processes implements AutoCloseable {
        /** What ./cairn up gives each role (ProcessCluster): the serial collector, a small initial heap, a cap. */
        static final List<String> MEMORY_FLAGS = List.of("-XX:+UseSerialGC", "-Xms16m", "-XX:+UnlockExperimentalVMOptions",
                "-XX:+IgnoreUnrecognizedVMOptions", "-XX:TrimNativeHeapInterval=1000");
        private final Path root;
        private final String jar;
        private final Map<String, Process> procs = new LinkedHashMap<>();
        /** The cluster's key, as ./cairn up makes one; null with -Dcairn.bench.open=true (nodes without one). */
        private final dev.cairn.core.real.ClusterKey key;

        Processes(Path root, String jar) {
            this.root = root;
            this.jar = jar;
            this.key = Boolean.getBoolean("cairn.bench.open") ? null
                    : dev.cairn.core.real.ClusterKey.loadOrCreate(root.resolve(dev.cairn.core.real.ClusterKey.FILE_NAME));
        }

        /** The key clients of this cluster prove membership with (null: an open cluster). */
        dev.cairn.core.real.ClusterKey key() { return key; }

        /** A client of this cluster, giving up on a call after {@code callTimeoutSeconds}. */
        RealClient client(List<Address> masters, long callTimeoutSeconds) { return RealClient.connect(masters, callTimeoutSeconds, key); }

        /** Where the cluster {@link #startCluster} started answers. */
        record Cluster(Address master, int nfsPort) {}

        /** What ./cairn up starts: a master, three chunkservers (no scrubbing, to keep the disk quiet) and the gateway. */
        Cluster startCluster() throws IOException {
            Address master = new Address("127.0.0.1", freePort());
            int nfsPort = freePort();
            start("master", "master", "--listen", master.toString(), "--data", root.resolve("master").toString());
            for (int i = 1; i <= 3; i++) {
                start("cs" + i, "chunkserver", "--id", "cs" + i, "--listen", "127.0.0.1:" + freePort(), "--master", master.toString(),
                        "--data", root.resolve("cs" + i).toString(), "--scrub-mb-per-second", "0");
            }
            start("nfs", "nfs", "--listen", "127.0.0.1:" + nfsPort, "--master", master.toString(), "--data", root.resolve("nfs").toString());
            return new Cluster(master, nfsPort);
        }

        void start(String name, String... args) throws IOException {
            List<String> cmd = new ArrayList<>(List.of(ProcessHandle.current().info().command().orElse("java")));
            cmd.addAll(MEMORY_FLAGS);
            cmd.add(name.startsWith("cs") ? "-Xmx256m" : "-Xmx512m");
            // extra JVM flags for every process, e.g. a flight recording: -Dcairn.bench.jvm="-XX:StartFlightRecording=filename=/tmp/%n.jfr" (%n: the process name)
            // and flags for one role (master, cs, nfs), e.g. -Dcairn.bench.jvm.nfs=-Xmx192m
            String role = name.startsWith("cs") ? "cs" : name;
            for (String extra : List.of(System.getProperty("cairn.bench.jvm", ""), System.getProperty("cairn.bench.jvm." + role, ""))) {
                if (!extra.isBlank()) cmd.addAll(List.of(extra.trim().replace("%n", name).split("\\s+")));
            }
            cmd.addAll(List.of("-jar", jar));
            cmd.addAll(List.of(args));
            if (key != null) cmd.addAll(List.of("--key-file", root.resolve(dev.cairn.core.real.ClusterKey.FILE_NAME).toString()));
            Files.createDirectories(root.resolve("logs"));
            procs.put(name, new ProcessBuilder(cmd).redirectErrorStream(true)
                    .redirectOutput(root.resolve("logs").resolve(name + ".log").toFile()).start());
        }

        long pid(String name) { return procs.get(name).pid(); }

        /** Each process's peak resident set (VmHWM), MiB. */
        Map<String, Long> peakRssMib() throws IOException {
            Map<String, Long> out = new LinkedHashMap<>();
            for (var e : procs.entrySet()) {
                for (String line : Files.readAllLines(Path.of("/proc", String.valueOf(e.getValue().pid()), "status"))) {
                    if (line.startsWith("VmHWM:")) out.put(e.getKey(), Long.parseLong(line.replaceAll("[^0-9]", "")) / 1024);
                }
            }
            return out;
        }

        @Override public void close() {
            for (Process p : procs.values()) p.destroy();
            for (Process p : procs.values()) {
                try {
                    if (!p.waitFor(10, TimeUnit.SECONDS)) p.destroyForcibly();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    p.destroyForcibly();
                }
            }
        }
    }

}
