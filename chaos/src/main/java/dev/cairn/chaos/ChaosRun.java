package dev.cairn.chaos;

import dev.cairn.core.async.Promise;
import dev.cairn.core.env.Address;
import dev.cairn.core.real.ClusterKey;
import dev.cairn.core.proto.MasterProtocol.StatusReply;
import dev.cairn.core.proto.StorageClass;
import dev.cairn.core.proto.Types.FileAttr;
import dev.cairn.nfs.client.Nfs4Client;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.SplittableRandom;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;

/**
 * One chaos scenario on real processes: a master and {@code chunkservers} chunkservers (each its own JVM, its own
 * data directory), writers and a reader through the native client, the nemesis's schedule carried out with
 * {@code kill -9} and {@code SIGSTOP}; then every fault healed, the cluster given {@link #CONVERGE_BOUND_MILLIS} to
 * converge, and the history checked: every acknowledged write reads back byte for byte, no read (during the run or
 * after) returned bytes that were never written, a file whose write failed holds a prefix of what was written or
 * is gone, and a new file of every class can be written and read.
 */
public final class ChaosRun {
    /** How long the healed cluster has to bring every chunk to its goal with no stale copy left. */
    public static final long CONVERGE_BOUND_MILLIS = 180_000;
    static final long READY_BOUND_MILLIS = 60_000;
    /** Longest one client call may take during the run (a stalled chunkserver is felt through the client's own timeouts). */
    static final long CALL_TIMEOUT_SECONDS = 120;
    /** Small chunks, so that every file spans several and a fault lands in the middle of files. */
    static final int CHUNK_SIZE = 1 << 20;
    static final int WRITERS = 2;
    /** A writer or reader whose call failed waits this long before its next one. */
    static final long FAILURE_BACKOFF_MILLIS = 250;
    /** The classes files are written with, in turn; each fits 5 chunkservers with two of them faulted. */
    static final List<StorageClass> CLASSES = List.of(StorageClass.replicated(2), StorageClass.replicated(3), StorageClass.ec(2, 1));

    public record Config(Nemesis.Scenario scenario, long seed, long durationMillis, int chunkservers, Path dir, List<String> launcher,
                         String rerunCommand) {
        public Config {
            if (chunkservers < 3) throw new IllegalArgumentException("a chaos run needs at least 3 chunkservers");
            if (durationMillis < 10_000) throw new IllegalArgumentException("a chaos run needs at least 10 s");
        }
    }

    /** What a fault did: when it was applied and healed, on the run's clock, and any error doing so. */
    /**
     * @param mastersInGroup for a fault on the leader: how many masters of the group were up and in touch with it
     *                       just before (a master killed earlier may still be restarting: with it, killing the leader
     *                       leaves no majority until it is back, which is an outage, not a failover); -1 otherwise
     * @param note what the fault did beyond its kind (a power loss: how many changes and bytes each disk lost), or null
     */
    public record Fired(Nemesis.Fault fault, long appliedMillis, long healedMillis, String error, int mastersInGroup, String note) {}

    /**
     * @param convergence the cluster's health, as {@code status} showed it, each time it changed while the run
     *                    waited for it to come up and to converge (for the report: what took the time)
     * @param startWallMillis the wall clock at the run's time 0 (the report gives each fault's wall time, to find it in the node logs)
     */
    public record Result(Config config, List<History.Entry> history, List<Fired> faults, long ackBytesChecked, long lostBytes,
                         long convergeMillis, List<String> violations, List<String> convergence, long startWallMillis) {
        public boolean passed() { return violations.isEmpty(); }

        public long count(History.Op op, History.Outcome outcome) {
            return history.stream().filter(e -> e.op() == op && e.outcome() == outcome).count();
        }

        /** Writes made through the NFS gateway with this outcome. */
        public long nfsWrites(History.Outcome outcome) {
            return history.stream().filter(e -> e.op() == History.Op.WRITE && e.outcome() == outcome && e.detail().startsWith("nfs")).count();
        }
    }

    private final Config config;
    private final History history = new History();
    private final List<Fired> fired = new ArrayList<>();
    private final List<String> violations = new ArrayList<>();
    private final List<String> convergence = new ArrayList<>();
    private long t0;

    private ChaosRun(Config config) { this.config = config; }

    public static Result run(Config config) throws Exception {
        return new ChaosRun(config).go();
    }

    long now() { return System.currentTimeMillis() - t0; }

