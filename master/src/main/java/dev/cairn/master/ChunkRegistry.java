package dev.cairn.master;

import dev.cairn.core.env.Address;
import dev.cairn.core.proto.Types.ServerRef;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
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
        long incarnation;
        long lastHeardNanos;
        long capacityBytes;
        long usedBytes;
        boolean alive;
        final TreeSet<Long> chunks = new TreeSet<>();

        Server(String id) { this.id = id; }

        ServerRef ref() { return new ServerRef(id, address); }
    }

    private final TreeMap<String, Server> servers = new TreeMap<>();
    /** chunk id -> ids of live servers holding its current version. Long keys hash deterministically. */
    private final Map<Long, TreeSet<String>> locations = new HashMap<>();

    /** A (re)registering server: forgets whatever it was thought to hold. */
    Server register(String id, Address address, long incarnation, long nowNanos) {
        Server s = servers.computeIfAbsent(id, Server::new);
        dropLocations(s);
        s.address = address;
        s.incarnation = incarnation;
        s.lastHeardNanos = nowNanos;
        s.alive = true;
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

    void addLocation(long chunkId, Server s) {
        assert s.alive;
        locations.computeIfAbsent(chunkId, k -> new TreeSet<>()).add(s.id);
        s.chunks.add(chunkId);
    }

    void removeLocation(long chunkId, String serverId) {
        TreeSet<String> set = locations.get(chunkId);
        if (set != null) {
            set.remove(serverId);
            if (set.isEmpty()) locations.remove(chunkId);
        }
        Server s = servers.get(serverId);
        if (s != null) s.chunks.remove(chunkId);
    }

    /** Forgets a chunk entirely (its file was removed); returns who held it. */
    List<Server> forget(long chunkId) {
        TreeSet<String> set = locations.remove(chunkId);
        List<Server> out = new ArrayList<>();
        if (set != null) {
            for (String id : set) {
                Server s = servers.get(id);
                s.chunks.remove(chunkId);
                out.add(s);
            }
        }
        return out;
    }

    /** Live servers holding the current version, in id order. */
    List<Server> holders(long chunkId) {
        TreeSet<String> set = locations.get(chunkId);
        List<Server> out = new ArrayList<>();
        if (set != null) for (String id : set) out.add(servers.get(id));
        return out;
    }

    private void dropLocations(Server s) {
        for (long c : s.chunks) {
            TreeSet<String> set = locations.get(c);
            if (set != null) {
                set.remove(s.id);
                if (set.isEmpty()) locations.remove(c);
            }
        }
        s.chunks.clear();
    }
}
