package dev.cairn.sim;

import dev.cairn.core.ec.CodecCache;
import dev.cairn.core.ec.Stripes;
import dev.cairn.core.proto.StorageClass;
import dev.cairn.sim.GroundTruth.Copy;
import dev.cairn.sim.runtime.SimHost;
import dev.cairn.sim.workload.FileModel;
import java.util.ArrayList;
import java.util.List;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * Which copies of one chunk hold its acknowledged bytes, judged from the disks' durable images against the
 * file's {@link FileModel} alone: not from the system's versions, its metadata about copies, or its idea of
 * which copies are current. A copy holds them if its durable header covers them, every block it covers
 * verifies, and every byte is one the model explains (the acknowledged byte, or what a write still pending
 * may have put there). A stale copy that missed an acknowledged write, a copy never made durable, a torn or
 * corrupt one: none of them holds anything.
 *
 * <p>For an erasure-coded chunk each part is judged against the part the acknowledged bytes encode to, when
 * no write is pending on the chunk; with writes pending, a data part byte by byte against the model and a
 * parity part by its checksums and length only (its bytes depend on which pending writes landed).
 */
final class Holdings {
    /** A copy that holds the chunk's acknowledged bytes: where it is, and the part it is (0 for a replica). */
    record Holder(String host, String disk, int part) {}

    /** The outcome for one chunk: who holds what, what was looked at, and what it needs to be readable. */
    record Judgement(List<Holder> holders, List<Copy> looked, StorageClass cls, long ackedInChunk, java.util.Map<Copy, String> why) {
        /** Hosts holding a copy (any part). */
        TreeSet<String> hosts() {
            TreeSet<String> out = new TreeSet<>();
            for (Holder h : holders) out.add(h.host());
            return out;
        }

        /** Part -> hosts holding it. */
        TreeMap<Integer, TreeSet<String>> parts() {
            TreeMap<Integer, TreeSet<String>> out = new TreeMap<>();
            for (Holder h : holders) out.computeIfAbsent(h.part(), p -> new TreeSet<>()).add(h.host());
            return out;
        }

        /**
         * The parts every copy set needs: all k+m of an erasure-coded chunk (a part past the data of a short
         * chunk holds no bytes, but it is a part: the chunk survives the loss of m parts, whichever they are,
         * and readers and rebuilders count the parts that exist), the one replica of a replicated chunk.
         */
        List<Integer> neededParts() {
            List<Integer> out = new ArrayList<>();
            if (!cls.isEc()) { out.add(0); return out; }
            for (int p = 0; p < cls.parts(); p++) out.add(p);
            return out;
        }

        /** Readable from the holders {@code gone} leaves: a replica survives, or any k parts to decode. */
        boolean readableWithout(java.util.function.Predicate<Holder> gone) {
            if (!cls.isEc()) {
                for (Holder h : holders) if (!gone.test(h)) return true;
                return false;
            }
            int present = 0;
            for (int p : neededParts()) {
                boolean any = false;
                for (Holder h : holders) if (h.part() == p && !gone.test(h)) any = true;
                if (any) present++;
            }
            return present >= cls.k();
        }

        boolean readable() { return readableWithout(h -> false); }

        String describe() {
            StringBuilder sb = new StringBuilder();
            for (Copy k : looked) {
                boolean holds = holders.contains(new Holder(k.host(), k.disk(), Math.max(0, k.part())));
                sb.append(sb.length() == 0 ? "" : ", ").append(k.host()).append('/').append(k.disk()).append(" v").append(k.version())
                        .append(" part ").append(k.part()).append(" len ").append(k.length())
                        .append(holds ? " holds" : k.intact() ? " lacks acknowledged bytes" + (why.containsKey(k) ? " (" + why.get(k) + ")" : "")
                                : " CORRUPT (" + k.note() + ")");
            }
            return sb.length() == 0 ? "no durable copy" : sb.toString();
        }
    }

    private final CodecCache codecs = new CodecCache();
    /** One buffer for every header read. */
    private final byte[] headerBuf = new byte[dev.cairn.core.chunk.ChunkFormat.SLOT_SIZE];