    private Result go() throws Exception {
        Files.createDirectories(config.dir());
        keyFile = config.dir().resolve(ClusterKey.FILE_NAME);
        key = ClusterKey.loadOrCreate(keyFile);
        List<String> chunkservers = new ArrayList<>();
        for (int i = 1; i <= config.chunkservers(); i++) chunkservers.add("cs" + i);
        List<Nemesis.Fault> schedule = Nemesis.schedule(config.scenario(), config.seed(), config.durationMillis(), chunkservers);
        long ackBytes = 0, lost = 0, converge = -1;
        List<String> lossy = new ArrayList<>(chunkservers);
        if (config.scenario() == Nemesis.Scenario.POWER_LOSS) lossy.addAll(List.of("master", Nemesis.GATEWAY));
        if (config.scenario() == Nemesis.Scenario.GROUP_POWER_LOSS || config.scenario() == Nemesis.Scenario.STORM) {
            lossy.addAll(List.of("master1", "master2", "master3", Nemesis.GATEWAY));
        }
        List<String> names = new ArrayList<>(masterNames());
        names.addAll(chunkservers);
        names.add(Nemesis.GATEWAY);
        // declared first, closed last: the nodes stop before their disks are unmounted and their networks deleted
        try (NetNamespaces net = config.scenario().needsNetwork() ? NetNamespaces.create(names) : null;
             LossyDisks lossyDisks = config.scenario().needsLossyDisks() ? LossyDisks.mount(config.dir(), lossy, config.scenario().metadata()) : null;
             NodeProcesses nodes = new NodeProcesses(config.dir(), config.launcher(), config.scenario().stepsClocks());
             SmallDisks disks = config.scenario().fillsDisks() ? SmallDisks.mount(config.dir(), chunkservers, Nemesis.DISK_BYTES) : null) {
            this.disks = disks;
            this.lossyDisks = lossyDisks;
            this.net = net;
            if (net != null) nodes.prefixWith(net::prefix);
            String master = startMasters(nodes);
            for (String cs : chunkservers) {
                startNode(nodes, cs, List.of("chunkserver", "--id", cs, "--listen", listen(cs, CHUNKSERVER_PORT).toString(), "--master", master,
                        "--data", config.dir().resolve(cs).toString(), "--volume", "disk0"));
            }
            Address nfs = listen(Nemesis.GATEWAY, NFS_PORT);
            List<String> gateway = new ArrayList<>(List.of("nfs", "--listen", nfs.toString(), "--master", master,
                    "--data", config.dir().resolve("nfs").toString()));
            // the run's clients come from their own address, not 127.0.0.1 (the default export's only client)
            if (net != null) gateway.addAll(List.of("--exports", net.runAddress() + "/32 rw no_root_squash"));
            startNode(nodes, Nemesis.GATEWAY, gateway);
            try (RealClient client = RealClient.connect(masters, CALL_TIMEOUT_SECONDS, key);
                 KernelWorkload kernel = config.scenario().needsKernelClient() ? new KernelWorkload() : null) {
                t0 = System.currentTimeMillis();
                awaitHealthy(client, nodes, READY_BOUND_MILLIS, "come up");
                client.mkdir("/chaos");
                Workload w = new Workload(client);
                // the VM boots before the clock starts: the faults are meant for a client that is writing
                if (kernel != null && !kernel.start(client, nfs.port())) {
                    return new Result(config, history.entries(), List.copyOf(fired), 0, 0, -1, List.copyOf(violations), List.copyOf(convergence), t0);
                }
                t0 = System.currentTimeMillis();
                List<Thread> threads = new ArrayList<>();
                for (int i = 0; i < WRITERS; i++) threads.add(new Thread(w::write, "chaos-writer-" + i));
                // the kernel's is then the gateway's only client: its restarts' grace periods end once it has reclaimed
                if (kernel == null) threads.add(new Thread(() -> w.writeOverNfs(nfs), "chaos-nfs-writer"));
                threads.add(new Thread(w::read, "chaos-reader"));
                for (Thread t : threads) t.start();
                carryOut(schedule, nodes);
                w.stop = true;
                for (Thread t : threads) t.join();
                if (kernel != null) kernel.finish();
                heal(nodes);
                long healed = now();
                if (awaitHealthy(client, nodes, CONVERGE_BOUND_MILLIS, "converge after healing")) converge = now() - healed;
                long[] checked = checkAcknowledged(client);
                ackBytes = checked[0];
                lost = checked[1];
                checkUnacknowledged(client);
                checkNewFiles(client);
            }
        }
        return new Result(config, history.entries(), List.copyOf(fired), ackBytes, lost, converge, List.copyOf(violations), List.copyOf(convergence), t0);
    }

    /** Whether this process can run the disk-full scenario (root, allowed to mount a tmpfs). */
    public static boolean canFillDisks() { return SmallDisks.available(); }

    /** The chunkservers' small filesystems, in the disk-full scenario (else null). */
    private SmallDisks disks;
    /** The nodes' disks that lose power or stall, in the scenarios that need them (else null). */
    private LossyDisks lossyDisks;

    /** Why this process cannot run the power-loss and disk-stall scenarios, or null if it can. */
    public static String cannotLoseDisks() { return LossyDisks.unavailable(); }

    /** Why this process cannot run the kernel-client scenario (nfs-vm, as root), or null if it can. */
    public static String cannotRunKernelClient() { return KernelClient.unavailable(); }

    /** Why this process cannot run the partition and packet-loss scenarios (network namespaces), or null if it can. */
    public static String cannotPartition() { return NetNamespaces.unavailable(); }

    /** Each node's network, in the scenarios whose faults are on the network (else null: every node on 127.0.0.1). */
    private NetNamespaces net;
    /** A node's ports when it has an address of its own (on 127.0.0.1 free ports are taken instead). */
    static final int MASTER_PORT = 7000, CHUNKSERVER_PORT = 7100, NFS_PORT = 2049;

