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
        /** Where its registrations and heartbeats come from (its connection to the master). */
        Address controlAddress;
        long incarnation;
        long lastHeardNanos;
        long capacityBytes;
        long usedBytes;
        boolean alive;
        final TreeSet<Long> chunks = new TreeSet<>();

        Server(String id) { this.id = id; }

        ServerRef ref() { return new ServerRef(id, address); }
    }

    /** A live server holding the current version of a chunk (part index for erasure-coded chunks, else 0). */
    record Holder(Server server, int part) {}

    private final TreeMap<String, Server> servers = new TreeMap<>();
    /** chunk id -> (id of a live server holding its current version -> part). Long keys hash deterministically. */
    private final Map<Long, TreeMap<String, Integer>> locations = new HashMap<>();

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

    void addLocation(long chunkId, Server s, int part) {
        assert s.alive;
        locations.computeIfAbsent(chunkId, k -> new TreeMap<>()).put(s.id, part);
        s.chunks.add(chunkId);
    }

    void removeLocation(long chunkId, String serverId) {
        TreeMap<String, Integer> set = locations.get(chunkId);
        if (set != null) {
            set.remove(serverId);
            if (set.isEmpty()) locations.remove(chunkId);
        }
        Server s = servers.get(serverId);
        if (s != null) s.chunks.remove(chunkId);
    }

    /** Forgets a chunk entirely (its file was removed); returns who held it. */
    List<Server> forget(long chunkId) {
        TreeMap<String, Integer> set = locations.remove(chunkId);
        List<Server> out = new ArrayList<>();
        if (set != null) {
            for (String id : set.keySet()) {
                Server s = servers.get(id);
                s.chunks.remove(chunkId);
                out.add(s);
            }
        }
        return out;
    }

    /** Live servers holding the current version, in id order, with the part each holds. */
    List<Holder> holders(long chunkId) {
        TreeMap<String, Integer> set = locations.get(chunkId);
        List<Holder> out = new ArrayList<>();
        if (set != null) for (Map.Entry<String, Integer> e : set.entrySet()) out.add(new Holder(servers.get(e.getKey()), e.getValue()));
        return out;
    }

    private void dropLocations(Server s) {
        for (long c : s.chunks) {
            TreeMap<String, Integer> set = locations.get(c);
            if (set != null) {
                set.remove(s.id);
                if (set.isEmpty()) locations.remove(c);
            }
        }
        s.chunks.clear();
    }
}
