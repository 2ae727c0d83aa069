package dev.cairn.sim;

import dev.cairn.core.proto.StorageClass;
import dev.cairn.master.meta.ChunkRecord;
import dev.cairn.master.namespace.Namespace;
import dev.cairn.sim.runtime.SimHost;
import dev.cairn.sim.workload.FileModel;
import dev.cairn.sim.workload.Oracle;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * Which acknowledged chunks faults were entitled to destroy, decided outside the system. Just before a
 * fault destroys data (a host or disk lost for good, a bit flipped, a write misdirected), the chunks it
 * hits are judged on the disks' durable images ({@link Holdings}): if the chunk was readable from the copies
 * then holding its acknowledged bytes and is not without the ones this fault destroys, its loss is excused,
 * with the fault named as the reason. Nothing else excuses a loss: not a fault long ago whose copy was
 * repaired since, not a stale or never-durable copy destroyed (it held nothing), not a lost neighbour chunk
 * of the same file.
 */
final class LossModel {
    /** A file whose acknowledged bytes the model guards: where it is, its class and chunk size. */
    record Tracked(String path, StorageClass cls, int chunkSize) {}

    private final SimCluster cluster;
    private final Oracle oracle;
    private final Holdings holdings;
    /** Inode -> the acknowledged file it is (from the witness, which found it in the master's durable metadata). */
    private final Map<Long, Tracked> tracked = new HashMap<>();
    /** Chunk id -> why its loss is excused. */
    private final TreeMap<Long, String> excused = new TreeMap<>();
    /**
     * Copies a misdirected write hit ("host/disk/chunk" -> what and when), until the copy is deleted. Its damage becomes
     * durable only at the copy's next sync, so the durable image judged at a later fault may still look sound; such a
     * copy is counted gone from when the write landed (60 s sim seed 9698 at 10 s: a disk death took the other copy
     * between the misdirected write and its sync, and the loss was blamed on nothing).
     */
    private final Map<String, String> doomed = new HashMap<>();

    LossModel(SimCluster cluster, Oracle oracle, Holdings holdings) {
        this.cluster = cluster;
        this.oracle = oracle;
        this.holdings = holdings;
    }

    /** The witness found an acknowledged file at {@code inode}. */
    void track(long inode, String path, StorageClass cls, int chunkSize) { tracked.put(inode, new Tracked(path, Witness.effective(cls), chunkSize)); }

    /**
     * A fault ({@code fault}, for the reason) is about to destroy the copies of {@code chunkIds} on
     * {@code host} (on its disk {@code disk}, or on all its disks if null): the chunks whose last readable set
     * of holders it breaks are excused from now on.
     */
    void beforeDestroying(long now, SimHost host, String disk, Collection<Long> chunkIds, String fault) {
        if (chunkIds.isEmpty() || tracked.isEmpty()) return;
        Namespace ns = Witness.durableNamespace(cluster);
        for (long id : chunkIds) {
            if (excused.containsKey(id)) continue;
            ChunkRecord rec = ns.chunk(id);
            if (rec == null) continue;
            Tracked t = tracked.get(rec.inode());
            if (t == null) continue;
            FileModel model = oracle.acknowledgedModel(t.path());
            if (model == null) continue; // removed
            // a chunk the acknowledged content reaches, even if a truncate whose outcome is unknown may have cut it:
            // if it did not, the chunk is read at the end, and its loss needs an excuse
            long inChunk = model.ackedLength() - (long) rec.index() * t.chunkSize();
            if (inChunk <= 0) continue;
            // the class the chunk is kept in now (a class change or an archive rewrite changes it)
            StorageClass cls = Witness.effective(ns.inode(rec.inode()).storageClass());
            Holdings.Judgement j = holdings.judge(cluster, id, rec.index(), t.chunkSize(), cls, model, rec);
            java.util.function.Predicate<Holdings.Holder> hit = h -> h.host().equals(host.name()) && (disk == null || h.disk().equals(disk));
            List<String> alsoDoomed = new ArrayList<>();
            for (Holdings.Holder h : j.holders()) {
                String d = doomed.get(key(h.host(), h.disk(), id));
                if (d != null && !hit.test(h)) alsoDoomed.add(d);
            }
            java.util.function.Predicate<Holdings.Holder> gone = hit.or(h -> doomed.containsKey(key(h.host(), h.disk(), id)));
            if (j.readable() && !j.readableWithout(gone)) {
                excused.put(id, String.format(java.util.Locale.ROOT, "t=%.3fs %s on %s%s took the last readable set of chunk %d (%s, index %d of %s): held by %s%s",
                        now / 1e9, fault, host.name(), disk == null ? "" : "/" + disk, id, cls, rec.index(), t.path(), j.parts(),
                        alsoDoomed.isEmpty() ? "" : ", of which a " + String.join(", a ", alsoDoomed) + " had already doomed a copy"));
            }
        }
    }

    /** A misdirected write landed in the copy of chunk {@code id} on {@code host}/{@code disk} (judged by {@link #beforeDestroying} first). */
    void misdirected(long now, SimHost host, String disk, long id) {
        doomed.put(key(host.name(), disk, id), String.format(java.util.Locale.ROOT, "misdirected write on %s/%s at %.3fs", host.name(), disk, now / 1e9));
    }

    /** The copy of chunk {@code id} on {@code host}/{@code disk} is being deleted: a later one there is a new copy. */
    void copyDeleted(String host, String disk, long id) { doomed.remove(key(host, disk, id)); }

    private static String key(String host, String disk, long id) { return host + "/" + disk + "/" + id; }

    /**
     * Chunk {@code id} was acknowledged unreadable: faults in the history had destroyed its copies between its
     * sync and the acknowledgement ({@code why}, from the witness, which checked them at that moment).
     */
    void lostBeforeAcknowledgement(long id, String why) { excused.putIfAbsent(id, why); }

    /**
     * A planner deleted a copy of chunk {@code id} that its last readable set needed, trusting copies that faults
     * had damaged without the master being told ({@code why}): the faults took the chunk, not the delete.
     */
    void deletedTrustingUnseenDamage(long id, String why) { excused.putIfAbsent(id, why); }

    /** The acknowledged file at {@code inode}, or null. */
    Tracked tracked(long inode) { return tracked.get(inode); }

    /** Why the loss of {@code chunkId} is excused, or null if it is not. */
    String excuse(long chunkId) { return excused.get(chunkId); }

    /** Every excuse, by chunk. */
    List<String> excuses() { return new ArrayList<>(excused.values()); }
}