    /** Where {@code node} listens: its own address at {@code port} on its network, or a free port of 127.0.0.1. */
    private Address listen(String node, int port) throws IOException {
        return net == null ? new Address("127.0.0.1", freePort()) : new Address(net.address(node), port);
    }

    /** The masters' node names: {@code master}, or {@code master1..N} of a group. */
    private List<String> masterNames() {
        int n = config.scenario().masters();
        if (n == 1) return List.of("master");
        return java.util.stream.IntStream.rangeClosed(1, n).mapToObj(i -> "master" + i).toList();
    }

    /** Every node and the run's clients share a cluster key, as {@code cairn up}'s do. */
    private ClusterKey key;
    private Path keyFile;

    private void startNode(NodeProcesses nodes, String name, List<String> args) throws IOException {
        List<String> all = new ArrayList<>(args);
        all.addAll(List.of("--key-file", keyFile.toString()));
        nodes.start(name, all);
    }

    /** The masters' client addresses (one, or a Raft group's). */
    private final List<Address> masters = new ArrayList<>();

    /** Starts the scenario's master or master group; returns the {@code --master} argument that names it. */
    private String startMasters(NodeProcesses nodes) throws IOException {
        int n = config.scenario().masters();
        if (net != null) {
            for (String m : masterNames()) masters.add(listen(m, MASTER_PORT));
        } else {
            // a master group's members also listen on their port + RAFT_PORT_OFFSET: ports whose partner is free too
            masters.addAll(n == 1 ? List.of(new Address("127.0.0.1", freePort())) : dev.cairn.master.ratis.RatisLog.freeLoopbackGroup(n));
        }
        String list = String.join(",", masters.stream().map(Address::toString).toList());
        if (n == 1) {
            startNode(nodes, "master", List.of("master", "--listen", list, "--data", config.dir().resolve("master").toString()));
            return list;
        }
        for (int i = 1; i <= n; i++) {
            startNode(nodes, "master" + i, List.of("master", "--listen", masters.get(i - 1).toString(), "--peers", list,
                    "--data", config.dir().resolve("master" + i).toString()));
        }
        return list;
    }

    /**
     * The node name of the master that leads now: the one that says so of itself (asked directly; a status call
     * would be forwarded to the leader by whichever master took it). Waits for an election in progress.
     */
    private String leaderNode() throws InterruptedException {
        long deadline = System.currentTimeMillis() + READY_BOUND_MILLIS;
        try (RealClient c = RealClient.connect(masters, 5, key)) {
            while (System.currentTimeMillis() < deadline) {
                for (int i = 0; i < masters.size(); i++) {
                    dev.cairn.core.env.Address a = masters.get(i);
                    try {
                        var r = c.await(x -> x.replicaStatus(a));
                        if (r.leads() && r.serving()) return "master" + (i + 1);
                    } catch (RuntimeException e) {
                        // down
                    }
                }
                Thread.sleep(100);
            }
        }
        throw new IllegalStateException("no master of " + masters + " leads");
    }

    /** How long a kill of the leader waits for a master killed before it to be back in the group. */
    static final long REJOIN_BOUND_MILLIS = 20_000;
    /** A kill of the leader that waiting pushed to within this much of the workload's end is not made (and not reported). */
    static final long LAST_KILL_MARGIN_MILLIS = 6_000;

    /**
     * Waits (up to {@link #REJOIN_BOUND_MILLIS}) until every master is back in the group, and returns how many are:
     * a leader kill measures a failover, which needs the majority the others make; killed while one is still
     * restarting (a master takes seconds from exec to rejoin on a loaded machine) it measures an outage instead.
     */
    private int awaitWholeGroup() throws InterruptedException {
        long deadline = Math.min(System.currentTimeMillis() + REJOIN_BOUND_MILLIS, t0 + config.durationMillis() - LAST_KILL_MARGIN_MILLIS);
        int n = mastersInGroup();
        while (n < masters.size() && System.currentTimeMillis() < deadline) {
            Thread.sleep(200);
            n = mastersInGroup();
        }
        return n;
    }

    /** Masters that answer and know a leader (the leader included): up, and back in the group after a restart. */
    private int mastersInGroup() {
        int n = 0;
        try (RealClient c = RealClient.connect(masters, 2, key)) {
            for (dev.cairn.core.env.Address a : masters) {
                try {
                    var r = c.await(x -> x.replicaStatus(a));
                    if (r.leads() || !r.leader().isEmpty()) n++;
                } catch (RuntimeException e) {
                    // down, or still starting
                }
            }
        }
        return n;
    }

    // ---- the nemesis ----

