package dev.cairn.master;

import dev.cairn.core.env.Address;
import dev.cairn.core.proto.StorageClass;
import dev.cairn.core.proto.Types.ServerRef;
import dev.cairn.core.proto.Types.DiskReport;
import dev.cairn.core.proto.Types.DiskState;
import dev.cairn.core.proto.Types.Topology;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * Soft state: which chunkservers are alive and which of them hold the current version of each chunk.
 * Rebuilt from chunkserver registrations after a master restart; never written to the log.
 */
final class ChunkRegistry {
    static final class Server {
        final String id;
        Address address;
        /** Where its registrations and heartbeats come from (its connection to the master). */
        Address controlAddress;
        long incarnation;
        /**
         * Counts the times the master forgot what this server holds (a registration, a death, a broken
         * connection): a copy it was told of under an earlier count may be gone since (a failed disk
         * re-registers its server with the same incarnation).
         */
        long epoch;
        long lastHeardNanos;
        long capacityBytes;
        long usedBytes;
        Topology topology;
        boolean alive;
        /** Marked for removal: gets no new chunks; its copies are moved elsewhere, then deleted. */
        boolean draining;
        final TreeSet<Long> chunks = new TreeSet<>();
        /** Chunks of which it holds a copy at an old version (or too short): never served, deleted by the planner. */
        final TreeMap<Long, Long> staleChunks = new TreeMap<>();
        /** Its disks as of its last heartbeat (empty until the first one). */
        List<DiskReport> disks = List.of();
        /** Its disks the master judges slow ({@link DiskJudge}), and the streaks behind the verdicts. */
        Set<String> slowDisks = Set.of();
        final Map<String, Integer> diskStreaks = new TreeMap<>();
        /** Heartbeats since it last (re)registered. */
        int beatsSinceRegistration;

        /**
         * Its disks have been judged since it (re)registered ({@link DiskJudge#BEATS} heartbeats) and none is slow: a
         * copy here may stand in for one the planner deletes as extra. A server just back may hold its copies on a
         * disk that stalled, or died, while it was away (sim group seed 48: a server re-registered with copies on a disk
         * stalled for 20 s and then dead, and half a second later the planner deleted a good copy as the extra one).
         */
        boolean vouched() { return beatsSinceRegistration >= DiskJudge.BEATS && slowDisks.isEmpty(); }

        Server(String id) {
            this.id = id;
            this.topology = Topology.of(id);
        }

        ServerRef ref() { return new ServerRef(id, address); }

        /** The labels of {@link #domainsOf}, made once per topology: the planner asks for them per chunk per pass. */
        private Topology domainsOf;
        private String[] domains;

        /** The label of this server's failure domain at {@code level}. */
        String domain(StorageClass.Domain level) {
            if (domainsOf != topology) {
                domains = new String[StorageClass.Domain.values().length];
                for (StorageClass.Domain d : StorageClass.Domain.values()) {
                    domains[d.ordinal()] = switch (d) {
                        case SERVER -> "server:" + id;
                        case HOST -> "host:" + topology.host();
                        case RACK -> "rack:" + topology.rack();
                    };
                }
                domainsOf = topology;
            }
            return domains[level.ordinal()];
        }

        /**
         * Has a disk that can take a new chunk: one that is neither failed, full nor judged slow (before
         * its first heartbeat nothing is known against it).
         */
        boolean hasUsableDisk() {
            if (disks.isEmpty()) return true;
            for (DiskReport d : disks) if (d.state() == DiskState.OK && !slowDisks.contains(d.name())) return true;
            return false;
        }

        /** Can take new chunks: not draining, not (nearly) full, and with a usable disk. */
        boolean acceptsChunks(double fullFraction) { return !draining && usedFraction() < fullFraction && hasUsableDisk(); }

        /** Fraction of the advertised capacity in use (1 when no capacity is known). */
        double usedFraction() { return capacityBytes <= 0 ? 1.0 : (double) usedBytes / capacityBytes; }
    }

    /**
     * A live server holding a current copy of a chunk (see {@link dev.cairn.master.meta.ChunkRecord#current}):
     * the part it holds (for erasure-coded chunks, else 0) and the copy's version.
     */
    record Holder(Server server, int part, long version) {}

    /**
     * The current copies of one chunk: their servers in id order, with the part and the version each holds.
     * A handful of entries in parallel arrays: a map per chunk cost memory on every chunk and showed up in
     * simulator profiles.
     */
    private static final class Copies {
        private Server[] servers = new Server[3];
        private int[] parts = new int[3];
        private long[] versions = new long[3];
        /** Each copy's length as its server last reported it; {@link #UNREPORTED} for copies this master made. */
        private long[] lengths = new long[3];
        private int n;

