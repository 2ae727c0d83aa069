package dev.cairn.sim;

import dev.cairn.core.proto.Message;
import dev.cairn.core.proto.MasterProtocol.ChunkInventory;
import dev.cairn.core.proto.MasterProtocol.Register;
import dev.cairn.core.proto.MasterProtocol.ReportBad;
import dev.cairn.core.proto.Types.ChunkReport;
import dev.cairn.sim.runtime.SimHost;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * When the serving master was told that a chunkserver's copy is bad, seen on the wire outside the system:
 * a {@code ReportBad}, or a registration or inventory listing the copy as bad, delivered to the master that
 * serves at that moment. A planner that keeps a damaged copy it was never told of is not wrong (it cannot
 * know); one that keeps a copy it was told is bad is, and that is what a master that ignored the report
 * would do. The checkers ask this, not the master, which of the two happened.
 */
final class BadCopyNotices {
    private final SimCluster cluster;
    /** "server/chunk" -> the instants the serving master was told that copy is bad, in time order. */
    private final Map<String, List<Long>> told = new HashMap<>();

    BadCopyNotices(SimCluster cluster) { this.cluster = cluster; }

    /** Every message delivered (the simulation's delivery listener). */
    void delivered(long now, SimHost to, Message m) {
        if (m instanceof ReportBad r) {
            if (serving(to)) note(now, r.serverId(), r.chunkId());
        } else if (m instanceof Register r) {
            reports(now, to, r.serverId(), r.chunks());
        } else if (m instanceof ChunkInventory i) {
            reports(now, to, i.serverId(), i.chunks());
        }
    }

    private void reports(long now, SimHost to, String server, List<ChunkReport> chunks) {
        if (!serving(to)) return;
        for (ChunkReport c : chunks) if (c.bad()) note(now, server, c.chunkId());
    }

    /** Whether {@code to} is the master serving now (a group between leaders has none: what it is told then may be lost). */
    private boolean serving(SimHost to) { return cluster.masters().contains(to) && cluster.master() == to && cluster.servingMaster() != null; }

    private void note(long now, String server, long chunkId) { told.computeIfAbsent(server + "/" + chunkId, k -> new ArrayList<>()).add(now); }

    /** Whether the serving master was told, in {@code [from, to]}, that {@code server}'s copy of {@code chunkId} is bad. */
    boolean toldBetween(String server, long chunkId, long from, long to) {
        for (long t : told.getOrDefault(server + "/" + chunkId, List.of())) if (t >= from && t <= to) return true;
        return false;
    }
}