    private void carryOut(List<Nemesis.Fault> schedule, NodeProcesses nodes) throws InterruptedException {
        record Step(long at, Nemesis.Fault fault, boolean heal) {}
        List<Step> steps = new ArrayList<>();
        for (Nemesis.Fault f : schedule) {
            steps.add(new Step(f.atMillis(), f, false));
            steps.add(new Step(f.endMillis(), f, true));
        }
        steps.sort((a, b) -> Long.compare(a.at, b.at));
        long[] applied = new long[schedule.size()];
        String[] errors = new String[schedule.size()];
        String[] targets = new String[schedule.size()];
        String[] notes = new String[schedule.size()];
        boolean[] skipped = new boolean[schedule.size()];
        int[] inGroup = new int[schedule.size()];
        java.util.Arrays.fill(inGroup, -1);
        for (Step s : steps) {
            long wait = s.at - now();
            if (wait > 0) Thread.sleep(wait);
            int i = schedule.indexOf(s.fault);
            try {
                if (!s.heal) {
                    if (onLeader(s.fault) || config.scenario() == Nemesis.Scenario.QUORUM_LOSS) {
                        inGroup[i] = awaitWholeGroup();
                        // waiting for the group moved the kill so late that clients could not show they went on after it
                        if (config.durationMillis() - now() < LAST_KILL_MARGIN_MILLIS) {
                            skipped[i] = true;
                            continue;
                        }
                    }
                    targets[i] = onLeader(s.fault) ? resolveLeader(s.fault.target(), leaderNode()) : s.fault.target();
                    applied[i] = now(); // when it is carried out, after finding its target
                    switch (s.fault.kind()) {
                        case KILL -> {
                            for (String n : resolved(s.fault, targets[i]).nodes(nodes.names())) nodes.kill(n);
                        }
                        case STALL -> nodes.pause(targets[i]);
                        case CLOCK_STEP -> nodes.stepClock(targets[i], s.fault.amount());
                        case DISK_FULL -> disks.fill(targets[i]);
                        case POWER_LOSS -> notes[i] = losePower(nodes, resolved(s.fault, targets[i]).nodes(nodes.names()), s.fault);
                        case DISK_STALL -> lossyDisks.stall(targets[i], (int) s.fault.amount());
                        case DISK_ERROR -> lossyDisks.fail(targets[i], true);
                        case PARTITION -> partition(resolved(s.fault, targets[i]).nodes(nodes.names()), s.fault.amount());
                        case PACKET_LOSS -> net.loss(targets[i], (int) s.fault.amount());
                    }
                } else if (skipped[i]) {
                    continue;
                } else if (targets[i] != null) {
                    switch (s.fault.kind()) {
                        case KILL -> {
                            for (String n : resolved(s.fault, targets[i]).nodes(nodes.names())) nodes.restart(n);
                        }
                        case STALL -> nodes.resume(targets[i]);
                        case CLOCK_STEP -> nodes.stepClock(targets[i], 0);
                        case DISK_FULL -> disks.empty(targets[i]);
                        case POWER_LOSS -> {
                            for (String n : resolved(s.fault, targets[i]).nodes(nodes.names())) nodes.restart(n);
                        }
                        case DISK_STALL -> lossyDisks.stall(targets[i], 0);
                        case DISK_ERROR -> { // the disk works again; the operator restarts its server, which takes it back
                            lossyDisks.fail(targets[i], false);
                            nodes.kill(targets[i]);
                            nodes.restart(targets[i]);
                        }
                        case PARTITION, PACKET_LOSS -> {
                            for (String n : resolved(s.fault, targets[i]).nodes(nodes.names())) net.heal(n);
                        }
                    }
                    fired.add(new Fired(resolved(s.fault, targets[i]), applied[i], now(), errors[i], inGroup[i], notes[i]));
                } else {
                    fired.add(new Fired(s.fault, applied[i], now(), errors[i], inGroup[i], notes[i]));
                }
            } catch (IOException | RuntimeException e) {
                errors[i] = e.toString();
                if (s.heal) fired.add(new Fired(targets[i] == null ? s.fault : resolved(s.fault, targets[i]), applied[i], now(), errors[i], inGroup[i], notes[i]));
            }
        }
        long rest = config.durationMillis() - now();
        if (rest > 0) Thread.sleep(rest);
    }

    /**
     * Power loss of {@code names}: each is killed, then its disk loses whatever was not durable. All die before any
     * disk is touched (a site's power goes at once), and a moment passes after the last death: a write the dead
     * process had handed to the kernel may still be on its way through FUSE.
     */
    private String losePower(NodeProcesses nodes, List<String> names, Nemesis.Fault f) throws IOException, InterruptedException {
        for (String n : names) nodes.kill(n);
        Thread.sleep(IN_FLIGHT_SETTLE_MILLIS);
        List<String> lost = new ArrayList<>();
        boolean tear = tears(f);
        for (int i = 0; i < names.size(); i++) {
            String n = names.get(i);
            String did = tear ? lossyDisks.powerLossTearing(n, config.seed() * 1_000_003L + f.atMillis() * 31 + i) : lossyDisks.powerLoss(n);
            lost.add(n + " " + did.replace("undid 0 changes, 0 bytes; 0 writes reached the disk whole, 0 in part", "nothing to undo")
                    .replace("undid 0 changes, 0 bytes", "nothing to undo"));
        }
        return (tear ? "torn: " : "") + String.join("; ", lost);
    }

    /**
     * Whether a power loss tears writes (some unsynced ones reach the disk whole or in part, {@link
     * LossyDisks#powerLossTearing}) or takes every unsynced write whole: half of them, drawn from the seed and the
     * fault's time rather than from the schedule's generator, so that adding this changed no run's schedule.
     */
    boolean tears(Nemesis.Fault f) {
        return new SplittableRandom(config.seed() ^ f.atMillis()).nextBoolean();
    }

