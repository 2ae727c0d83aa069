package dev.cairn.sim;

import dev.cairn.core.chunk.ChunkFormat;
import dev.cairn.core.chunk.ChunkFormat.Header;
import dev.cairn.core.proto.StorageClass;
import dev.cairn.master.meta.ChunkRecord;
import dev.cairn.master.namespace.Namespace;
import dev.cairn.sim.GroundTruth.Copy;
import dev.cairn.sim.runtime.SimDisk;
import dev.cairn.sim.runtime.SimHost;
import dev.cairn.sim.runtime.Simulation;
import dev.cairn.sim.workload.FileModel;
import dev.cairn.sim.workload.Oracle;
import java.util.ArrayList;
import java.util.List;
import java.util.TreeMap;

/**
 * Two invariants checked the moment they could break, on the disks' durable images:
 *
 * <ul>
 *   <li><b>A power loss never takes back what was durable.</b> It may drop or tear what was not synced, but
 *       each chunk file's newest durable header, and the data it vouches for, must come through: after the
 *       power loss the best valid header is the same one, or a newer one whose every block verifies. A header
 *       written over the newest durable one, or made durable before its data, breaks this on the first torn
 *       power loss that lands in between, on one copy, long before a run happens to tear every copy of a
 *       chunk at once (kind {@code torn-durable}).</li>
 *   <li><b>No copy the cluster needs is deleted.</b> When a chunkserver deletes a chunk file that durably
 *       holds acknowledged bytes, the other holders must still make up the class's goal (copies on distinct
 *       hosts, or every part): tidying drops extra, leaving and stale copies only once the chunk is at its
 *       goal, and a copy moves by being copied before it is dropped (kind {@code redundancy}).</li>
 * </ul>
 */
final class DurableStateChecks {
    private final Simulation sim;
    private final SimCluster cluster;
    private final FaultHistory history;
    private final LossModel losses;
    private final Oracle oracle;
    private final Holdings holdings;
    private final BadCopyNotices notices;

    DurableStateChecks(Simulation sim, SimCluster cluster, FaultHistory history, LossModel losses, Oracle oracle, Holdings holdings, BadCopyNotices notices) {
        this.sim = sim;
        this.cluster = cluster;
        this.history = history;
        this.losses = losses;
        this.oracle = oracle;
        this.holdings = holdings;
        this.notices = notices;
    }

    /** Wraps a torn power loss of {@code disk}: snapshots each chunk file's durable copy, tears, and compares. */
    void powerLoss(SimHost host, SimDisk disk, Runnable tear) {
        TreeMap<String, Copy> before = new TreeMap<>();
        for (String name : disk.durableFiles()) {
            if (ChunkFormat.chunkIdOf(name) < 0) continue;
            Copy c = GroundTruth.durableCopy(host.name(), disk, name);
            if (c.version() >= 0 && c.intact()) before.put(name, c);
        }
        tear.run();
        for (var e : before.entrySet()) {
            Copy b = e.getValue();
            if (!history.destroyedSince(b.chunkId(), 0).isEmpty() && history.destroyedSince(b.chunkId(), 0).contains(host.name())) continue; // a fault's damage
            Copy a = GroundTruth.durableCopy(host.name(), disk, e.getKey());
            String wrong = null;
            if (a.version() < 0) wrong = "has no valid header left";
            else if (a.seq() < b.seq()) wrong = "went back to header seq " + a.seq() + " (v" + a.version() + ")";
            else if (!a.intact()) wrong = "has header seq " + a.seq() + " (v" + a.version() + ", " + a.length() + " bytes) whose data did not all land: " + a.note();
            if (wrong != null) {
                sim.violation("torn-durable", "a power loss of " + host.name() + " tore what was durable: chunk " + b.chunkId() + " on " + disk.name()
                        + " was durable at header seq " + b.seq() + " (v" + b.version() + ", " + b.length() + " bytes) and now " + wrong);
            }
        }
    }

    /**
     * A write to a chunk file must never land on its newest durable header: a header is updated in the other
     * slot, so that a power loss in the middle leaves the last durable one whole (a header spans sectors once a
     * chunk has many blocks, and not every device writes even one sector atomically).
     */
    void writing(SimHost host, SimDisk disk, String file, long offset, int length) {
        if (ChunkFormat.chunkIdOf(file) < 0 || disk.peekDurableLength(file) < 0) return;
        if (!disk.peekSameFile(file)) return; // a new file under a name whose old file is still the durable one
        // a fault damaged this copy (a misdirected write put a header where the chunkserver did not think it was)
        if (history.destroyedSince(ChunkFormat.chunkIdOf(file), 0).contains(host.name())) return;
        if (offset >= ChunkFormat.DATA_OFFSET) {
            writingData(host, disk, file, offset, length);
            return;
        }
        Header durable = GroundTruth.durableHeader(disk, file); // the header alone: its blocks are not this check's
        if (durable == null) return;
        int slot = GroundTruth.durableSlot(disk, file, durable.seq());
        long from = ChunkFormat.slotOffset(slot), to = from + ChunkFormat.SLOT_SIZE;
        if (offset < to && offset + length > from) {
            sim.violation("torn-durable", host.name() + " wrote " + length + " bytes at " + offset + " of chunk " + durable.chunkId() + " on " + disk.name()
                    + ", over header slot " + slot + ", which holds its newest durable header (seq " + durable.seq() + ", v" + durable.version() + ")");
        }
    }

