package dev.cairn.sim;

import dev.cairn.core.env.KvBatch;
import dev.cairn.core.proto.CodecException;
import dev.cairn.core.testing.MemKv;
import dev.cairn.master.MasterConfig;
import dev.cairn.master.meta.LogEntry;
import dev.cairn.master.meta.MetaCommand;
import dev.cairn.master.meta.ReplicaMetaLog;
import dev.cairn.master.namespace.Namespace;
import dev.cairn.sim.runtime.SimRaft;
import dev.cairn.sim.runtime.Simulation;
import java.util.Arrays;

/**
 * The checkers' own replica of a master group's metadata: every entry the group commits, applied in order to
 * a namespace of its own, as a master that replays the log would. With a group, this (not any master's store)
 * is "the metadata as a power loss would leave it": what a majority's logs hold survives anything the fault
 * catalog does to masters, and a master's store may lag its log (it replays the rest at restart).
 */
final class CommittedState {
    private final MemKv kv = new MemKv();
    private final Namespace namespace = Namespace.uncached(kv, MasterConfig.DEFAULT_GOAL);

    CommittedState(SimRaft raft, Simulation sim) {
        raft.onCommit((index, e) -> {
            LogEntry entry;
            try {
                entry = LogEntry.decode(e.bytes());
            } catch (CodecException x) {
                sim.violation("raft", "committed entry " + index + " does not decode: " + x.getMessage());
                return;
            }
            for (MetaCommand<?> command : entry.commands()) {
                KvBatch batch = new KvBatch();
                try {
                    namespace.apply(command, batch);
                } catch (RuntimeException refused) {
                    batch = new KvBatch(); // refused on every replica alike: it writes nothing
                }
                kv.write(batch, true);
            }
            KvBatch applied = new KvBatch();
            applied.put(ReplicaMetaLog.APPLIED_KEY, java.nio.ByteBuffer.allocate(16).putLong(e.term()).putLong(index).array());
            kv.write(applied, true);
        });
    }

    Namespace namespace() { return namespace; }

    /**
     * Every master replica that applied the whole committed log holds exactly this replica's store, key for key
     * (whether it got there by applying entries, replaying them after a restart or installing a snapshot); one
     * that is up and has not caught up by now is a violation too.
     */
    void checkReplicas(java.util.List<dev.cairn.sim.runtime.SimHost> masters, long committedCount, Simulation sim) {
        for (dev.cairn.sim.runtime.SimHost h : masters) {
            if (!h.isUp() || !(h.node() instanceof dev.cairn.master.MasterReplica r)) continue;
            if (r.appliedIndex() != committedCount) {
                sim.violation("raft", h.name() + " applied the log up to entry " + r.appliedIndex() + " of " + committedCount + " after the run");
                continue;
            }
            String diff = firstDifference(h.visibleKv(), kv);
            if (diff != null) sim.violation("raft", h.name() + "'s store differs from the committed log's state: " + diff);
        }
    }

    /** The first key where two stores differ, described, or null if they hold the same entries. */
    private static String firstDifference(dev.cairn.core.env.KvStore a, dev.cairn.core.env.KvStore b) {
        java.util.List<byte[][]> left = entries(a), right = entries(b);
        for (int i = 0; i < Math.max(left.size(), right.size()); i++) {
            byte[][] x = i < left.size() ? left.get(i) : null, y = i < right.size() ? right.get(i) : null;
            if (x != null && y != null && Arrays.equals(x[0], y[0]) && Arrays.equals(x[1], y[1])) continue;
            if (x == null || (y != null && Arrays.compareUnsigned(x[0], y[0]) > 0)) return "missing key " + show(y[0]);
            if (y == null || Arrays.compareUnsigned(x[0], y[0]) < 0) return "extra key " + show(x[0]);
            return "key " + show(x[0]) + " holds another value";
        }
        return null;
    }

    private static java.util.List<byte[][]> entries(dev.cairn.core.env.KvStore s) {
        java.util.List<byte[][]> out = new java.util.ArrayList<>();
        s.scan(new byte[0], (k, v) -> out.add(new byte[][] {k, v}));
        return out;
    }

    private static String show(byte[] key) {
        StringBuilder b = new StringBuilder();
        for (byte x : key) b.append(x >= 0x20 && x < 0x7f ? String.valueOf((char) x) : String.format("\\x%02x", x & 0xff));
        return b.toString();
    }
}