    /** How long a power loss waits between its kills and undoing the disks' unsynced changes. */
    static final long IN_FLIGHT_SETTLE_MILLIS = 200;

    private void partition(List<String> side, long how) throws IOException, InterruptedException {
        if (how != Nemesis.FROM_MASTERS) {
            net.isolate(side, how == Nemesis.ONE_WAY);
            return;
        }
        List<String> sideMasters = side.stream().filter(masterNames()::contains).toList();
        if (sideMasters.isEmpty()) {
            net.cut(side, masterNames(), false, false); // chunkservers the masters cannot reach, nor they the masters
            return;
        }
        net.cut(sideMasters, masterNames().stream().filter(m -> !side.contains(m)).toList(), false, false);
    }

    /** Whether the fault's target names the leader (alone or with other nodes): it is found when the fault fires. */
    private static boolean onLeader(Nemesis.Fault f) {
        return List.of(f.target().split("\\" + Nemesis.AND)).contains(Nemesis.LEADER);
    }

    /** {@code target} with the leader's name in place of {@link Nemesis#LEADER}. */
    static String resolveLeader(String target, String leader) {
        List<String> out = new ArrayList<>();
        for (String n : target.split("\\" + Nemesis.AND)) out.add(n.equals(Nemesis.LEADER) ? leader : n);
        return String.join(Nemesis.AND, out);
    }

    /** The fault as it was carried out: on the node its target named when it fired (the leader of the moment). */
    private static Nemesis.Fault resolved(Nemesis.Fault f, String node) {
        return node.equals(f.target()) ? f : new Nemesis.Fault(f.atMillis(), f.kind(), node, f.forMillis(), f.amount());
    }

    private void heal(NodeProcesses nodes) throws IOException, InterruptedException {
        if (net != null) net.healAll();
        for (String n : nodes.names()) {
            if (nodes.paused(n)) nodes.resume(n);
            if (!nodes.running(n)) {
                violations.add(n + " was not running when the faults were healed (it crashed by itself? see " + nodes.log(n) + "; it ended: "
                        + nodes.logTail(n) + ")");
                nodes.restart(n);
            }
        }
    }

    /** Waits until every chunkserver is up, grace is over, and no chunk is under or over its goal or has a stale copy. */
    private boolean awaitHealthy(RealClient client, NodeProcesses nodes, long boundMillis, String what) throws InterruptedException {
        long deadline = System.currentTimeMillis() + boundMillis;
        String last = "no answer from the master", noted = last;
        while (System.currentTimeMillis() < deadline) {
            if (!last.equals(noted)) {
                convergence.add(seconds(now()) + " " + last);
                noted = last;
            }
            try {
                StatusReply s = client.await(c -> c.status());
                long alive = s.servers().stream().filter(x -> x.alive()).count();
                last = String.format(Locale.ROOT, "%d of %d chunkservers alive, grace %s, %d under goal, %d over goal, %d stale copies, %d endangered, %d lost, %d moving",
                        alive, config.chunkservers(), s.grace(), s.underGoal(), s.overGoal(), s.staleCopies(), s.endangered(), s.lost(), s.moving());
                if (s.lost() > 0) {
                    violations.add("the master counts " + s.lost() + " chunks lost: " + last);
                    return false;
                }
                if (alive == config.chunkservers() && !s.grace() && s.underGoal() == 0 && s.overGoal() == 0 && s.staleCopies() == 0
                        && s.endangered() == 0 && s.moving() == 0) {
                    convergence.add(seconds(now()) + " healthy: " + last);
                    return true;
                }
            } catch (RuntimeException e) {
                last = e.getMessage();
            }
            Thread.sleep(500);
        }
        StringBuilder dead = new StringBuilder();
        for (String n : nodes.names()) {
            if (!nodes.running(n)) dead.append("; ").append(n).append(" is not running, its log ends: ").append(nodes.logTail(n));
        }
        violations.add("the cluster did not " + what + " within " + boundMillis / 1000 + " s: " + last + dead);
        return false;
    }

    // ---- the workload ----

    /** What a file holds: bytes drawn from the run's seed and the file's number, so any prefix can be checked. */
    static byte[] content(long seed, int file, int size) {
        byte[] b = new byte[size];
        new SplittableRandom(seed * 1_000_003L + file).nextBytes(b);
        return b;
    }

    static String path(int file) { return "/chaos/f" + file; }

    final class Workload {
        volatile boolean stop;
        final AtomicInteger next = new AtomicInteger();
        private final RealClient client;

        Workload(RealClient client) { this.client = client; }

        void write() {
            while (!stop && now() < config.durationMillis()) {
                int file = next.getAndIncrement();
                SplittableRandom r = new SplittableRandom(config.seed() * 31 + file);
                int size = r.nextInt(4) == 0 ? r.nextInt(1, 64 * 1024) : r.nextInt(64 * 1024, 5 * CHUNK_SIZE);
                StorageClass cls = CLASSES.get(file % CLASSES.size());
                byte[] data = content(config.seed(), file, size);
                long start = now();
                try {
                    client.put(new ByteArrayInputStream(data), path(file), CHUNK_SIZE, cls);
                    history.add(History.Op.WRITE, path(file), file, size, start, now(), History.Outcome.OK, cls.toString());
                } catch (IOException | RuntimeException e) {
                    history.add(History.Op.WRITE, path(file), file, size, start, now(), History.Outcome.FAILED, cls + ": " + e.getMessage());
                    sleepQuietly(FAILURE_BACKOFF_MILLIS); // the master may be down: fails fast, and a tight loop of failures tells nothing
                }
            }
        }

