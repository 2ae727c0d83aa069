package dev.cairn.sim;

import dev.cairn.chunkserver.ChunkServer;
import dev.cairn.chunkserver.ChunkServerConfig;
import dev.cairn.client.CairnClient;
import dev.cairn.core.env.Address;
import dev.cairn.core.proto.Types.Topology;
import dev.cairn.master.Master;
import dev.cairn.master.MasterConfig;
import dev.cairn.master.MasterReplica;
import dev.cairn.sim.runtime.SimHost;
import dev.cairn.sim.runtime.SimWorld;
import java.util.ArrayList;
import java.util.List;

/**
 * The simulated cluster: one master (or a group of masters over the simulated Raft log), N chunkservers, one
 * client host, each on its own host with its own clock.
 */
public final class SimCluster {
    public static final int MASTER_PORT = 7100;
    public static final int CHUNK_PORT = 7200;
    public static final int NFS_PORT = 2049;
    /** The simulated clients' network ({@code SimNfsChannel} gives each an address in it). */
    public static final String NFS_EXPORTS = "10.0.0.0/8 rw no_root_squash";
    /** Wall clocks of hosts are spread over this much either side (skew must be harmless). */
    static final long MAX_WALL_SKEW_MILLIS = 2 * 3600_000L;
    static final long CAPACITY_BYTES = 1L << 40;
    /** Chunkservers a sweep never goes below: the widest class the workload writes (ec(2,2), ec(3,1)) needs four. */
    static final int MIN_LIVE_CHUNKSERVERS = 4;
    /**
     * A scrub round a minute rather than the production week: a simulated disk holds megabytes, and a bit
     * flip must be found (in at most two rounds) and repaired well within the convergence limit.
     */
    static final long SCRUB_INTERVAL_NANOS = 60_000_000_000L;

    private final SimWorld world;
    private final Address masterAddr = new Address("master", MASTER_PORT);
    private final List<String> volumes;
    private final long capacityBytes;
    private final List<String> diskLabels;
    private final int racks;
    private final boolean skewClocks;
    /** The single master, or the group's masters. */
    private final List<SimHost> masters = new ArrayList<>();
    private final List<Address> masterAddrs = new ArrayList<>();
    /** The group's log (null for a single master). */
    private final dev.cairn.sim.runtime.SimRaft raft;
    private final CommittedState committed;
    private final List<SimHost> chunkservers = new ArrayList<>();
    private final SimHost client;
    /** The NFS gateway host, once {@link #addGateway} made it (null before). */
    private SimHost gateway;

    public SimCluster(SimWorld world, int chunkserverCount) {
        this(world, chunkserverCount, List.of("disk0"), CAPACITY_BYTES);
    }

    /** Chunkservers with the given disks each, advertising {@code capacityBytes}. */
    public SimCluster(SimWorld world, int chunkserverCount, List<String> volumes, long capacityBytes) {
        this(world, chunkserverCount, volumes, capacityBytes, List.of());
    }

    /** ... and chunkserver i carrying disk label {@code diskLabels.get(i)} (unlabelled past the list's end). */
    public SimCluster(SimWorld world, int chunkserverCount, List<String> volumes, long capacityBytes, List<String> diskLabels) {
        this(world, chunkserverCount, volumes, capacityBytes, diskLabels, 1, true);
    }

    /**
     * ... chunkserver i in rack {@code i % racks}, and wall clocks skewed by up to two hours either way
     * (or all alike if {@code skewClocks} is false).
     */
    public SimCluster(SimWorld world, int chunkserverCount, List<String> volumes, long capacityBytes, List<String> diskLabels,
                      int racks, boolean skewClocks) {
        this(world, chunkserverCount, volumes, capacityBytes, diskLabels, racks, skewClocks, 1);
    }

    /** ... and {@code masterCount} masters: 1, or a Raft group (hosts master1, master2, ...). */
    public SimCluster(SimWorld world, int chunkserverCount, List<String> volumes, long capacityBytes, List<String> diskLabels,
                      int racks, boolean skewClocks, int masterCount) {
        this.world = world;
        this.volumes = List.copyOf(volumes);
        this.capacityBytes = capacityBytes;
        this.diskLabels = List.copyOf(diskLabels);
        this.racks = racks;
        this.skewClocks = skewClocks;
        if (masterCount == 1) {
            masterAddrs.add(masterAddr);
            masters.add(world.addHost("master", masterAddr, skew(), env -> new Master(env, MasterConfig.defaults(masterAddr))));
            this.raft = null;
            this.committed = null;
        } else {
            this.raft = new dev.cairn.sim.runtime.SimRaft(world.sim(), world.network());
            this.committed = new CommittedState(raft, world.sim());
            for (int i = 1; i <= masterCount; i++) masterAddrs.add(new Address("master" + i, MASTER_PORT));
            for (int i = 1; i <= masterCount; i++) {
                String name = "master" + i;
                Address a = masterAddrs.get(i - 1);
                SimHost h = world.addHost(name, a, skew(), env -> new MasterReplica(env, MasterConfig.defaults(a), raft.member(name)));
                raft.add(h);
                masters.add(h);
            }
        }
        for (int i = 1; i <= chunkserverCount; i++) newChunkserver();
        this.client = world.addHost("client", new Address("client", 7300), skew(), env -> new CairnClient(env, List.copyOf(masterAddrs)));
    }

