package dev.cairn.sim;

import dev.cairn.core.proto.CairnException;
import dev.cairn.core.proto.StorageClass;
import dev.cairn.master.meta.ChunkRecord;
import dev.cairn.master.namespace.InodeRecord;
import dev.cairn.master.namespace.Namespace;
import dev.cairn.sim.runtime.Simulation;
import dev.cairn.sim.workload.FileModel;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;

/**
 * The ack-time durability witness: the moment a client hears that data is stable (a sync or close, an NFS
 * COMMIT or FILE_SYNC write), the disks' durable images must already hold it on every copy its class
 * requires, and the master's durable metadata must already hold the commit. Anything less is a violation at
 * that instant, naming the chunk and what each copy holds: the contract is checked where it is made, not
 * left to the end of a run, where a lost acknowledgement shows only if later faults happen to destroy the
 * other copies first.
 *
 * <p>Judged from ground truth alone: the master's key-value store as a power loss now would leave it, and
 * each chunkserver disk's durable image ({@link Holdings}). A copy a fault destroyed since the acknowledged
 * writes were issued is excused (the system cannot keep what a fault takes); nothing else is.
 */
final class Witness {
    private final Simulation sim;
    private final SimCluster cluster;
    private final FaultHistory history;
    private final LossModel losses;
    private final Holdings holdings;
    private long checks;

    Witness(Simulation sim, SimCluster cluster, FaultHistory history, LossModel losses, Holdings holdings) {
        this.sim = sim;
        this.cluster = cluster;
        this.history = history;
        this.losses = losses;
        this.holdings = holdings;
    }

    long checks() { return checks; }

    /**
     * {@code what} (e.g. "close of /d1/f3") was acknowledged: {@code acked} are the writes it covered, issued
     * from {@code issuedAt} on; {@code model} already counts them as acknowledged. {@code cls} is the class the
     * file was written in, or null for a change in place of a file whose class may have changed since.
     */
    void acknowledged(String what, String path, FileModel model, List<FileModel.Op> acked, long issuedAt, StorageClass cls, int chunkSize) {
        checks++;
        Namespace ns = durableNamespace(cluster);
        cls = cls == null ? null : effective(cls);
        InodeRecord f;
        try {
            f = ns.resolve(path);
        } catch (CairnException e) {
            sim.violation("durability", "at the " + what + ": the master's durable metadata has no " + path + " (" + e.getMessage() + ")");
            return;
        }
        // the class the chunks are kept in: the file's, or its archive rule's target once the archiver rewrote it
        StorageClass kept = effective(f.storageClass());
        if (cls == null) cls = kept; // a change in place: whatever class the file has now (the operator may have changed it)
        losses.track(f.inode(), path, cls, chunkSize);
        if (!kept.equals(cls) && !(cls.archiveClass() != null && kept.equals(cls.archiveClass()))) {
            sim.violation("metadata", "at the " + what + ": the master's durable record keeps " + path + " as " + kept + ", written as " + cls);
            return;
        }
        cls = kept;
        if (f.size() < model.minLength()) {
            sim.violation("durability", "at the " + what + ": the master's durable size of " + path + " is " + f.size() + ", "
                    + model.minLength() + " bytes were acknowledged (and no truncate may have cut them)");
            return;
        }
        Set<Integer> touched = new TreeSet<>();
        // a write cut by a size change later in the same acknowledgement (an NFS client's writes, SETATTR, writes,
        // then one COMMIT) left only what is below the cut: the chunks past it may be holes, with no record at all
        long cut = Long.MAX_VALUE;
        for (int k = acked.size() - 1; k >= 0; k--) {
            FileModel.Op op = acked.get(k);
            if (op.truncate()) { cut = Math.min(cut, op.offset()); continue; }
            long end = Math.min(op.end(), cut);
            if (op.length() == 0 || end <= op.offset()) continue;
            for (long i = op.offset() / chunkSize; i <= (end - 1) / chunkSize; i++) touched.add((int) i);
        }
        for (int index : touched) {
            if ((long) index * chunkSize >= model.minLength()) continue; // truncated away since, or may have been
            List<ChunkRecord> recs = ns.chunks(f.inode(), index, 1);
            if (recs.isEmpty()) {
                sim.violation("durability", "at the " + what + ": the master's durable metadata has no chunk " + index + " of " + path);
                continue;
            }
            ChunkRecord rec = recs.get(0);
            Holdings.Judgement j = holdings.judge(cluster, rec.chunkId(), index, chunkSize, cls, model, rec);
            // a host a fault ever damaged this chunk on may lack bytes acknowledged before this write, which the write
            // does not rewrite (a block a misdirected write left stale, found only by reading it): excused, as the
            // scrubber and the planner repair it
            Set<String> damaged = history.destroyedSince(rec.chunkId(), 0);
            String missing = missing(j, damaged);
            if (missing == null && !j.readable() && !damaged.isEmpty()) {
                // durable on every copy at its sync, then faults took more copies than the class tolerates before
                // this acknowledgement came (sim seed 4491 at 30 s: a part's disk died and another part's bit flipped
                // while the writer waited for room for its next chunk): lost to those faults, not to the system
                losses.lostBeforeAcknowledgement(rec.chunkId(), String.format(java.util.Locale.ROOT,
                        "t=%.3fs lost-before-ack at the %s, chunk %d (%s, index %d of %s) was unreadable already: faults since its sync destroyed copies on %s; held by %s",
                        sim.now() / 1e9, what, rec.chunkId(), cls, index, path, damaged, j.parts()));
            }
            if (missing != null) {
                sim.violation("durability", "at the " + what + " (" + cls + "): chunk " + rec.chunkId() + " (index " + index + ", "
                        + j.ackedInChunk() + " acknowledged bytes) " + missing + "; durable copies: " + j.describe());
            }
        }
    }