        /**
         * Writes files through the NFS gateway as a client would: OPEN (create), UNSTABLE WRITEs of up to 1 MiB, COMMIT,
         * CLOSE. A file is acknowledged when COMMIT answers with the verifier every WRITE had (RFC 8881 §18.32: a new
         * verifier means the server restarted and the writes must be sent again). Any failure drops the connection;
         * the next file starts on a new one, as a new client.
         */
        void writeOverNfs(Address gateway) {
            ExecutorService loop = Executors.newSingleThreadExecutor();
            NfsTcpChannel ch = null;
            Nfs4Client c = null;
            byte[] dir = null;
            try {
                while (!stop && now() < config.durationMillis()) {
                    int file = next.getAndIncrement();
                    SplittableRandom r = new SplittableRandom(config.seed() * 31 + file);
                    int size = r.nextInt(4) == 0 ? r.nextInt(1, 64 * 1024) : r.nextInt(64 * 1024, 3 * CHUNK_SIZE);
                    byte[] data = content(config.seed(), file, size);
                    String path = "/chaos/n" + file;
                    long start = now();
                    try {
                        if (c == null) {
                            ch = new NfsTcpChannel(gateway.host(), gateway.port(), loop);
                            Nfs4Client nc = new Nfs4Client(ch, 0, 0, "chaos-" + config.seed());
                            c = nc;
                            nfs(loop, nc::connect);
                            dir = nfs(loop, () -> nc.lookup("/chaos"));
                        }
                        Nfs4Client nc = c;
                        byte[] d = dir;
                        Nfs4Client.OpenFile f = nfs(loop, () -> nc.open(d, "n" + file, true));
                        Long verifier = null;
                        for (int off = 0; off < size; off += CHUNK_SIZE) {
                            byte[] piece = Arrays.copyOfRange(data, off, Math.min(size, off + CHUNK_SIZE));
                            long at = off;
                            var w = nfs(loop, () -> nc.write(f, at, piece, Nfs4Client.UNSTABLE));
                            if (w.count() != piece.length) throw new IOException("short WRITE: " + w.count() + " of " + piece.length);
                            if (verifier != null && w.verifier() != verifier) throw new IOException("write verifier changed mid-file: the gateway restarted");
                            verifier = w.verifier();
                        }
                        long committed = nfs(loop, () -> nc.commit(f.fh()));
                        if (verifier != null && committed != verifier) throw new IOException("COMMIT verifier differs from the WRITEs': the gateway restarted");
                        nfs(loop, () -> nc.close(f));
                        history.add(History.Op.WRITE, path, file, size, start, now(), History.Outcome.OK, "nfs");
                    } catch (Exception e) {
                        history.add(History.Op.WRITE, path, file, size, start, now(), History.Outcome.FAILED, "nfs: " + e.getMessage());
                        if (ch != null) {
                            try {
                                ch.close();
                            } catch (IOException ignored) {
                                // a new connection is made for the next file
                            }
                        }
                        ch = null;
                        c = null;
                        sleepQuietly(FAILURE_BACKOFF_MILLIS);
                    }
                }
            } finally {
                if (ch != null) {
                    try {
                        ch.close();
                    } catch (IOException ignored) {
                        // done
                    }
                }
                loop.shutdownNow();
            }
        }

        void read() {
            SplittableRandom r = new SplittableRandom(config.seed() ^ 0xC0FFEE);
            while (!stop && now() < config.durationMillis()) {
                List<History.Entry> acked = history.acknowledgedWrites();
                if (acked.isEmpty()) {
                    sleepQuietly(200);
                    continue;
                }
                History.Entry w = acked.get(r.nextInt(acked.size()));
                long start = now();
                try {
                    byte[] got = get(client, w.path());
                    boolean same = Arrays.equals(got, content(config.seed(), w.file(), (int) w.bytes()));
                    history.add(History.Op.READ, w.path(), w.file(), got.length, start, now(), same ? History.Outcome.OK : History.Outcome.WRONG_BYTES,
                            same ? "" : "read " + got.length + " bytes that differ from the " + w.bytes() + " acknowledged");
                    if (!same) violations.add("a read during the run of " + w.path() + " returned bytes never written (" + got.length + " bytes, " + w.bytes() + " acknowledged)");
                } catch (IOException | RuntimeException e) {
                    history.add(History.Op.READ, w.path(), w.file(), 0, start, now(), History.Outcome.FAILED, e.getMessage());
                    sleepQuietly(FAILURE_BACKOFF_MILLIS);
                }
                sleepQuietly(50);
            }
        }
    }