        private int indexOf(String id) {
            for (int i = 0; i < n; i++) if (servers[i].id.equals(id)) return i;
            return -1;
        }

        boolean contains(String id) { return indexOf(id) >= 0; }

        /** Records the copy on {@code s}; true if that changed anything the planner looks at (a length alone does not). */
        boolean put(Server s, int part, long version, long length) {
            int i = indexOf(s.id);
            if (i >= 0) {
                lengths[i] = length;
                if (parts[i] == part && versions[i] == version) return false;
                parts[i] = part;
                versions[i] = version;
                return true;
            }
            if (n == servers.length) {
                servers = java.util.Arrays.copyOf(servers, 2 * n);
                parts = java.util.Arrays.copyOf(parts, 2 * n);
                versions = java.util.Arrays.copyOf(versions, 2 * n);
                lengths = java.util.Arrays.copyOf(lengths, 2 * n);
            }
            int at = n;
            while (at > 0 && servers[at - 1].id.compareTo(s.id) > 0) at--;
            System.arraycopy(servers, at, servers, at + 1, n - at);
            System.arraycopy(parts, at, parts, at + 1, n - at);
            System.arraycopy(versions, at, versions, at + 1, n - at);
            System.arraycopy(lengths, at, lengths, at + 1, n - at);
            servers[at] = s;
            parts[at] = part;
            versions[at] = version;
            lengths[at] = length;
            n++;
            return true;
        }

        /** Drops the copy on server {@code id}; true if there was one. */
        boolean remove(String id) {
            int i = indexOf(id);
            if (i < 0) return false;
            System.arraycopy(servers, i + 1, servers, i, n - i - 1);
            System.arraycopy(parts, i + 1, parts, i, n - i - 1);
            System.arraycopy(versions, i + 1, versions, i, n - i - 1);
            System.arraycopy(lengths, i + 1, lengths, i, n - i - 1);
            servers[--n] = null;
            return true;
        }

        boolean isEmpty() { return n == 0; }
    }

    private final TreeMap<String, Server> servers = new TreeMap<>();
    /** Told of every chunk whose copies change (the planner looks again at those). */
    private final java.util.function.LongConsumer changed;
    /** chunk id -> its current copies on live servers. Long keys hash deterministically. */
    private final Map<Long, Copies> locations = new HashMap<>();

    ChunkRegistry(java.util.function.LongConsumer changed) { this.changed = changed; }

    ChunkRegistry() { this(id -> {}); }

    /** A (re)registering server: forgets whatever it was thought to hold. */
    Server register(String id, Address address, long incarnation, long nowNanos) {
        Server s = servers.computeIfAbsent(id, Server::new);
        dropLocations(s);
        s.address = address;
        s.incarnation = incarnation;
        s.lastHeardNanos = nowNanos;
        s.alive = true;
        s.beatsSinceRegistration = 0;
        return s;
    }

    Server server(String id) { return servers.get(id); }

    /** Live servers in id order. */
    List<Server> live() {
        List<Server> out = new ArrayList<>();
        for (Server s : servers.values()) if (s.alive) out.add(s);
        return out;
    }

    int liveCount() {
        int n = 0;
        for (Server s : servers.values()) if (s.alive) n++;
        return n;
    }

    /** Marks servers not heard from since {@code deadline} dead and returns them. */
    List<Server> expire(long deadlineNanos) {
        List<Server> dead = new ArrayList<>();
        for (Server s : servers.values()) {
            if (s.alive && s.lastHeardNanos - deadlineNanos < 0) {
                s.alive = false;
                dropLocations(s);
                dead.add(s);
            }
        }
        return dead;
    }

    /**
     * A connection to or from {@code peer} broke: a live server reached through it is taken for down at
     * once (it re-registers with its next heartbeat if it was only the connection), so placement stops
     * choosing it without waiting out the heartbeat timeout.
     */
    List<Server> disconnected(Address peer) {
        List<Server> down = new ArrayList<>();
        for (Server s : servers.values()) {
            if (s.alive && (peer.equals(s.address) || peer.equals(s.controlAddress))) {
                s.alive = false;
                dropLocations(s);
                down.add(s);
            }
        }
        return down;
    }

    /** All servers ever registered since this master started, in id order. */
    java.util.Collection<Server> all() { return servers.values(); }