    /**
     * Nor on a page of data the newest durable header names (below its length): an overwrite goes to the page's
     * other place, so that a power loss in the middle leaves every acknowledged byte as it was. Judged when the
     * write is issued, not only when a torn power loss happens to land on one.
     */
    private void writingData(SimHost host, SimDisk disk, String file, long offset, int length) {
        Header h = GroundTruth.durableHeader(disk, file);
        if (h == null) return;
        long shadowFrom = ChunkFormat.DATA_OFFSET + (long) h.capacity() * ChunkFormat.BLOCK_SIZE;
        long first = offset - (offset - ChunkFormat.DATA_OFFSET) % ChunkFormat.PAGE_SIZE;
        for (long at = first; at < offset + length; at += ChunkFormat.PAGE_SIZE) {
            boolean shadow = at >= shadowFrom;
            long page = (at - (shadow ? shadowFrom : ChunkFormat.DATA_OFFSET)) / ChunkFormat.PAGE_SIZE;
            if (page * ChunkFormat.PAGE_SIZE >= h.length()) continue; // past what the header vouches for
            if (h.shadowed((int) page) == shadow) {
                sim.violation("torn-durable", host.name() + " wrote " + length + " bytes at " + offset + " of chunk " + h.chunkId() + " on " + disk.name()
                        + ", over page " + page + (shadow ? " at its shadow place" : " at its place") + ", where its newest durable header (seq "
                        + h.seq() + ", v" + h.version() + ", " + h.length() + " bytes) has it: acknowledged bytes a power loss now would tear");
                return;
            }
        }
    }

    /** A chunkserver deletes {@code file} from {@code disk}: it must not be a copy the chunk's goal still needs. */
    void deleting(SimHost host, SimDisk disk, String file) {
        long id = ChunkFormat.chunkIdOf(file);
        if (id < 0 || disk.peekDurableLength(file) < 0) return; // a name never durable held nothing acknowledged
        // a file made anew under a name whose old file is still the durable one (deleted, the directory not synced
        // since): deleting the new file deletes nothing durable, and the old one's deletion was judged when it came
        if (!disk.peekSameFile(file)) return;
        Namespace ns = Witness.durableNamespace(cluster);
        ChunkRecord rec = ns.chunk(id);
        if (rec == null) return; // the file was removed or truncated (durably) first: its chunks go
        if (!rec.committed()) return; // no commit named it: a hole to readers, whatever its copies hold
        LossModel.Tracked t = losses.tracked(rec.inode());
        if (t == null) return;
        FileModel model = oracle.acknowledgedModel(t.path());
        if (model == null || model.minLength() <= (long) rec.index() * t.chunkSize()) return;
        StorageClass cls = Witness.effective(ns.inode(rec.inode()).storageClass()); // as kept now (class changes, archive rewrites)
        Holdings.Judgement j = holdings.judge(cluster, id, rec.index(), t.chunkSize(), cls, model, rec);
        Holdings.Holder gone = null;
        for (Holdings.Holder h : j.holders()) if (h.host().equals(host.name()) && h.disk().equals(disk.name())) gone = h;
        if (gone == null) return; // it held nothing acknowledged (stale, short, never durable, corrupt)
        // a server keeps one copy of a chunk: of two on its disks (one on a disk that failed and came back) it
        // keeps the one the master counts on; the other never counted toward the goal
        for (SimDisk d : host.disks()) if (d != disk && !d.isDead() && d.peekLength(file) >= 0) return;
        Holdings.Holder deleted = gone;
        List<Holdings.Holder> rest = new ArrayList<>(j.holders());
        rest.remove(deleted);
        // fine if the rest still make up the goal, or if the copy added nothing (a second copy of a part, a second on a host)
        if (enough(rest, cls, java.util.Map.of()) || redundancy(rest, cls) == redundancy(j.holders(), cls)) return;
        java.util.Map<String, Integer> unseen = unknowinglyLost(id, j);
        if (enough(rest, cls, unseen)) {
            // the goal is met only counting copies faults damaged unseen: the planner could not know, so if the chunk
            // is now unreadable, those faults took it (10 s sim seed 6389: bit flips on two ec(2,1) parts nobody had
            // read yet, then the sound extra copy of one of them deleted)
            if (j.readable() && !j.readableWithout(h -> h.equals(deleted))) {
                losses.deletedTrustingUnseenDamage(id, String.format(java.util.Locale.ROOT,
                        "t=%.3fs unseen-damage of chunk %d: %s deleted its copy (%s, index %d of %s, part %d), the last readable set's, trusting copies faults had damaged unseen: %s",
                        sim.now() / 1e9, id, host.name(), cls, rec.index(), t.path(), deleted.part(), describeUnseen(id, unseen)));
            }
            return;
        }
        sim.violation("redundancy", host.name() + " deleted its copy of chunk " + id + " (index " + rec.index() + " of " + t.path() + ", " + cls
                + ", part " + deleted.part() + ") on " + disk.name() + ", which durably holds acknowledged bytes, leaving " + describe(rest)
                + ": below the goal; durable copies were: " + j.describe());
    }