    /** File numbers of the kernel client's sources (for {@link #content}): apart from the other writers'. */
    static final int KERNEL_FILE_BASE = 2_000_000;
    /** Source files the kernel client copies in turn, and their largest size (small ones too: a copy in one WRITE). */
    static final int KERNEL_SOURCES = 8, KERNEL_SOURCE_MAX_BYTES = 3 * CHUNK_SIZE;

    /**
     * The Linux kernel's NFS client writing through the gateway ({@link KernelClient}): each copy the guest
     * reports acknowledged (its fsync returned) joins the history as a write of its source's bytes; a copy that read
     * back different through the mount is a violation on its own. nfs-vm hands over the guest's console only when
     * the VM ends, so a copy's times are the guest's uptime counted from the VM's start (within about a second).
     */
    final class KernelWorkload implements AutoCloseable {
        private final int[] sizes = new int[KERNEL_SOURCES];
        private final java.util.Map<Integer, Long> started = new java.util.concurrent.ConcurrentHashMap<>();
        private final AtomicInteger acked = new AtomicInteger(), readBack = new AtomicInteger();
        private volatile String done;
        private KernelClient vm;
        private long vmStartWallMillis;

        /**
         * Boots the VM and waits until its first copy shows in the cluster (the guest is writing); false (a violation
         * noted) if that never happens.
         */
        boolean start(RealClient client, int port) throws IOException, InterruptedException {
            Path src = config.dir().resolve("kernel-src");
            Files.createDirectories(src);
            SplittableRandom r = new SplittableRandom(config.seed() ^ 0x6B65726EL);
            for (int x = 0; x < KERNEL_SOURCES; x++) {
                sizes[x] = x % 4 == 0 ? r.nextInt(1, 64 * 1024) : r.nextInt(64 * 1024, KERNEL_SOURCE_MAX_BYTES);
                Files.write(src.resolve("f" + x), content(config.seed(), KERNEL_FILE_BASE + x, sizes[x]));
            }
            vmStartWallMillis = System.currentTimeMillis();
            vm = KernelClient.start(port, "chaos", config.durationMillis() / 1000, src, KERNEL_SOURCES, config.dir(), this::line);
            long deadline = System.currentTimeMillis() + KernelClient.READY_BOUND_SECONDS * 1000;
            while (System.currentTimeMillis() < deadline && vm.running()) {
                try {
                    client.lookup("/chaos/k0");
                    return true;
                } catch (RuntimeException notYet) {
                    Thread.sleep(100);
                }
            }
            violations.add("the kernel NFS client wrote nothing through the gateway within " + KernelClient.READY_BOUND_SECONDS + " s of its VM's start (see "
                    + config.dir().resolve("logs").resolve("kernel-client.log") + ")");
            return false;
        }

        /** The run's clock at the guest's uptime {@code seconds}. */
        private long at(String seconds) {
            return vmStartWallMillis + Math.round(Double.parseDouble(seconds) * 1000) - t0;
        }

        private void line(String line) {
            String[] f = line.split(" ", 5);
            boolean copy = f.length >= 4 && f[1].startsWith("k") && f[2].startsWith("f");
            if (copy && f[0].equals("start")) {
                started.put(Integer.parseInt(f[1].substring(1)), at(f[3]));
            } else if (copy && (f[0].equals("acked") || f[0].equals("failed"))) {
                int k = Integer.parseInt(f[1].substring(1)), x = Integer.parseInt(f[2].substring(1));
                long end = at(f[3]);
                boolean ok = f[0].equals("acked");
                if (ok) acked.incrementAndGet();
                history.add(History.Op.WRITE, "/chaos/k" + k, KERNEL_FILE_BASE + x, sizes[x], started.getOrDefault(k, end), end,
                        ok ? History.Outcome.OK : History.Outcome.FAILED, ok ? "kernel" : "kernel: " + (f.length > 4 ? f[4] : "dd failed"));
            } else if (f.length == 3 && f[0].equals("readback")) {
                readBack.incrementAndGet();
                if (!f[2].equals("ok")) violations.add("the kernel client read /chaos/" + f[1] + " back through its mount, after the faults, and it differs from what it wrote");
            } else if (f[0].equals("done")) {
                done = line;
            }
        }

        /** Waits for the guest to finish writing and read everything back; anything short of that is a violation. */
        void finish() throws InterruptedException {
            int status = vm.await(KernelClient.FINISH_BOUND_SECONDS);
            String log = " (see " + config.dir().resolve("logs").resolve("kernel-client.log") + ")";
            if (status != 0) violations.add("the kernel NFS client's VM " + (status < 0 ? "did not finish within " + KernelClient.FINISH_BOUND_SECONDS + " s of the workload's end" : "ended with status " + status) + log);
            else if (done == null || readBack.get() != acked.get()) violations.add("the kernel client read back " + readBack.get() + " of its " + acked.get() + " acknowledged copies" + log);
            if (acked.get() == 0) violations.add("the kernel NFS client had no copy acknowledged in " + seconds(config.durationMillis()) + log);
        }

        @Override public void close() throws InterruptedException {
            if (vm != null) vm.close();
        }
    }