    /** Records that {@code s} holds an outdated copy of a chunk (at {@code version}). */
    void addStale(long chunkId, Server s, long version) {
        boolean moved = forgetLocation(chunkId, s.id);
        Long before = s.staleChunks.put(chunkId, version);
        if (moved || before == null || before != version) changed.accept(chunkId);
    }

    void removeStale(long chunkId, Server s) {
        if (s.staleChunks.remove(chunkId) != null) changed.accept(chunkId);
    }

    /** Live servers holding an outdated copy of the chunk, in id order. */
    List<Server> staleHolders(long chunkId) {
        List<Server> out = new ArrayList<>();
        for (Server s : servers.values()) if (s.alive && s.staleChunks.containsKey(chunkId)) out.add(s);
        return out;
    }

    /** Tells the watcher that every chunk {@code s} holds (current or stale) needs a new look: the server itself changed. */
    void touch(Server s) {
        for (long c : s.chunks) changed.accept(c);
        for (long c : s.staleChunks.keySet()) changed.accept(c);
    }

    /**
     * Records a current copy on {@code s}. Only a change tells the watcher: inventories repeat every copy a
     * server holds, and the planner must not look at them all each time. True if {@code s} was not known to
     * hold a current copy before.
     */
    boolean addLocation(long chunkId, Server s, int part, long version) { return addLocation(chunkId, s, part, version, UNREPORTED); }

    /**
     * The length of a copy this master made itself (a lease's chain, a planner copy): as long as the writer or
     * the copy made it, which the master does not hear; only a server's report gives a copy a length.
     */
    static final long UNREPORTED = Long.MAX_VALUE;

    /** As {@link #addLocation(long, Server, int, long)}, for a copy its server reported {@code length} bytes long. */
    boolean addLocation(long chunkId, Server s, int part, long version, long length) {
        assert s.alive;
        assert length >= 0 : "copy length " + length;
        boolean wasStale = !s.staleChunks.isEmpty() && s.staleChunks.remove(chunkId) != null;
        boolean moved = locations.computeIfAbsent(chunkId, k -> new Copies()).put(s, part, version, length);
        boolean added = s.chunks.add(chunkId);
        if (wasStale || moved) changed.accept(chunkId);
        return added;
    }

    void removeLocation(long chunkId, String serverId) {
        if (forgetLocation(chunkId, serverId)) changed.accept(chunkId);
    }

    /** Drops the current copy on one server, if there is one; true if there was. */
    private boolean forgetLocation(long chunkId, String serverId) {
        Copies set = locations.get(chunkId);
        boolean had = set != null && set.remove(serverId);
        if (set != null && set.isEmpty()) locations.remove(chunkId);
        Server s = servers.get(serverId);
        if (s != null) s.chunks.remove(chunkId);
        return had;
    }

    /** Forgets a chunk entirely (its file was removed); returns who held it. */
    List<Server> forget(long chunkId) {
        Copies set = locations.remove(chunkId);
        List<Server> out = new ArrayList<>();
        if (set != null) {
            for (int i = 0; i < set.n; i++) {
                Server s = set.servers[i];
                s.chunks.remove(chunkId);
                out.add(s);
            }
        }
        for (Server s : servers.values()) {
            if (s.staleChunks.remove(chunkId) != null && s.alive && (set == null || !set.contains(s.id))) out.add(s);
        }
        changed.accept(chunkId);
        return out;
    }

    /** The length server {@code serverId} last reported for its current copy of the chunk ({@link #UNREPORTED} if none). */
    long reportedLength(long chunkId, String serverId) {
        Copies set = locations.get(chunkId);
        int i = set == null ? -1 : set.indexOf(serverId);
        return i < 0 ? UNREPORTED : set.lengths[i];
    }

    /** Live servers holding a current copy, in id order, with the part and version each holds. */
    List<Holder> holders(long chunkId) {
        Copies set = locations.get(chunkId);
        if (set == null) return new ArrayList<>(0);
        List<Holder> out = new ArrayList<>(set.n);
        for (int i = 0; i < set.n; i++) out.add(new Holder(set.servers[i], set.parts[i], set.versions[i]));
        return out;
    }

    private void dropLocations(Server s) {
        s.epoch++;
        for (long c : s.staleChunks.keySet()) changed.accept(c);
        s.staleChunks.clear();
        for (long c : s.chunks) {
            changed.accept(c);
            Copies set = locations.get(c);
            if (set != null) {
                set.remove(s.id);
                if (set.isEmpty()) locations.remove(c);
            }
        }
        s.chunks.clear();
    }
}
