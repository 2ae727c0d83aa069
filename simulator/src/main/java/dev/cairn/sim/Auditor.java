package dev.cairn.sim;

import dev.cairn.core.proto.StorageClass;
import dev.cairn.master.Master;
import dev.cairn.master.meta.ChunkRecord;
import dev.cairn.master.namespace.InodeRecord;
import dev.cairn.master.namespace.Namespace;
import dev.cairn.sim.GroundTruth.Copy;
import dev.cairn.sim.runtime.SimHost;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * The end-of-run checks against ground truth: the master's metadata is walked, the chunkservers' disks
 * are read directly, and the two must agree with the classes and with the fault history.
 *
 * <ul>
 *   <li>convergence: every chunk has exactly its goal of intact current copies (replicas on distinct
 *       hosts, or each of its k+m parts once, on distinct hosts);</li>
 *   <li>durability: a chunk of an acknowledged file with no readable set of copies is excused only by the
 *       {@link LossModel} (a fault took its last readable set of holders, judged on the disks' durable
 *       images, never from the system's own state); and, once everything else is settled, every copy the
 *       system counts as current must hold the acknowledged bytes (judged against the file's model);</li>
 *   <li>metadata and garbage collection: every chunk file on a live disk is an intact current copy of a
 *       chunk some file references (stale, corrupt, orphaned copies are all gone);</li>
 *   <li>balance: the used fractions of the live chunkservers are within the planner's spread (plus a
 *       margin for chunks still being moved).</li>
 * </ul>
 */
final class Auditor {
    /** The planner balances to within 5 points; the checker allows this much more. */
    static final double BALANCE_SLACK = 0.03;
    /** Findings listed per kind in a failure report. */
    static final int MAX_FINDINGS = 5;

    /** The findings of one audit, grouped by invariant. */
    record Report(TreeMap<String, List<String>> findings, int chunksChecked, int excusedLosses, int unreadable) {
        boolean clean() { return findings.isEmpty(); }

        List<String> lines() {
            List<String> out = new ArrayList<>();
            for (Map.Entry<String, List<String>> e : findings.entrySet()) {
                List<String> v = e.getValue();
                for (int i = 0; i < Math.min(MAX_FINDINGS, v.size()); i++) out.add(e.getKey() + ": " + v.get(i));
                if (v.size() > MAX_FINDINGS) out.add(e.getKey() + ": ... and " + (v.size() - MAX_FINDINGS) + " more");
            }
            return out;
        }
    }

    private final SimCluster cluster;
    private final LossModel losses;
    private final dev.cairn.sim.workload.Oracle oracle;
    private final Holdings holdings;

    Auditor(SimCluster cluster, LossModel losses, dev.cairn.sim.workload.Oracle oracle, Holdings holdings) {
        this.cluster = cluster;
        this.losses = losses;
        this.oracle = oracle;
        this.holdings = holdings;
    }

    /**
     * Why the loss of chunk {@code index} of the acknowledged file at {@code path} is excused, or null: the
     * loss model's verdict for the chunk the master's durable metadata has there.
     */
    String excuse(String path, int index) {
        Namespace ns = Witness.durableNamespace(cluster);
        try {
            List<ChunkRecord> recs = ns.chunks(ns.resolve(path).inode(), index, 1);
            return recs.isEmpty() ? null : losses.excuse(recs.get(0).chunkId());
        } catch (dev.cairn.core.proto.CairnException e) {
            return null;
        }
    }

    private Namespace namespace() {
        Master m = cluster.servingMaster();
        return m == null ? null : m.namespace();
    }

    Report audit() { return audit(false); }

    /** A chunk whose current copies the deep part of an audit checks: its record, class, chunk size, file and copies. */
    private record DeepCheck(ChunkRecord c, StorageClass cls, int chunkSize, String path, List<Copy> good) {}

    /**
     * One audit of the ground truth. {@code deep}: once nothing else is found, also check that every copy the
     * system counts as current of every acknowledged chunk holds the acknowledged bytes (it reads them all).
     */
    Report audit(boolean deep) {
        List<DeepCheck> later = new ArrayList<>();
        TreeMap<String, List<String>> findings = new TreeMap<>();
        Namespace ns = namespace();
        if (ns == null) {
            findings.put("liveness", new ArrayList<>(List.of("the master is not serving")));
            return new Report(findings, 0, 0, 0);
        }
        // ground truth: every chunk file on every live chunkserver
        Map<Long, List<Copy>> onDisk = new HashMap<>();
        Map<String, Long> usedBytes = new TreeMap<>();
        for (SimHost h : cluster.chunkservers()) {
            if (h.isLost()) continue;
            if (!h.isUp()) {
                add(findings, "liveness", h.name() + " is down after the faults stopped");
                continue;
            }
            long used = 0;
            for (Copy c : GroundTruth.copies(h)) {
                onDisk.computeIfAbsent(c.chunkId(), k -> new ArrayList<>()).add(c);
                used += dev.cairn.core.chunk.ChunkFormat.DATA_OFFSET + Math.max(0, c.length());
            }
            usedBytes.put(h.name(), used);
        }
        Set<Long> ackedInodes = new TreeSet<>();
        Map<Long, String> ackedPaths = new HashMap<>();
        for (String path : oracle.committedPaths()) {
            try {
                long ino = ns.resolve(path).inode();
                ackedInodes.add(ino);
                ackedPaths.put(ino, path);
            } catch (RuntimeException e) {
                // gone from the namespace: the workload's read-back reports that
            }
        }
        Set<Long> unreadableChunks = new TreeSet<>();
        Set<Copy> goodCopies = new java.util.HashSet<>();
        int checked = 0, excused = 0, unreadable = 0;
        Map<Long, ChunkRecord> byId = new HashMap<>();
        Map<Long, InodeRecord> files = new HashMap<>();
        List<ChunkRecord> records = new ArrayList<>();
        ns.forEachChunk(c -> { records.add(c); return true; });
        for (ChunkRecord c : records) {
            InodeRecord f = files.computeIfAbsent(c.inode(), ino -> {
                try {
                    return ns.inode(ino);
                } catch (RuntimeException e) {
                    return null;
                }
            });
            if (f == null) {
                // the master's own state contradicts itself (a chunk of no file): reported, not a crash of the checker
                add(findings, "metadata", "chunk " + c.chunkId() + " names inode " + c.inode() + ", which the namespace does not hold");
                byId.put(c.chunkId(), c);
                continue;
            }
            StorageClass cls = f.storageClass();
            byId.put(c.chunkId(), c);
            List<Copy> copies = onDisk.getOrDefault(c.chunkId(), List.of());
            if (c.isNew() && copies.isEmpty()) continue; // allocated, never written
            checked++;
            // the committed bytes of this chunk (of each part, for EC): a current copy holds at least that. None if no
            // commit ever named the chunk (readers see a hole there, whatever its copies hold; a file may have grown
            // over a chunk a failed writer left)
            long inChunk = Math.max(0, Math.min(f.chunkSize(), f.size() - (long) c.index() * f.chunkSize()));
            long required = c.committed() ? inChunk : 0;
            // current: at the chunk's version, or for a replicated chunk at any version since the last committed
            // write (a copy left out of a lease that wrote nothing still holds every acknowledged byte)
            List<Copy> good = new ArrayList<>();
            for (Copy k : copies) {
                long committed = cls.isEc() && required > 0 ? dev.cairn.core.ec.Stripes.partLength(required, cls.k(), Math.max(0, k.part())) : required;
                if (c.current(k.version(), cls.isEc()) && k.intact() && k.length() >= committed) good.add(k);
            }
            goodCopies.addAll(good);
            TreeSet<String> hosts = new TreeSet<>();
            TreeMap<Integer, List<String>> parts = new TreeMap<>();
            for (Copy k : good) {
                hosts.add(k.host());
                parts.computeIfAbsent(k.part(), p -> new ArrayList<>()).add(k.host());
            }
            boolean readable = cls.isEc() ? parts.size() >= cls.k() : !good.isEmpty();
            if (!readable) {
                unreadable++;
                unreadableChunks.add(c.chunkId());
                // nothing acknowledged in it: a write that failed, or (sweep seed 803) a chunk past the committed
                // length of a file whose earlier chunks were synced, its copies lost with its uncommitted write
                // (or in a hole the file grew over, no write to it ever committed: readers see zeros there)
                if (!ackedInodes.contains(c.inode()) || inChunk == 0 || !c.committed()) continue;
                // committed, but holding only writes whose writer never heard they were (sweep seed 2021: an
                // erasure-coded chunk committed by a write-behind flush, the COMMIT that would have acknowledged it
                // then failed): the contract is about acknowledged bytes
                dev.cairn.sim.workload.FileModel model = oracle.acknowledgedModel(ackedPaths.get(c.inode()));
                if (model != null && model.ackedLength() <= (long) c.index() * f.chunkSize()) continue;
                if (losses.excuse(c.chunkId()) != null) {
                    excused++;
                } else {
                    add(findings, "durability", what(c, cls) + " has no readable set of copies, and no fault took its last readable set; on disk: "
                            + describe(copies));
                }
                continue;
            }
            // a chunk no commit named is a hole to readers: its copies are never served, and the zeros readers get
            // there are checked against the acknowledged bytes by the read-back of every acknowledged file
            if (deep && ackedInodes.contains(c.inode()) && required > 0) later.add(new DeepCheck(c, cls, f.chunkSize(), ackedPaths.get(c.inode()), good));
            if (cls.isEc()) {
                boolean exact = parts.size() == cls.parts() && good.size() == cls.parts() && hosts.size() == cls.parts();
                if (!exact) add(findings, "convergence", what(c, cls) + " has parts " + parts + ", goal one of each of " + cls.parts() + " on distinct hosts");
            } else if (good.size() != cls.replicas() || hosts.size() != cls.replicas()) {
                add(findings, "convergence", what(c, cls) + " has " + good.size() + " intact current copies on " + hosts + ", goal " + cls.replicas());
            }
        }
        // garbage: every file on a live disk is an intact current copy of a referenced chunk
        for (Map.Entry<Long, List<Copy>> e : onDisk.entrySet()) {
            if (unreadableChunks.contains(e.getKey())) continue; // lost: what is left is kept as it is
            for (Copy k : e.getValue()) {
                ChunkRecord rec = byId.get(k.chunkId());
                String where = "chunk " + k.chunkId() + " on " + k.host() + "/" + k.disk();
                if (rec == null) add(findings, "garbage", where + " (v" + k.version() + ") belongs to no file");
                else if (!rec.current(k.version(), files.get(rec.inode()).storageClass().isEc())) {
                    add(findings, "garbage", where + " is v" + k.version() + ", the file's is v" + rec.version() + " (data v" + rec.dataVersion() + ")");
                }
                else if (!k.intact()) add(findings, "garbage", where + " is corrupt and still kept (" + k.note() + ")");
                else if (!goodCopies.contains(k)) add(findings, "garbage", where + " is short (" + k.length() + " bytes) and still kept");
            }
        }
        // balance
        if (usedBytes.size() > 1) {
            double cap = cluster.capacityBytes();
            double lo = Double.MAX_VALUE, hi = 0;
            String loHost = "", hiHost = "";
            for (Map.Entry<String, Long> e : usedBytes.entrySet()) {
                double frac = e.getValue() / cap;
                if (frac < lo) { lo = frac; loHost = e.getKey(); }
                if (frac > hi) { hi = frac; hiHost = e.getKey(); }
            }
            double limit = Master.BALANCE_SPREAD + BALANCE_SLACK;
            if (hi - lo > limit) {
                add(findings, "balance", String.format(Locale.ROOT, "%s is %.1f%% full and %s %.1f%%: spread %.1f points, limit %.1f",
                        hiHost, hi * 100, loHost, lo * 100, (hi - lo) * 100, limit * 100));
            }
        }
        if (findings.isEmpty()) {
            // settled: the system's versions say these copies are current, so each must hold the acknowledged bytes
            for (DeepCheck d : later) {
                dev.cairn.sim.workload.FileModel model = oracle.acknowledgedModel(d.path());
                if (model == null) continue;
                ChunkRecord c = d.c();
                Holdings.Judgement j = holdings.judge(cluster, c.chunkId(), c.index(), d.chunkSize(), d.cls(), model);
                for (Copy k : d.good()) {
                    if (!j.holders().contains(new Holdings.Holder(k.host(), k.disk(), Math.max(0, k.part())))) {
                        add(findings, "durability", "chunk " + c.chunkId() + " (index " + c.index() + " of " + d.path() + ", " + d.cls()
                                + "): the copy on " + k.host() + "/" + k.disk() + " v" + k.version() + " counts as current (record v" + c.version()
                                + ", data v" + c.dataVersion() + ") but does not durably hold the acknowledged bytes; durable copies: " + j.describe());
                    }
                }
            }
        }
        return new Report(findings, checked, excused, unreadable);
    }

    private static String describe(List<Copy> copies) {
        if (copies.isEmpty()) return "no copy";
        StringBuilder sb = new StringBuilder();
        for (Copy k : copies) {
            sb.append(sb.length() == 0 ? "" : ", ").append(k.host()).append('/').append(k.disk()).append(" v").append(k.version())
                    .append(" part ").append(k.part()).append(" len ").append(k.length()).append(k.intact() ? "" : " CORRUPT");
        }
        return sb.toString();
    }

    /** How a finding names a chunk (made only for a finding: an audit looks at every chunk, once a second while it waits). */
    private static String what(ChunkRecord c, StorageClass cls) {
        return "chunk " + c.chunkId() + " v" + c.version() + " (inode " + c.inode() + " index " + c.index() + ", " + cls + ")";
    }

    private static void add(TreeMap<String, List<String>> findings, String kind, String what) {
        findings.computeIfAbsent(kind, k -> new ArrayList<>()).add(what);
    }
}