    /** How long after a fault destroyed a copy the cluster may still count it (the master hears of a lost host after 5 s). */
    static final long UNNOTICED_NANOS = 10_000_000_000L;

    /**
     * Copies of the chunk a fault destroyed that the cluster may still count, host -> the part it held: a copy
     * corrupted on a disk that is still there which the serving master was not told is bad (by a report or an
     * inventory, {@link BadCopyNotices}) more than {@link #UNNOTICED_NANOS} ago, or any destroyed in the last
     * {@link #UNNOTICED_NANOS}. A planner that drops an extra copy trusting one of these is not wrong.
     */
    private java.util.Map<String, Integer> unknowinglyLost(long chunkId, Holdings.Judgement j) {
        java.util.Map<String, Integer> out = new java.util.TreeMap<>();
        java.util.Set<String> recent = history.destroyedSince(chunkId, sim.now() - UNNOTICED_NANOS);
        String name = ChunkFormat.fileName(chunkId);
        for (String host : history.destroyedSince(chunkId, 0)) {
            SimHost h = null;
            for (SimHost x : cluster.chunkservers()) if (x.name().equals(host)) h = x;
            if (h == null) continue;
            Integer part = null;
            for (Copy k : j.looked()) if (k.host().equals(host)) part = Math.max(0, k.part());
            boolean stillThere = false;
            if (!h.isLost()) for (SimDisk d : h.disks()) if (!d.isDead() && d.peekLength(name) >= 0) stillThere = true;
            // a damaged copy the master was told is bad (long enough ago for the planner to have heard) is not unseen:
            // a planner that still counts it is wrong
            long damaged = history.lastDestroyed(chunkId, host);
            if (stillThere && !recent.contains(host) && notices.toldBetween(host, chunkId, damaged, sim.now() - UNNOTICED_NANOS)) continue;
            if (stillThere || recent.contains(host)) out.put(host, part == null ? -1 : part);
        }
        return out;
    }

    private String describeUnseen(long chunkId, java.util.Map<String, Integer> unseen) {
        StringBuilder sb = new StringBuilder();
        for (var e : unseen.entrySet()) {
            sb.append(sb.length() == 0 ? "" : ", ").append(e.getKey()).append(e.getValue() >= 0 ? " part " + e.getValue() : "")
                    .append(String.format(java.util.Locale.ROOT, " (damaged at %.3fs)", history.lastDestroyed(chunkId, e.getKey()) / 1e9));
        }
        return sb.toString();
    }

    /**
     * Holders that make up the class's goal: replicas on that many hosts, or every part on hosts of their own;
     * {@code maybe} (host -> part, -1 unknown) are copies the cluster cannot yet know it lost, counted too.
     */
    private static boolean enough(List<Holdings.Holder> holders, StorageClass cls, java.util.Map<String, Integer> maybe) {
        java.util.TreeSet<String> hosts = new java.util.TreeSet<>();
        java.util.TreeSet<Integer> parts = new java.util.TreeSet<>();
        for (Holdings.Holder h : holders) {
            hosts.add(h.host());
            parts.add(h.part());
        }
        int unknownParts = 0;
        for (var e : maybe.entrySet()) {
            if (!hosts.add(e.getKey())) continue;
            if (e.getValue() >= 0) parts.add(e.getValue()); else unknownParts++;
        }
        return cls.isEc() ? parts.size() + unknownParts >= cls.parts() && hosts.size() >= cls.parts() : hosts.size() >= cls.replicas();
    }

    /** Distinct hosts holding a replica, or distinct parts held (each counted once). */
    private static int redundancy(List<Holdings.Holder> holders, StorageClass cls) {
        java.util.TreeSet<Object> seen = new java.util.TreeSet<>();
        for (Holdings.Holder h : holders) seen.add(cls.isEc() ? String.valueOf(h.part()) : h.host());
        return seen.size();
    }

    private static String describe(List<Holdings.Holder> holders) {
        if (holders.isEmpty()) return "none";
        StringBuilder sb = new StringBuilder();
        for (Holdings.Holder h : holders) sb.append(sb.length() == 0 ? "" : ", ").append(h.host()).append('/').append(h.disk()).append(" part ").append(h.part());
        return sb.toString();
    }
}