    /**
     * What the copies of a chunk must hold, as last verified: per part, the block checksums of the expected
     * bytes and how far the blocks they cover run. Reused while the chunk's expected bytes are the same (its
     * fingerprint in the file model): the witness verifies a chunk at each acknowledgement, and the final
     * audit and the loss model judge the same chunks again; comparing header checksums then costs nothing
     * like reading, generating and (for parity) encoding the bytes again.
     */
    private record Expected(long fingerprint, StorageClass cls, long inChunk, int[][] crcs, long[] covered) {}

    /** Chunk id -> its last verified expectation (at most {@link #MAX_EXPECTED}, least recently used dropped). */
    private final java.util.LinkedHashMap<Long, Expected> expectations = new java.util.LinkedHashMap<>(256, 0.75f, true) {
        @Override protected boolean removeEldestEntry(java.util.Map.Entry<Long, Expected> e) { return size() > MAX_EXPECTED; }
    };
    static final int MAX_EXPECTED = 1 << 16;

    /**
     * Judges every durable copy of chunk {@code chunkId}, chunk {@code index} of a file of {@code chunkSize}
     * bytes per chunk and class {@code cls}, on the cluster's chunkservers (hosts lost for good hold nothing).
     */
    Judgement judge(SimCluster cluster, long chunkId, int index, int chunkSize, StorageClass cls, FileModel model) {
        return judge(cluster, chunkId, index, chunkSize, cls, model, 0, Long.MAX_VALUE);
    }

    /**
     * As above, counting only copies at versions the protocol keeps: a replica from the chunk's durable data
     * version on (below it the copy missed a committed write, and the cluster counts it stale and replaces it,
     * even where its bytes happen to be the same), an erasure-coded part at the chunk's version only (parts of
     * two placements never meet in one stripe). {@code rec} is the master's durable record of the chunk.
     */
    Judgement judge(SimCluster cluster, long chunkId, int index, int chunkSize, StorageClass cls, FileModel model, dev.cairn.master.meta.ChunkRecord rec) {
        return cls.isEc() ? judge(cluster, chunkId, index, chunkSize, cls, model, rec.version(), rec.version())
                : judge(cluster, chunkId, index, chunkSize, cls, model, rec.dataVersion(), Long.MAX_VALUE);
    }