    /**
     * The master's metadata as a power loss now would leave it (read only): a single master's durable store, or
     * a group's committed log as the checkers' own replica applied it.
     */
    static Namespace durableNamespace(SimCluster cluster) {
        if (cluster.committed() != null) return cluster.committed().namespace();
        return Namespace.uncached(cluster.master().durableKv(), dev.cairn.master.MasterConfig.DEFAULT_GOAL);
    }

    /** The class a file of class {@code cls} is kept in (the default stands for the master's default goal). */
    static StorageClass effective(StorageClass cls) {
        return cls.equals(StorageClass.DEFAULT) ? StorageClass.replicated(dev.cairn.master.MasterConfig.DEFAULT_GOAL) : cls;
    }

    /** What the chunk lacks of the copies its class requires, or null; hosts a fault destroyed a copy on since count as holding. */
    private static String missing(Holdings.Judgement j, Set<String> destroyed) {
        StorageClass cls = j.cls();
        if (!cls.isEc()) {
            TreeSet<String> hosts = j.hosts();
            hosts.addAll(destroyed);
            return hosts.size() >= cls.replicas() ? null : "is durable on " + j.hosts() + ", " + cls.replicas() + " copies required";
        }
        // each part on a host of its own; a host a fault destroyed a copy on may have held one of the lacking ones
        TreeSet<String> hosts = new TreeSet<>(destroyed);
        var parts = j.parts();
        List<Integer> lacking = new java.util.ArrayList<>();
        for (int p : j.neededParts()) {
            TreeSet<String> on = parts.get(p);
            if (on == null) lacking.add(p); else hosts.addAll(on);
        }
        if (lacking.size() > destroyed.size()) return "has no durable copy of part(s) " + lacking;
        if (hosts.size() < j.neededParts().size()) return "has its " + j.neededParts().size() + " parts on only " + hosts.size() + " hosts " + hosts;
        return null;
    }
}