    private SimHost newChunkserver() {
        int i = chunkservers.size();
        String id = "cs" + (i + 1);
        Address a = new Address(id, CHUNK_PORT);
        Topology topology = new Topology(id, "rack" + (i % racks), i < diskLabels.size() ? diskLabels.get(i) : "");
        SimHost h = world.addHost(id, a, skew(), env -> new ChunkServer(env, new ChunkServerConfig(id, a, List.copyOf(masterAddrs), volumes, capacityBytes,
                topology, ChunkServerConfig.DEFAULT_SCRUB_BYTES_PER_SECOND, SCRUB_INTERVAL_NANOS)));
        chunkservers.add(h);
        return h;
    }

    /** A new, empty host joins the running cluster (started). */
    public SimHost addChunkserver() {
        SimHost h = newChunkserver();
        h.start();
        return h;
    }

    /**
     * The NFS gateway on a host of its own (its disk holds only its record of clients, for the grace period),
     * a client of the master(s) like the others; started with the cluster ({@link #startAll}) or at once if
     * that has happened.
     */
    public SimHost addGateway() {
        if (gateway != null) throw new IllegalStateException("the cluster has its gateway");
        List<Address> group = List.copyOf(masterAddrs);
        gateway = world.addHost("nfs", new Address("nfs", NFS_PORT), skew(),
                env -> new dev.cairn.nfs.NfsGateway(env, group, dev.cairn.nfs.Exports.parse(NFS_EXPORTS)));
        if (client.isUp()) gateway.start();
        return gateway;
    }

    /** The NFS gateway host, or null if the cluster has none. */
    public SimHost gateway() { return gateway; }

    private long skew() {
        long draw = world.sim().random().nextLong(-MAX_WALL_SKEW_MILLIS, MAX_WALL_SKEW_MILLIS + 1);
        return skewClocks ? draw : 0;
    }

    /** The rack chunkserver {@code h} stands in. */
    public String rackOf(SimHost h) { return "rack" + (chunkservers.indexOf(h) % racks); }

    public int racks() { return racks; }

    public List<String> volumes() { return volumes; }

    public long capacityBytes() { return capacityBytes; }

    public SimWorld world() { return world; }

    public void startAll() {
        for (SimHost m : masters) m.start();
        for (SimHost h : chunkservers) h.start();
        client.start();
        if (gateway != null) gateway.start();
    }

    /**
     * The master that serves: the single master, or the group's host whose replica serves as leader now (a
     * deposed leader that has not noticed does not count once another serves), else the first master.
     */
    public SimHost master() {
        if (raft == null) return masters.get(0);
        SimHost l = raft.leader();
        if (l != null && l.isUp() && l.node() instanceof MasterReplica r && r.serving()) return l;
        for (SimHost h : masters) if (h.isUp() && h.node() instanceof MasterReplica r && r.serving()) return h;
        return masters.get(0);
    }

    /** The master serving now, or null if none does (a group between leaders, or a master down or starting). */
    public Master servingMaster() {
        SimHost h = master();
        if (!h.isUp()) return null;
        if (h.node() instanceof Master m) return m.isReady() ? m : null;
        return h.node() instanceof MasterReplica r && r.serving() ? r.master() : null;
    }

    /** Every master host (one, or the group's). */
    public List<SimHost> masters() { return masters; }

    /** The masters' addresses, as clients and chunkservers are given them. */
    public List<Address> masterAddresses() { return List.copyOf(masterAddrs); }

    /** The group's simulated log, or null for a single master. */
    public dev.cairn.sim.runtime.SimRaft raft() { return raft; }

    /** The checkers' replica of the group's committed metadata, or null for a single master. */
    CommittedState committed() { return committed; }

    public List<SimHost> chunkservers() { return chunkservers; }

    public SimHost clientHost() { return client; }

    public CairnClient client() { return (CairnClient) client.node(); }
}