    private Judgement judge(SimCluster cluster, long chunkId, int index, int chunkSize, StorageClass cls, FileModel model, long minVersion, long maxVersion) {
        long start = (long) index * chunkSize;
        // the bytes every copy must hold: up to the shortest the file can be (a truncate whose outcome was never known
        // may have cut it there)
        long inChunk = Math.max(0, Math.min(chunkSize, model.minLength() - start));
        List<Copy> looked = new ArrayList<>();
        String name = dev.cairn.core.chunk.ChunkFormat.fileName(chunkId);
        for (SimHost h : cluster.chunkservers()) GroundTruth.durableCopies(h, chunkId, name, looked, headerBuf);
        List<Holder> holders = new ArrayList<>();
        java.util.Map<Copy, String> why = new java.util.HashMap<>();
        // 0: writes pending on the chunk. A parity part encodes every byte its stripes hold, those past the acknowledged
        // length too (a write the writer never heard of may have been committed and archived), so for an erasure-coded
        // chunk the whole chunk must be determined
        long fingerprint = model.fingerprint(start, start + (cls.isEc() ? chunkSize : inChunk));
        Expected known = fingerprint == 0 ? null : expectations.get(chunkId);
        // the bytes a copy must hold run to the shortest the file can be, which can change while the fingerprint does
        // not (a truncate whose outcome becomes known): checksums learned for another length judge nothing (10 s seed
        // 48: an erasure-coded part holding exactly the expected bytes was judged against an earlier length's checksums)
        if (known != null && (known.fingerprint() != fingerprint || !known.cls().equals(cls) || known.inChunk() != inChunk)) known = null;
        int[][] crcs = known != null ? known.crcs() : new int[cls.parts()][];
        long[] covered = known != null ? known.covered() : new long[cls.parts()];
        byte[][] expected = null;
        boolean learned = false;
        for (Copy k : looked) {
            if (k.version() < 0 || !k.intact() || k.version() < minVersion || k.version() > maxVersion) continue;
            int part = Math.max(0, k.part());
            if (part >= cls.parts()) continue;
            long need = cls.isEc() ? Stripes.partLength(inChunk, cls.k(), part) : inChunk;
            if (k.length() < need) {
                why.put(k, "shorter than the " + need + " bytes it must hold");
                continue;
            }
            Boolean holds = null; // not yet known: judged from the bytes below
            if (crcs[part] != null) {
                // (an if, not a conditional expression: one whose arms are Boolean and boolean unboxes a null)
                if (cls.isEc()) holds = sameBlocks(k, crcs[part], covered[part], need);
                else holds = sameReplicaBlocks(k, crcs[part], covered[part], need, start, model);
            }
            if (holds == null) {
                // no checksums to compare with (or they cover the blocks differently): the bytes themselves
                if (!cls.isEc()) {
                    holds = holdsReplica(k, start, inChunk, model);
                    if (holds && fingerprint != 0 && crcs[0] == null) {
                        crcs[0] = k.crcs(); // a verified replica's checksums stand for the expected bytes
                        covered[0] = k.length();
                        learned = true;
                    }
                } else if (fingerprint != 0) {
                    if (expected == null) expected = Stripes.encode(codecs.get(cls.k(), cls.m()), model.ackedBytes(start, (int) inChunk));
                    if (crcs[part] == null) {
                        crcs[part] = blockCrcs(expected[part]);
                        covered[part] = expected[part].length;
                        learned = true;
                    }
                    holds = sameBytes(k, expected[part], crcs[part]);
                } else {
                    holds = part >= cls.k() || holdsDataPart(k, part, start, inChunk, cls.k(), model);
                }
            }
            if (holds) holders.add(new Holder(k.host(), k.disk(), part));
            else if (!cls.isEc() && k.intact()) why.put(k, firstDifference(k, start, inChunk, model));
            else if (k.intact() && expected != null) why.put(k, firstDifference(k, expected[part]));
        }
        if (learned) expectations.put(chunkId, new Expected(fingerprint, cls, inChunk, crcs, covered));
        return new Judgement(holders, looked, cls, inChunk, why);
    }

    private static int[] blockCrcs(byte[] b) {
        int[] out = new int[dev.cairn.core.chunk.ChunkFormat.blocks(b.length)];
        for (int i = 0; i < out.length; i++) {
            int from = i * dev.cairn.core.chunk.ChunkFormat.BLOCK_SIZE;
            out[i] = dev.cairn.core.chunk.ChunkFormat.crc(b, from, Math.min(dev.cairn.core.chunk.ChunkFormat.BLOCK_SIZE, b.length - from));
        }
        return out;
    }

    /**
     * Whether intact copy {@code k} holds the first {@code need} bytes whose blocks, run to {@code covered},
     * have checksums {@code crcs}: by its header's checksums (its bytes match them, as it is intact). Null if
     * a block it covers runs to another length than the known one (then only its bytes can tell).
     */
    private static Boolean sameBlocks(Copy k, int[] crcs, long covered, long need) {
        int block = dev.cairn.core.chunk.ChunkFormat.BLOCK_SIZE;
        for (int b = 0; b < dev.cairn.core.chunk.ChunkFormat.blocks(need); b++) {
            long from = (long) b * block;
            if (Math.min(k.length(), from + block) != Math.min(covered, from + block)) return null;
            // a last block running past the acknowledged bytes: what it holds past them may differ (a truncate's zeros
            // on one copy, the old bytes on another), so only its bytes can tell
            if (Math.min(covered, from + block) > need) return null;
            if (k.crcs()[b] != crcs[b]) return false;
        }
        return true;
    }