    /** One NFS call on the client's loop, waited for at most {@link #CALL_TIMEOUT_SECONDS}. */
    static <T> T nfs(ExecutorService loop, Supplier<Promise<T>> op) throws Exception {
        CompletableFuture<T> f = new CompletableFuture<>();
        loop.execute(() -> op.get().onComplete((v, e) -> {
            if (e != null) f.completeExceptionally(e); else f.complete(v);
        }));
        try {
            return f.get(CALL_TIMEOUT_SECONDS, TimeUnit.SECONDS);
        } catch (ExecutionException e) {
            throw e.getCause() instanceof Exception x ? x : e;
        }
    }

    static byte[] get(RealClient client, String path) throws IOException {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        client.get(path, out);
        return out.toByteArray();
    }

    private static void sleepQuietly(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    // ---- the checks after healing ----

    /** Reads back every acknowledged write; returns {bytes checked, bytes lost}. */
    private long[] checkAcknowledged(RealClient client) {
        long checked = 0, lost = 0;
        for (History.Entry w : history.acknowledgedWrites()) {
            long start = now();
            byte[] want = content(config.seed(), w.file(), (int) w.bytes());
            try {
                byte[] got = get(client, w.path());
                checked += want.length;
                if (!Arrays.equals(got, want)) {
                    lost += want.length;
                    violations.add("acknowledged " + w.path() + " (" + w.bytes() + " bytes, " + w.detail() + ", acknowledged at "
                            + seconds(w.endMillis()) + ") reads back " + got.length + " bytes that differ");
                }
                history.add(History.Op.CHECK, w.path(), w.file(), got.length, start, now(), Arrays.equals(got, want) ? History.Outcome.OK : History.Outcome.WRONG_BYTES, "");
            } catch (IOException | RuntimeException e) {
                lost += want.length;
                violations.add("acknowledged " + w.path() + " (" + w.bytes() + " bytes, " + w.detail() + ") cannot be read after healing: " + e.getMessage());
                history.add(History.Op.CHECK, w.path(), w.file(), 0, start, now(), History.Outcome.FAILED, e.getMessage());
            }
        }
        return new long[] {checked, lost};
    }

    /** A write that failed left either nothing or a prefix of its bytes (its committed length), never other bytes. */
    private void checkUnacknowledged(RealClient client) {
        for (History.Entry w : history.failedWrites()) {
            FileAttr attr;
            try {
                attr = client.lookup(w.path());
            } catch (RuntimeException gone) {
                continue; // removed by the failed put, or never created
            }
            try {
                byte[] got = get(client, w.path());
                byte[] want = content(config.seed(), w.file(), (int) w.bytes());
                if (w.detail().startsWith("nfs") || w.detail().startsWith("kernel")) {
                    // over NFS, UNSTABLE writes reach the cluster in the background: what a failed file holds may have
                    // holes (zeros) where writes did not land, but no byte that was never written
                    for (int i = 0; i < got.length; i++) {
                        if (i >= want.length || (got[i] != want[i] && got[i] != 0)) {
                            violations.add("failed NFS write " + w.path() + " holds a byte at " + i + " that was never written (size " + attr.size() + ")");
                            break;
                        }
                    }
                } else if (got.length > want.length || !Arrays.equals(got, Arrays.copyOf(want, got.length))) {
                    violations.add("failed write " + w.path() + " left " + got.length + " bytes (size " + attr.size() + ") that are not a prefix of what was written");
                }
            } catch (IOException | RuntimeException e) {
                violations.add("failed write " + w.path() + " left a file of " + attr.size() + " bytes that cannot be read: " + e.getMessage());
            }
        }
    }

    private void checkNewFiles(RealClient client) {
        int file = 1_000_000;
        for (StorageClass cls : CLASSES) {
            byte[] data = content(config.seed(), file, 3 * CHUNK_SIZE / 2);
            String p = "/chaos/after-" + file;
            long start = now();
            try {
                client.put(new ByteArrayInputStream(data), p, CHUNK_SIZE, cls);
                boolean same = Arrays.equals(get(client, p), data);
                if (!same) violations.add("a new " + cls + " file written after healing reads back different bytes");
                history.add(History.Op.NEW_FILE, p, file, data.length, start, now(), same ? History.Outcome.OK : History.Outcome.WRONG_BYTES, cls.toString());
            } catch (IOException | RuntimeException e) {
                violations.add("a new " + cls + " file cannot be written after healing: " + e.getMessage());
                history.add(History.Op.NEW_FILE, p, file, data.length, start, now(), History.Outcome.FAILED, cls + ": " + e.getMessage());
            }
            file++;
        }
    }

    /** Removes the nodes' data directories under a run's directory, keeping its logs. */
    public static void deleteNodeData(Path runDir) throws IOException {
        try (var entries = Files.list(runDir)) {
            for (Path p : entries.toList()) {
                if (!Files.isDirectory(p) || p.getFileName().toString().equals("logs")) continue;
                try (var all = Files.walk(p)) {
                    for (Path q : all.sorted(java.util.Comparator.reverseOrder()).toList()) Files.deleteIfExists(q);
                }
            }
        }
    }

    static String seconds(long millis) { return String.format(Locale.ROOT, "%.1fs", millis / 1e3); }

    static int freePort() throws IOException {
        return dev.cairn.core.real.LoopbackPorts.take();
    }
}