    /**
     * Whether intact replica {@code k} holds the model's first {@code need} bytes of the chunk at {@code start},
     * given the block checksums {@code crcs} of a replica verified to hold them (its blocks run to
     * {@code covered}): a block of the same extent with the same checksum holds the same bytes; a block wholly
     * within the acknowledged bytes with another checksum does not; any other block (a last block running past
     * them, which may differ there, or one of another extent) is compared byte by byte, that block only. The
     * whole-chunk byte comparison this replaces was half the steady simulation's time.
     */
    private static boolean sameReplicaBlocks(Copy k, int[] crcs, long covered, long need, long start, FileModel model) {
        int block = dev.cairn.core.chunk.ChunkFormat.BLOCK_SIZE;
        for (int b = 0; b < dev.cairn.core.chunk.ChunkFormat.blocks(need); b++) {
            long from = (long) b * block;
            long end = Math.min(covered, from + block);
            boolean sameExtent = Math.min(k.length(), from + block) == end && b < crcs.length;
            if (sameExtent && k.crcs()[b] == crcs[b]) continue;
            if (sameExtent && end <= need) return false;
            int n = (int) (Math.min(need, from + block) - from);
            long base = start + from;
            if (k.mismatchData(from, n, (bytes, at, len, pos) -> {
                long x = model.mismatch(base + pos, bytes, at, len);
                return x < 0 ? -1 : (int) (x - base - pos);
            }) >= 0) return false;
        }
        return true;
    }

    /**
     * Whether the intact copy {@code k} begins with {@code want}: each block its header covers exactly as far
     * as {@code want} goes is compared by checksum (the copy is intact, so its bytes match its header's); a
     * last block the copy holds more of than {@code want} is compared byte by byte.
     */
    private static boolean sameBytes(Copy k, byte[] want, int[] wantCrcs) {
        int block = dev.cairn.core.chunk.ChunkFormat.BLOCK_SIZE;
        for (int b = 0; b < wantCrcs.length; b++) {
            long from = (long) b * block;
            long wantEnd = Math.min(want.length, from + block), copyEnd = Math.min(k.length(), from + block);
            if (copyEnd == wantEnd) {
                if (k.crcs()[b] != wantCrcs[b]) return false;
                continue;
            }
            byte[] got = new byte[(int) (wantEnd - from)];
            k.readData(from, got, got.length);
            if (!java.util.Arrays.equals(got, 0, got.length, want, (int) from, (int) wantEnd)) return false;
        }
        return true;
    }

    /** Where replica {@code k} first differs from what the model allows, for the report. */
    private static String firstDifference(Copy k, long start, long inChunk, FileModel model) {
        long[] at = {-1};
        k.mismatchData(0, (int) inChunk, (b, from, n, pos) -> {
            long x = model.mismatch(start + pos, b, from, n);
            if (x >= 0 && at[0] < 0) at[0] = x - start;
            return x < 0 ? -1 : (int) (x - start - pos);
        });
        return at[0] < 0 ? "its checksums differ" : "first difference at chunk offset " + at[0];
    }

    /** Where erasure-coded part {@code k} first differs from the part the acknowledged bytes encode to. */
    private static String firstDifference(Copy k, byte[] want) {
        byte[] got = new byte[(int) Math.min(want.length, k.length())];
        k.readData(0, got, got.length);
        int at = java.util.Arrays.mismatch(got, 0, got.length, want, 0, got.length);
        return at < 0 ? "its checksums differ" : "first difference at part offset " + at + " of " + want.length + " (" + got[at] + ", want " + want[at] + ")";
    }

    /** Every acknowledged byte of replica {@code k}, in place, against the model. */
    private static boolean holdsReplica(Copy k, long start, long inChunk, FileModel model) {
        return k.mismatchData(0, (int) inChunk, (b, from, n, at) -> {
            long x = model.mismatch(start + at, b, from, n);
            return x < 0 ? -1 : (int) (x - start - at);
        }) < 0;
    }

    /** Each cell of data part {@code part} against the file positions it holds. */
    private static boolean holdsDataPart(Copy k, int part, long start, long inChunk, int dataParts, FileModel model) {
        long need = Stripes.partLength(inChunk, dataParts, part);
        byte[] got = new byte[(int) need];
        k.readData(0, got, got.length);
        for (long s = 0; s * Stripes.CELL < need; s++) {
            int n = Stripes.cellLength(inChunk, dataParts, part, s);
            long filePos = start + s * dataParts * Stripes.CELL + (long) part * Stripes.CELL;
            if (n > 0 && model.mismatch(filePos, got, (int) (s * Stripes.CELL), n) >= 0) return false;
        }
        return true;
    }
}
