package dev.cairn.chunkserver;

import static dev.cairn.core.chunk.ChunkFormat.BLOCK_SIZE;
import static dev.cairn.core.chunk.ChunkFormat.DATA_OFFSET;
import static dev.cairn.core.chunk.ChunkFormat.MAX_CHUNK_SIZE;
import static dev.cairn.core.chunk.ChunkFormat.PAGES_PER_BLOCK;
import static dev.cairn.core.chunk.ChunkFormat.PAGE_SIZE;
import static dev.cairn.core.chunk.ChunkFormat.SLOT_SIZE;

import dev.cairn.core.async.Promise;
import dev.cairn.core.async.SerialQueue;
import dev.cairn.core.chunk.ChunkFormat;
import dev.cairn.core.chunk.ChunkFormat.Header;
import dev.cairn.core.chunk.Crc32c;
import dev.cairn.core.env.Clock;
import dev.cairn.core.env.Env;
import dev.cairn.core.env.Hazard;
import dev.cairn.core.env.Plant;
import dev.cairn.core.env.Log;
import dev.cairn.core.env.Volume;
import dev.cairn.core.proto.CairnException;
import dev.cairn.core.proto.MasterProtocol.BumpVersion;
import dev.cairn.core.proto.ChunkProtocol.ReadData;
import dev.cairn.core.proto.CodecException;
import dev.cairn.core.proto.Status;
import dev.cairn.core.proto.Types.ChunkReport;
import dev.cairn.core.proto.Types.DiskReport;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.TreeMap;
import java.util.function.Consumer;
import java.util.function.IntToLongFunction;

/**
 * The chunk copies on this server's volumes. Operations on one chunk run one at a time (a queue per
 * chunk), except reads, which overlap each other; different chunks proceed independently. In memory each chunk keeps its version, length and
 * block checksums, which include writes not yet synced; on disk only a synced header is believed.
 */
final class ChunkStore {
    /** One chunk copy. */
    static final class Chunk {
        final long id;
        final Disk volume;
        /** Its file: {@link ChunkFormat#fileName}, or while a planner copy is built beside an older copy, {@link #INCOMING_PREFIX} and that. */
        String file;
        final SerialQueue ops = new SerialQueue();
        long version;
        /** Part index of an erasure-coded chunk; 0 for a replica. */
        int part;
        long length;
        /**
         * Block checksums, at least one per block of {@code length} (grown as the chunk does, not sized for
         * the largest chunk: a table of {@link ChunkFormat#MAX_BLOCKS} for every small chunk would be 4 KiB
         * of heap each, gigabytes on a server with a million chunks).
         */
        int[] crcs = new int[0];
        long seq;
        /** The slot holding the newest durable header, or -1 if none is durable yet. */
        int durableSlot = -1;
        boolean nameDurable;
        /** Data written since the last durable header (the next header needs an fsync of the data first). */
        boolean dataDirty;
        /** The length the newest durable header records (0 while none is durable). */
        long durableLength;
        /** The newest durable header (null while none is): what a restart comes back with, block places included. */
        Header durable;
        /**
         * A header written and not yet fsynced (the slot, or -1), and the header: the next fsync of the file,
         * whatever it is for, makes it the newest durable one.
         */
        int unsyncedSlot = -1;
        Header unsynced;
        /** Where each block is (its place or its shadow place); the capacity in blocks. Set at create or recovery. */
        BlockPlaces places;
        /**
         * Client writes taken at this version since the newest durable header: a sync naming more was sent
         * writes this copy lost (it restarted between them and the sync), which no length check can see when
         * they overwrote bytes already there.
         */
        long pieces;
        boolean deleted;
        /** Found corrupt (by a read or the scrubber): never served again; the master repairs it elsewhere. */
        boolean bad;
        /**
         * Client writes at this version are taken until this instant of this server's monotonic clock (the
         * lease window opened by the master's create or bump); 0: none (after a restart, or a copy made by
         * the planner). The master keeps chunks with an open window out of its plans.
         */
        long writableUntilNanos;
        /**
         * Seen by the scrubber never synced and outside any write window (see {@link #abandoned}); any
         * create, write or sync clears it.
         */
        boolean seenIdleUnsynced;

        Chunk(long id, Disk volume) { this(id, volume, ChunkFormat.fileName(id)); }

        Chunk(long id, Disk volume, String file) {
            this.id = id;
            this.volume = volume;
            this.file = file;
        }

        Header header() {
            int blocks = ChunkFormat.blocks(length);
            return new Header(id, version, length, seq, part, places.capacity, Arrays.copyOf(crcs, blocks), places.bits(blocks));
        }

        /** Never overwrite the newest durable slot: a torn write there would leave no valid header. */
        int nextSlot() { return durableSlot == 0 ? 1 : 0; }
    }

    private final List<Disk> volumes = new ArrayList<>();
    private final Log log;
    private final Clock clock;
    private final Consumer<Disk> onDiskFailed;
    private final TreeMap<Long, Chunk> chunks = new TreeMap<>();
    /** The simulator's planted bugs and aimed faults (the real runtime's Env has neither). */
    private Env hooks;

    /**
     * @param onDiskFailed told (after the disk's chunks have been dropped) when a disk fails, so the
     *                     master can be told they are gone
     */
    ChunkStore(List<Volume> volumes, Clock clock, Log log, Consumer<Disk> onDiskFailed) {
        this.log = log;
        this.clock = clock;
        this.onDiskFailed = onDiskFailed;
        for (Volume v : volumes) this.volumes.add(new Disk(v, clock, this::diskFailed));
    }

    ChunkStore(List<Volume> volumes, Clock clock, Log log) {
        this(volumes, clock, log, d -> { });
    }

    List<Disk> disks() { return volumes; }

    /** Where planted bugs are asked about and risky points reported ({@link Env#planted}, {@link Env#hazard}). */
    void hooks(Env env) { this.hooks = env; }

    private boolean planted(Plant p) { return hooks != null && hooks.planted(p); }

    private void hazard(Hazard h) { if (hooks != null) hooks.hazard(h); }

    Disk disk(String name) {
        for (Disk d : volumes) if (d.name().equals(name)) return d;
        return null;
    }

    /**
     * A disk failed: its chunks are gone as far as anyone is concerned (what is on it can no longer be
     * trusted to be durable). Calls under way on them fail; the master repairs them elsewhere.
     */
    private void diskFailed(Disk d) {
        int lost = 0;
        // in id order (the table is sorted): the written-off list stays sorted without a sort
        long[] ids = new long[d.chunkCount()];
        int[] parts = new int[ids.length];
        for (var it = chunks.values().iterator(); it.hasNext(); ) {
            Chunk c = it.next();
            if (c.volume != d) continue;
            c.deleted = true;
            it.remove();
            d.account(-1, -(DATA_OFFSET + c.length));
            if (lost == ids.length) { ids = Arrays.copyOf(ids, lost * 2 + 1); parts = Arrays.copyOf(parts, ids.length); }
            ids[lost] = c.id;
            parts[lost] = c.part;
            lost++;
        }
        for (var it = incoming.values().iterator(); it.hasNext(); ) {
            Chunk c = it.next();
            if (c.volume != d) continue;
            c.deleted = true;
            it.remove();
            d.account(-1, -(DATA_OFFSET + c.length));
        }
        ids = Arrays.copyOf(ids, lost);
        parts = Arrays.copyOf(parts, lost);
        writeOff(ids, parts);
        log.warn("disk {} failed ({}): {} chunk copies on it are lost", d.name(), d.failure(), lost);
        // Remembered on the other disks, for a restart that brings this one back (an operator's fix, the
        // simulator's heal): the master has had its chunks copied elsewhere meanwhile, some perhaps onto
        // another disk of this server, and where a chunk is then on both, the copy made since must win. The
        // mark lists the copies the disk held, so a restart without it still refuses other parts of them.
        byte[] mark = encodeWrittenOff(ids, parts);
        for (Disk o : volumes) {
            if (o == d || o.failed()) continue;
            o.write(FAILED_MARK + d.name(), 0, mark).flatMap(v -> o.sync(FAILED_MARK + d.name())).flatMap(v -> o.syncDirectory())
                    .onFailure(e -> log.warn("could not record on {} that {} failed: {}", o.name(), d.name(), e.getMessage()));
        }
        onDiskFailed.accept(d);
    }

    /** A file on a disk naming another disk that failed while this server ran ({@code .failed-disk1}); it lists that disk's copies. */
    static final String FAILED_MARK = ".failed-";

    /** Bytes per copy a failed-disk mark lists: the chunk id, then its part. */
    private static final int MARK_ENTRY_BYTES = Long.BYTES + Integer.BYTES;

    /**
     * The copies (chunk id, part; sorted by id) on disks written off as failed that may come back: read from
     * the marks at a restart, added to as disks fail. The master has those chunks repaired elsewhere, and may
     * ask this server for another part of one: refused for {@link #WRITTEN_OFF_HOLD_NANOS}, for the disk's
     * part would then meet it here when the disk is back, two parts of one chunk where the table keeps one (sim
     * seed 12373: a disk back after a restart 27 s later; the part rebuilt here won, and the other, its only
     * copy, was deleted). Bounded by what the failed disks held: 12 bytes a copy.
     */
    private long[] offIds = new long[0];
    private int[] offParts = new int[0];
    /** Until when (this server's monotonic clock) the written-off copies' other parts are refused. */
    private long offUntilNanos;

    /**
     * How long after a disk is written off (or a restart finds it still out) other parts of its chunks are
     * refused here. A disk that comes back mostly does so soon (a transient controller error, a restart); one
     * that stays out must not keep its chunks from this server for good: in a cluster with no server to spare
     * (ec(2,2) on five, one lost) the chunk would stay short of its goal (sim seeds 12002, 12028 with a
     * permanent refusal). If another part is made here after all and the disk comes back, recovery keeps the
     * disk's part aside, never deletes it.
     */
    static final long WRITTEN_OFF_HOLD_NANOS = 120_000_000_000L;

    /** The part of chunk {@code id} on a written-off disk, or -1 if none is (or the hold has lapsed). */
    private int writtenOffPart(long id) {
        if (offIds.length == 0) return -1;
        if (clock.nanoTime() - offUntilNanos >= 0) { // lapsed: the memory is given back
            offIds = new long[0];
            offParts = new int[0];
            return -1;
        }
        int i = Arrays.binarySearch(offIds, id);
        return i < 0 ? -1 : offParts[i];
    }

    /** Adds copies (sorted by id) to the written-off list, merging; an id already there keeps its part. */
    private void writeOff(long[] ids, int[] parts) {
        long[] mergedIds = new long[offIds.length + ids.length];
        int[] mergedParts = new int[mergedIds.length];
        int i = 0, j = 0, n = 0;
        while (i < offIds.length || j < ids.length) {
            boolean mine = j == ids.length || (i < offIds.length && offIds[i] <= ids[j]);
            long id = mine ? offIds[i] : ids[j];
            int part = mine ? offParts[i++] : parts[j++];
            if (n > 0 && mergedIds[n - 1] == id) continue;
            mergedIds[n] = id;
            mergedParts[n++] = part;
        }
        offIds = Arrays.copyOf(mergedIds, n);
        offParts = Arrays.copyOf(mergedParts, n);
        offUntilNanos = clock.nanoTime() + WRITTEN_OFF_HOLD_NANOS;
    }

    static byte[] encodeWrittenOff(long[] ids, int[] parts) {
        java.nio.ByteBuffer b = java.nio.ByteBuffer.allocate(ids.length * MARK_ENTRY_BYTES);
        for (int i = 0; i < ids.length; i++) b.putLong(ids[i]).putInt(parts[i]);
        return b.array();
    }

    /** Reads a mark's list into the written-off copies; a mark of another length (torn, never synced) adds nothing. */
    private void readWrittenOff(byte[] mark) {
        if (mark.length % MARK_ENTRY_BYTES != 0) return;
        int n = mark.length / MARK_ENTRY_BYTES;
        long[] ids = new long[n];
        int[] parts = new int[n];
        java.nio.ByteBuffer b = java.nio.ByteBuffer.wrap(mark);
        for (int i = 0; i < n; i++) {
            ids[i] = b.getLong();
            parts[i] = b.getInt();
            if (i > 0 && ids[i] <= ids[i - 1]) return; // not a list this server wrote
        }
        writeOff(ids, parts);
    }

    // ---------------------------------------------------------------- recovery

    /**
     * Rebuilds the in-memory table from the headers on disk; trusts nothing that was not synced. A disk
     * that fails while being read is left out (failed); the others still recover.
     */
    Promise<Integer> recover() {
        for (Disk v : volumes) v.recovering(true);
        List<Promise<List<String>>> listed = new ArrayList<>();
        for (Disk v : volumes) {
            listed.add(v.list().then((names, e) -> e == null ? Promise.completed(names)
                    : v.failed() ? Promise.completed(List.<String>of()) : Promise.<List<String>>failed(e)));
        }
        return Promise.all(listed).flatMap(lists -> {
            // disks that failed in an earlier run and are back: their copies lose to copies made since
            java.util.Set<String> writtenOff = new java.util.TreeSet<>();
            java.util.Set<String> stillOut = new java.util.TreeSet<>();
            for (List<String> names : lists) {
                for (String n : names) {
                    if (!n.startsWith(FAILED_MARK)) continue;
                    String name = n.substring(FAILED_MARK.length());
                    Disk back = disk(name);
                    (back != null && !back.failed() ? writtenOff : stillOut).add(name);
                }
            }
            return readMarks(lists, stillOut).flatMap(read -> recoverVolumes(lists, writtenOff));
        }).then((x, e) -> {
            for (Disk v : volumes) v.recovering(false);
            return e == null ? Promise.completed(chunks.size()) : Promise.<Integer>failed(e);
        });
    }

    /** Reads the lists of the marks naming disks not back (one mark each: every disk holds the same list). */
    private Promise<Void> readMarks(List<List<String>> lists, java.util.Set<String> stillOut) {
        Promise<Void> p = Promise.completed(null);
        java.util.Set<String> read = new java.util.TreeSet<>();
        for (int i = 0; i < volumes.size(); i++) {
            Disk v = volumes.get(i);
            for (String n : lists.get(i)) {
                if (!n.startsWith(FAILED_MARK) || !stillOut.contains(n.substring(FAILED_MARK.length()))) continue;
                if (!read.add(n)) continue;
                p = p.flatMap(x -> readMark(v, n, new java.io.ByteArrayOutputStream()).then((bytes, e) -> {
                    if (e != null) log.warn("could not read the failed-disk mark {} on {}: {}", n, v.name(), e.getMessage());
                    else readWrittenOff(bytes);
                    return Promise.completed(null);
                }));
            }
        }
        return p;
    }

    /** A mark, read a piece at a time (a read names its length, and most marks are small), up to {@link #MAX_MARK_BYTES}. */
    private static Promise<byte[]> readMark(Disk v, String name, java.io.ByteArrayOutputStream into) {
        return v.read(name, into.size(), MARK_PIECE_BYTES).flatMap(piece -> {
            into.write(piece, 0, piece.length);
            if (piece.length < MARK_PIECE_BYTES) return Promise.completed(into.toByteArray());
            if (into.size() >= MAX_MARK_BYTES) return Promise.failed(new CairnException(Status.IO, "longer than " + MAX_MARK_BYTES + " bytes"));
            return readMark(v, name, into);
        });
    }

    /** The most of a failed-disk mark read: the list of 5.5 million copies. */
    private static final int MAX_MARK_BYTES = 64 << 20;
    private static final int MARK_PIECE_BYTES = 1 << 20;

    private Promise<Void> recoverVolumes(List<List<String>> lists, java.util.Set<String> writtenOff) {
        List<Promise<Void>> all = new ArrayList<>();
        for (int i = 0; i < volumes.size(); i++) {
            Disk v = volumes.get(i);
            // After a crash without power loss the page cache still shows names that never reached the
            // platter: a directory sync makes every name recovery saw durable, as each copy's
            // nameDurable says (sweep seed 467: a sync after the restart skipped the directory, and a
            // power loss took an acknowledged chunk). It also makes recovery's removals durable.
            all.add(recoverVolume(v, lists.get(i), writtenOff).flatMap(x -> v.syncDirectory()).then((x, e) -> {
                if (e != null && !v.failed()) return Promise.failed(e);
                return Promise.completed(null);
            }));
        }
        return Promise.all(all).flatMap(x -> writtenOff.isEmpty() ? Promise.completed(null) : forgetFailures(lists, writtenOff));
    }

    /**
     * Once every copy on two disks is settled (the losers' removal made durable), the marks of earlier
     * failures of disks that are back have done their work: removed, so a later failure is judged on its own.
     * The marks of disks still out stay, for the restart that brings them back.
     */
    private Promise<Void> forgetFailures(List<List<String>> lists, java.util.Set<String> back) {
        List<Promise<Void>> all = new ArrayList<>();
        for (int i = 0; i < volumes.size(); i++) {
            Disk v = volumes.get(i);
            if (v.failed()) continue;
            Promise<Void> p = Promise.completed(null); // recovery has synced the directory: the losers' removal is durable
            for (String n : lists.get(i)) if (n.startsWith(FAILED_MARK) && back.contains(n.substring(FAILED_MARK.length()))) p = p.flatMap(x -> v.delete(n));
            all.add(p.flatMap(x -> v.syncDirectory()).then((x, e) -> Promise.completed(null))); // best effort: a failure fails that disk
        }
        return Promise.all(all).map(x -> null);
    }

    private Promise<Void> recoverVolume(Disk v, List<String> names, java.util.Set<String> writtenOff) {
        List<Promise<Void>> all = new ArrayList<>();
        for (String name : names) {
            if (name.startsWith(QUARANTINE_PREFIX)) {
                v.quarantined(1); // kept aside by an earlier run: still there for an operator
                continue;
            }
            if (name.startsWith(INCOMING_PREFIX)) {
                // a planner copy cut short before it replaced the copy beside it: never announced, never acknowledged
                all.add(v.delete(name));
                continue;
            }
            long id = ChunkFormat.chunkIdOf(name);
            if (id < 0) continue;
            all.add(v.read(name, 0, DATA_OFFSET).flatMap(bytes -> {
                Header best = null;
                int bestSlot = -1;
                for (int slot = 0; slot < 2; slot++) {
                    int from = slot * SLOT_SIZE;
                    // a slot holds just its header (a file may end inside slot 1, or before it)
                    if (bytes.length < from + ChunkFormat.MIN_HEADER_BYTES) continue;
                    try {
                        Header h = ChunkFormat.decodeHeader(Arrays.copyOfRange(bytes, from, Math.min(bytes.length, from + SLOT_SIZE)), id);
                        if (best == null || h.seq() > best.seq()) { best = h; bestSlot = slot; }
                    } catch (CodecException e) {
                        // torn or never synced; the other slot may still be good
                    }
                }
                if (best == null) return withoutHeader(v, name);
                if (v.failed()) return Promise.completed(null);
                // what recovery read may be only in the page cache (a crash, not a power loss): made durable
                // before the copy is counted, or a power loss after the restart could take a copy the master
                // was told of (the simulator's final audit found one, its header never synced)
                Header found = best;
                int foundSlot = bestSlot;
                return v.sync(name).flatMap(synced -> adopt(v, name, id, found, foundSlot, writtenOff));
            }));
        }
        return Promise.all(all).map(x -> null);
    }

    /**
     * A chunk file with no valid header in either slot. With no data past the headers it was never committed (a
     * new copy that lost power before its first sync): removed. With data it may be a committed copy whose two
     * headers were both damaged, perhaps the last copy of its chunk, so it is never deleted here: it is renamed
     * aside ({@link #QUARANTINE_PREFIX}, which recovery ignores) and reported, for an operator to recover from or
     * remove once the cluster shows nothing lost.
     */
    private Promise<Void> withoutHeader(Disk v, String name) {
        return v.read(name, DATA_OFFSET, 1).flatMap(data -> {
            if (data.length == 0) {
                log.warn("chunk file {} on {} has no valid header and no data (never committed): removing it", name, v.name());
                return v.delete(name);
            }
            String aside = asideName(name);
            log.warn("chunk file {} on {} has data but no valid header: kept aside as {} (it may hold a committed chunk; remove it once "
                    + "`cairn status` shows no lost chunks)", name, v.name(), aside);
            quarantined++;
            v.quarantined(1);
            return v.rename(name, aside).flatMap(x -> v.syncDirectory());
        });
    }

    /** Name prefix of chunk files kept aside by recovery (no valid header, but data): not chunk files to recovery. */
    static final String QUARANTINE_PREFIX = "quarantine-";

    /**
     * The name a chunk file is kept aside under: {@code quarantine-chunk_<id>.ck.<suffix>}, the suffix from this
     * server's clock so a second file of the same chunk kept aside later never replaces the first.
     */
    private String asideName(String file) { return QUARANTINE_PREFIX + file + "." + Long.toUnsignedString(clock.nanoTime(), 36); }
    private int quarantined;

    /** Chunk files recovery kept aside since this server started. */
    int quarantined() { return quarantined; }

    /** A copy recovery found, made durable: into the table, or (the chunk is on two disks) settled against the other copy. */
    private Promise<Void> adopt(Disk v, String name, long id, Header best, int bestSlot, java.util.Set<String> writtenOff) {
        // the disk failed while recovery read it (the sync just made, or another file's): its copies are lost to
        // everyone, like those of a disk that fails later, and never reach the table (sim seed 12361: a copy on a
        // disk that failed during recovery was reported current, then deleted from the failed disk)
        if (v.failed()) return Promise.completed(null);
        Chunk c = new Chunk(id, v);
        c.version = best.version();
        c.part = best.part();
        c.length = best.length();
        c.crcs = best.crcs().clone(); // the live table: writes change it, the durable header's must stay as the disk has it
        c.seq = best.seq();
        c.durableSlot = bestSlot;
        c.durableLength = best.length();
        c.durable = best;
        c.places = BlockPlaces.recovered(best);
        c.nameDurable = true;
        Chunk other = chunks.get(id);
        if (other == null) {
            put(c);
            return Promise.completed(null);
        }
        return keepOne(c, other, writtenOff);
    }

    /**
     * The chunk on two disks: one was failed, and the master copied the chunk back onto another disk of this server
     * before it restarted. Two different parts of an erasure-coded chunk: the one on the disk written off as failed
     * loses (the master rebuilt the other here in its place, and counts on it; simulator seed 1897 lost a file by
     * keeping the old part), and is kept aside, not deleted: it may be its part's last copy (the written-off list
     * refuses the other part here while the server runs, but not across a restart that lost the marks). Otherwise
     * both hold the same data: keep the newer; at one version, the one whose blocks all verify (the copy on the failed
     * disk may be what failed it, and the marks that say which disk failed may be gone: 60 s seed 5201 kept a corrupt
     * copy over the good one the master had made since), then the longer (the one made since may be a copy cut short by
     * the restart: seed 858 kept an empty rebuild over a whole part), then the one on a disk not written off.
     */
    private Promise<Void> keepOne(Chunk c, Chunk other, java.util.Set<String> writtenOff) {
        boolean mineOff = writtenOff.contains(c.volume.name()), otherOff = writtenOff.contains(other.volume.name());
        if (c.part != other.part && mineOff != otherOff) return settle(c, other, otherOff);
        if (c.version != other.version) return settle(c, other, c.version > other.version);
        return sound(c).flatMap(mineSound -> sound(other).flatMap(otherSound -> {
            Chunk now = chunks.get(c.id);
            if (now == null) {
                put(c);
                return Promise.completed(null);
            }
            if (now != other) return keepOne(c, now, writtenOff); // a third copy settled against it meanwhile
            boolean mine;
            if (mineSound != otherSound) mine = mineSound;
            else if (c.length != other.length) mine = c.length > other.length;
            else mine = otherOff && !mineOff;
            return settle(c, other, mine);
        }));
    }

    /** Keeps {@code c} ({@code mine}) or {@code other} in the table; the loser is deleted, or kept aside if it is another part. */
    private Promise<Void> settle(Chunk c, Chunk other, boolean mine) {
        long id = c.id;
        Disk v = c.volume;
        Chunk loser = mine ? other : c;
        if (mine) {
            put(c);
            other.volume.account(-1, -(DATA_OFFSET + other.length));
        }
        if (c.part != other.part) {
            String aside = asideName(loser.file);
            log.warn("chunk {} is on both {} (part {}) and {} (part {}): keeping part {} on {}, the other kept aside as {} (it may be "
                    + "the last copy of its part; remove it once `cairn status` shows no lost chunks)", id, other.volume.name(), other.part,
                    v.name(), c.part, mine ? c.part : other.part, mine ? v.name() : other.volume.name(), aside);
            quarantined++;
            loser.volume.quarantined(1);
            return loser.volume.rename(loser.file, aside);
        }
        log.warn("chunk {} is on both {} and {}: keeping v{} on {}, removing the other", id, other.volume.name(), v.name(),
                mine ? c.version : other.version, mine ? v.name() : other.volume.name());
        return loser.volume.delete(loser.file);
    }

    /**
     * Whether every block of a copy recovery found matches its checksum, at the places its durable header names; false
     * on a read error too. Asked only of a chunk found twice at one version, to keep the sound one.
     */
    private static Promise<Boolean> sound(Chunk c) {
        if (c.length == 0) return Promise.completed(true);
        return blockCrcs(c, 0, c.length, c.places::offset).then((crcs, e) -> {
            if (e != null) return Promise.completed(false);
            for (int i = 0; i < crcs.length; i++) if (crcs[i] != c.crcs[i]) return Promise.completed(false);
            return Promise.completed(true);
        });
    }

    /**
     * Every copy as the master is to judge it: at the length its newest durable header records, not counting
     * bytes written since (a power loss may take them: the simulator caught the master counting a copy by
     * its unsynced bytes as holding committed data, and the planner dropping a good copy as extra).
     */
    List<ChunkReport> report() { return report(Long.MIN_VALUE); }

    /** As {@link #report()}, flagging the copies whose write window is open at {@code nowNanos} (the lease clock). */
    List<ChunkReport> report(long nowNanos) {
        List<ChunkReport> out = new ArrayList<>(chunks.size());
        for (Chunk c : chunks.values()) {
            boolean writable = nowNanos != Long.MIN_VALUE && nowNanos - c.writableUntilNanos < 0;
            out.add(new ChunkReport(c.id, c.version, c.durableSlot >= 0 ? c.durableLength : 0, c.part, c.bad, writable));
        }
        return out;
    }

    int count() { return chunks.size(); }

    /** Each disk's health, latency and contents, for the heartbeat. */
    List<DiskReport> diskReports() {
        List<DiskReport> out = new ArrayList<>(volumes.size());
        for (Disk d : volumes) out.add(new DiskReport(d.name(), d.state(), d.reportLatencyMicros(), d.chunkCount(), d.chunkBytes(), d.quarantined()));
        return out;
    }

    /** Bytes of chunk data held (without the headers): what a scrub round reads. */
    long dataBytes() { return usedBytes() - (long) DATA_OFFSET * count(); }

    /**
     * What this server could hold, measured: the chunk bytes on its working disks plus the free space of their
     * filesystems less a reserve ({@link #CAPACITY_RESERVE_DIVISOR}), each filesystem counted once (two disks on one filesystem share its free space); -1 if a
     * working disk cannot say (the caller then falls back to a configured figure).
     */
    long measuredCapacityBytes() {
        long capacity = 0;
        java.util.Set<String> counted = new java.util.HashSet<>();
        for (Disk d : volumes) {
            if (d.failed()) continue;
            Volume.Space space = d.space();
            if (space == null) return -1;
            capacity += d.chunkBytes();
            if (counted.add(space.filesystem())) capacity += Math.max(0, space.freeBytes() - space.totalBytes() / CAPACITY_RESERVE_DIVISOR);
        }
        return capacity;
    }

    /**
     * 1 / this of each filesystem is left out of the measured capacity: kept free, so the planner calls a server
     * full before its filesystem is, and the logs and metadata sharing it keep room.
     */
    static final int CAPACITY_RESERVE_DIVISOR = 100;

    long usedBytes() {
        long used = 0;
        for (Disk d : volumes) used += d.chunkBytes();
        return used;
    }

    /** The disks' tallies agree with a walk of the table (for tests: the walk is what the tallies save). */
    boolean talliesMatch() {
        for (Disk d : volumes) {
            int n = 0;
            long used = 0;
            for (Chunk c : chunks.values()) {
                if (c.volume != d) continue;
                n++;
                used += DATA_OFFSET + c.length;
            }
            for (Chunk c : incoming.values()) {
                if (c.volume != d) continue;
                n++;
                used += DATA_OFFSET + c.length;
            }
            if (n != d.chunkCount() || used != d.chunkBytes()) return false;
        }
        return true;
    }

    // ---------------------------------------------------------------- operations

    Promise<Void> create(long id, long version, int part, long writableUntilNanos) {
        return create(id, version, part, ChunkFormat.MAX_BLOCKS, false, writableUntilNanos);
    }

    /**
     * A new, empty copy of {@code capacity} blocks at most (the file's chunk size, or an erasure-coded part of it).
     * {@code nothingCommitted}: the master vouches that no write to the chunk was ever acknowledged, so an older
     * copy here gives way even if it holds durable bytes.
     */
    Promise<Void> create(long id, long version, int part, int capacity, boolean nothingCommitted, long writableUntilNanos) {
        int off = writtenOffPart(id);
        if (off >= 0 && off != part) return Promise.failed(refusedPart(id, part, off));
        return createChecked(id, version, part, capacity, nothingCommitted, writableUntilNanos);
    }

    /** As {@link #create}, the written-off parts already checked (by it, or by {@link #createCopy}). */
    private Promise<Void> createChecked(long id, long version, int part, int capacity, boolean nothingCommitted, long writableUntilNanos) {
        if (capacity < 1 || capacity > ChunkFormat.MAX_BLOCKS) {
            return Promise.failed(new CairnException(Status.BAD_REQUEST, "chunk capacity " + capacity + " blocks"));
        }
        Promise<Void> pendingDelete = deleting.get(id);
        if (pendingDelete != null) {
            return pendingDelete.then((v, e) -> createChecked(id, version, part, capacity, nothingCommitted, writableUntilNanos));
        }
        Chunk existing = chunks.get(id);
        if (existing != null) {
            // a retried create is fine
            if (existing.version == version && existing.part == part && existing.length == 0) {
                existing.writableUntilNanos = writableUntilNanos;
                existing.seenIdleUnsynced = false;
                return Promise.completed(null);
            }
            // an older copy gives way to the new one if it holds nothing durable (an empty or never-synced leftover)
            // or is corrupt. One holding durable data may hold acknowledged bytes the master lost track of (its
            // server reconnected and has not re-registered yet): the simulator caught a lease's top-up creating a
            // fresh copy over such a one and destroying it. The master hears of it at the next report. Unless the
            // master vouches that nothing in the chunk was ever acknowledged: then durable bytes are a leftover of an
            // upload that failed before its commit, and refusing would refuse every new placement that picks this
            // server (sim seed 1159 with three masters: an erasure-coded chunk whose first upload left durable parts on
            // two of five servers was re-leased for 150 s, every choice of three parts hitting one of them).
            if (existing.version < version) {
                if (!nothingCommitted && existing.durableSlot >= 0 && existing.durableLength > 0 && !existing.bad) {
                    return Promise.failed(new CairnException(Status.EXISTS, "chunk " + id + " is here at v" + existing.version + " with "
                            + existing.durableLength + " durable bytes: not replaced by a new copy at v" + version));
                }
                return delete(id, existing.version).flatMap(v -> createChecked(id, version, part, capacity, nothingCommitted, writableUntilNanos));
            }
            return Promise.failed(new CairnException(Status.EXISTS, "chunk " + id + " already exists at v" + existing.version));
        }
        Disk disk = pickVolume();
        if (disk == null) {
            return Promise.failed(new CairnException(Status.NO_SPACE, "no disk here can take a new chunk (failed or full)"));
        }
        Chunk c = new Chunk(id, disk);
        c.version = version;
        c.part = part;
        c.places = new BlockPlaces(capacity);
        c.writableUntilNanos = writableUntilNanos;
        put(c);
        return c.ops.submit(() -> writeHeader(c));
    }

    /**
     * Starts a copy the planner asked for: any copy here at this version or older (stale, or a leftover of
     * an earlier attempt) gives way, and so does a copy marked bad at any version (it can never be served,
     * and the master asks only for a version that holds every acknowledged byte). A good copy at a newer
     * version stays: the master may not have heard of its version yet. Filled with {@link #writeCopy},
     * then {@link #sync}ed.
     */
    Promise<Void> createCopy(long id, long version, int part, int capacity) { return createCopy(id, version, part, capacity, -1); }

    /**
     * As above; {@code replacesPart} (-1: none) is a part of this version held here that the new part is to
     * replace (the master holds it twice over in the cluster and has no other server for the missing part), or
     * {@code REPLACES_STALE}: whatever this server holds of the chunk, the master judges stale.
     */
    Promise<Void> createCopy(long id, long version, int part, int capacity, int replacesPart) {
        Chunk existing = chunks.get(id);
        if (existing != null && existing.version > version && !existing.bad) {
            return Promise.failed(new CairnException(Status.STALE, "chunk " + id + " is here at v" + existing.version + ", newer than v" + version));
        }
        int off = writtenOffPart(id);
        // the part a rebuild replaces is held twice over in the cluster: the written-off disk's copy of it is not its last
        if (off >= 0 && off != part && off != replacesPart) return Promise.failed(refusedPart(id, part, off));
        if (existing != null && holdsData(existing)) {
            // Durable bytes, perhaps acknowledged ones (a stale copy holds every byte acknowledged before the
            // version moved on): never deleted before the copy replacing it is durable, or a copy that fails
            // halfway (a dead source, a failing disk) leaves the chunk a copy short of what it had (sim seed
            // 12361: a stale copy deleted, the new one lost to an fsync error, the chunk left on one copy).
            boolean replaceable = existing.part == replacesPart || replacesPart == dev.cairn.core.proto.MasterProtocol.ReplicateChunk.REPLACES_STALE;
            if (existing.part != part && existing.version == version && !replaceable && !existing.bad) {
                // another part of the chunk, current: the master has not heard of it yet (it will at the next report),
                // and the table keeps one part per chunk. A stale part of another version is replaced like any
                // stale copy (a part of an erasure-coded chunk counts only at the chunk's version), and so is a part
                // marked bad, which the master no longer counts (sim seed 678 with three masters: a corrupt part 0
                // kept refusing the part 3 its chunk lacked).
                return Promise.failed(new CairnException(Status.EXISTS, "chunk " + id + " part " + existing.part + " v" + version
                        + " is here with " + existing.durableLength + " durable bytes: part " + part + " is not also taken here"));
            }
            if (incoming.containsKey(id)) {
                return Promise.failed(new CairnException(Status.BUSY, "a copy of chunk " + id + " is already being made here"));
            }
            // beside the old, so the new one replaces it by a rename; on another disk if the old one's is full: refused
            // there, the copy was asked again and again while another disk had room, and the chunk stayed a copy
            // short for good (10 s seed 2623: a stale copy on a full disk, nothing else on it to delete)
            Disk disk = existing.volume.full() ? pickVolume() : existing.volume;
            if (disk == null || disk.failed() || disk.full()) {
                return Promise.failed(new CairnException(Status.NO_SPACE, "no disk here can take a new copy of chunk " + id + " (the one holding it is "
                        + existing.volume.state().name().toLowerCase(java.util.Locale.ROOT) + ")"));
            }
            Chunk c = new Chunk(id, disk, INCOMING_PREFIX + ChunkFormat.fileName(id));
            c.version = version;
            c.part = part;
            c.places = new BlockPlaces(Math.max(1, Math.min(capacity, ChunkFormat.MAX_BLOCKS)));
            c.nameDurable = true; // its name need not survive a crash: the rename that installs it syncs the directory
            incoming.put(id, c);
            disk.account(1, DATA_OFFSET);
            return c.ops.submit(() -> writeHeader(c));
        }
        Promise<Void> cleared = existing == null ? Promise.completed(null) : delete(id, existing.version);
        return cleared.flatMap(v -> createChecked(id, version, part, capacity, false, 0));
    }

    /**
     * A copy that may hold acknowledged state: a durable header on a disk still in service. Its data may be empty:
     * a part of an erasure-coded chunk shorter than its stripe width holds no bytes and is still one of the k parts
     * the chunk is read from (sim seed 21 with three masters: an empty part 2 deleted to make room for a copy of
     * part 1 that then failed; the master still counted the part and deleted its other copy as extra).
     *
     * <p>A copy marked bad counts too. Bad means "not to be served or synced again", not "holds nothing": a write
     * that failed after rewriting a block in place, or a header that did not read back, leaves the newest durable
     * header and the blocks it names as they were, and even a copy with a flipped bit holds every other block.
     * Deleting it before its replacement is durable leaves the chunk a copy short if the copy then fails (sim
     * seed 631 with three masters: a bad copy at v116 whose durable v115 held every acknowledged byte, deleted to
     * make room for a copy of v118, left one copy of a replicated(3) chunk).
     */
    private static boolean holdsData(Chunk c) {
        return !c.deleted && c.durableSlot >= 0 && !c.volume.failed();
    }

    private static CairnException refusedPart(long id, int part, int off) {
        return new CairnException(Status.EXISTS, "chunk " + id + " part " + off + " is on a disk written off here, which may come back: "
                + "part " + part + " is not taken here meanwhile");
    }

    /** Name prefix of a planner copy built beside an older copy it is to replace (not a chunk file to recovery, which removes it). */
    static final String INCOMING_PREFIX = "incoming-";

    /**
     * Planner copies being built beside the durable copy they are to replace (chunk id -> the new copy): out of
     * the table, unseen by the master and by readers, until {@link #syncCopy} has made them durable and put
     * them in the old one's place. One per chunk (the chunkserver makes one copy of a chunk at a time).
     */
    private final java.util.HashMap<Long, Chunk> incoming = new java.util.HashMap<>();

    /** The copy a planner copy's pieces go to: the one being built beside an older copy, else the table's. */
    private Chunk copyTarget(long id) {
        Chunk c = incoming.get(id);
        return c != null ? c : find(id);
    }

    /** A piece of a planner copy: no lease window involved (the copy is not in any client's chain). */
    Promise<Void> writeCopy(long id, long version, long offset, byte[] data) {
        Chunk c = copyTarget(id);
        return c.ops.submit(() -> {
            checkVersion(c, version);
            return writeLocked(c, offset, data);
        });
    }

    /**
     * Makes a planner copy durable ({@code written} bytes copied into it): as {@link #sync} for a copy made in
     * the table; a copy built beside an older one is synced, then renamed over it (the directory synced), and
     * takes its place. Until then the old copy stands, served and counted; if the old one moved on meanwhile (a
     * newer version, deleted, replaced) the new one is not installed and the copy fails.
     */
    Promise<Void> syncCopy(long id, long version, long written) {
        Chunk n = incoming.get(id);
        if (n == null) return sync(id, version, written);
        return n.ops.submit(() -> {
            checkVersion(n, version);
            if (n.length < written) {
                throw new CairnException(Status.IO, "copy of chunk " + id + " v" + version + " holds " + n.length + " of the " + written + " bytes copied");
            }
            return persistHeader(n);
        }).flatMap(v -> install(n));
    }

    private Promise<Void> install(Chunk n) {
        Chunk old = chunks.get(n.id);
        if (old == null || incoming.get(n.id) != n) return Promise.failed(new CairnException(Status.NOT_FOUND, "chunk " + n.id + " went meanwhile"));
        // on the old copy's queue: no read, write or sync of it runs while its file is replaced
        return old.ops.submit(() -> {
            if (old.deleted || n.deleted || chunks.get(n.id) != old || incoming.get(n.id) != n) {
                throw new CairnException(Status.NOT_FOUND, "chunk " + n.id + " was deleted or replaced here meanwhile");
            }
            if (old.version > n.version && !old.bad) {
                throw new CairnException(Status.STALE, "chunk " + n.id + " moved on here to v" + old.version + " meanwhile");
            }
            if (old.volume != n.volume) return installElsewhere(old, n);
            return n.volume.rename(n.file, old.file).flatMap(v -> {
                // the name now holds the new copy, whatever a crash before the directory sync leaves (either
                // copy, each whole and durable): the table follows at once
                incoming.remove(n.id);
                n.file = old.file;
                old.deleted = true;
                chunks.put(n.id, n);
                old.volume.account(-1, -(DATA_OFFSET + old.length));
                old.volume.spaceFreed();
                log.debug("chunk {}: the copy made at v{} part {} replaced the one at v{} part {} on {}", n.id, n.version, n.part, old.version, old.part,
                        n.volume.name());
                return n.volume.syncDirectory();
            });
        });
    }

    /**
     * Installs a copy built on another disk than the one it replaces (that one was full): its name made durable
     * there first, then the old copy deleted. A crash between leaves the chunk on both disks, whole and durable
     * each, which recovery settles (the newer version, then the longer copy, wins: {@link #adopt}).
     */
    private Promise<Void> installElsewhere(Chunk old, Chunk n) {
        String name = ChunkFormat.fileName(n.id);
        return n.volume.rename(n.file, name).flatMap(v -> n.volume.syncDirectory()).flatMap(v -> {
            incoming.remove(n.id);
            n.file = name;
            old.deleted = true;
            chunks.put(n.id, n);
            old.volume.account(-1, -(DATA_OFFSET + old.length));
            log.debug("chunk {}: the copy made at v{} part {} on {} replaced the one at v{} part {} on {}", n.id, n.version, n.part, n.volume.name(),
                    old.version, old.part, old.volume.name());
            return old.volume.delete(old.file).flatMap(x -> old.volume.syncDirectory()).then((x, e) -> {
                if (e != null) log.warn("chunk {}: the replaced copy on {} could not be removed ({}); a restart settles it", n.id, old.volume.name(), e.getMessage());
                else old.volume.spaceFreed();
                return Promise.<Void>completed(null);
            });
        });
    }

    /**
     * A planner copy failed: its partial copy goes. One built beside an older copy is removed, the older one
     * untouched; one made in the table is deleted if still at {@code version}.
     */
    /** True while a planner copy of {@code id} is being built beside the table's copy ({@link #INCOMING_PREFIX}). */
    boolean buildingBeside(long id) { return incoming.containsKey(id); }

    Promise<Void> abandonCopy(long id, long version) {
        Chunk n = incoming.get(id);
        if (n == null) return delete(id, version);
        incoming.remove(id);
        n.volume.account(-1, -(DATA_OFFSET + n.length));
        return n.ops.submit(() -> {
            n.deleted = true;
            return n.volume.delete(n.file).map(v -> {
                n.volume.spaceFreed();
                return null;
            });
        });
    }

    /** Opens a write window on the copy at {@code version} until {@code untilNanos} (a lease's filled top-up copy). */
    void openWindow(long id, long version, long untilNanos) {
        Chunk c = chunks.get(id);
        if (c != null && c.version == version) c.writableUntilNanos = untilNanos;
    }

    /**
     * Closes the copy's write window, whatever its version (the master revoked the lease): a client write is refused
     * from the moment this is called, and the answer comes once the writes taken before have been applied (they run
     * in the copy's queue, behind which this waits), so whatever the master copies from this copy afterwards holds
     * every write it ever took. Nothing to do for a copy not here. {@code nowNanos}: the lease clock now (the window
     * ends at this instant, whatever values the clock takes).
     */
    Promise<Void> closeWindow(long id, long nowNanos) {
        Chunk c = chunks.get(id);
        if (c == null) return Promise.completed(null);
        if (nowNanos - c.writableUntilNanos < 0) c.writableUntilNanos = nowNanos;
        return c.ops.submit(() -> Promise.completed(null));
    }

    /** Marks a copy corrupt: reads refuse it from now on (it is deleted once the master has repaired the chunk). */
    void markBad(long id, long version) {
        Chunk c = chunks.get(id);
        if (c != null && c.version == version) c.bad = true;
    }

    /**
     * Whether a copy here was abandoned before it was ever made durable: created (by a client's lease or a
     * planner copy) but never synced, and left so. It holds nothing anyone acknowledged (every
     * acknowledgement needs a sync, which makes a header durable), yet the master counts a copy it was told
     * of at the current version and length, and a power loss would take it away without anyone noticing.
     * The first call that finds it so (no write window open on {@code nowNanos}, the lease clock) marks it;
     * a second with no create, write or sync in between (the scrubber's next search) answers true, and the
     * caller deletes it so the master's next inventory has it copied elsewhere.
     */
    boolean abandoned(long id, long nowNanos) { return abandoned(chunks.get(id), nowNanos); }

    private static boolean abandoned(Chunk c, long nowNanos) {
        if (c == null || c.durableSlot >= 0 || nowNanos - c.writableUntilNanos < 0) {
            if (c != null) c.seenIdleUnsynced = false;
            return false;
        }
        if (c.seenIdleUnsynced) return true;
        c.seenIdleUnsynced = true;
        return false;
    }

    /** {id, version} of every copy {@link #abandoned(long, long)} finds abandoned at {@code nowNanos} (marking those seen so the first time). */
    List<long[]> abandoned(long nowNanos) {
        List<long[]> out = new ArrayList<>();
        for (Chunk c : chunks.values()) if (abandoned(c, nowNanos)) out.add(new long[] {c.id, c.version});
        return out;
    }

    /**
     * Whether this server already holds the chunk at {@code version} (and {@code part}) with a synced
     * header, not bad: a planner copy to this server then fills it in place instead of replacing it (it may
     * hold acknowledged data the master has not heard of yet).
     */
    boolean holdsDurable(long id, long version, int part) {
        Chunk c = chunks.get(id);
        return c != null && !c.bad && !c.deleted && c.version == version && c.part == part && c.durableSlot >= 0;
    }

    /** True if the table's copy of {@code id} has a durable header (whatever its length), not marked bad. */
    boolean holdsDurableHeader(long id) {
        Chunk c = chunks.get(id);
        return c != null && !c.bad && !c.deleted && c.durableSlot >= 0;
    }

    /** Whether a copy of the chunk at any version is here, durable, not empty and not marked bad. */
    boolean holdsAnyDurable(long id) {
        Chunk c = chunks.get(id);
        return c != null && !c.bad && !c.deleted && c.durableSlot >= 0 && c.durableLength > 0;
    }

    /** {id, version, length} of a chunk that is here and not marked bad, or null. */
    long[] info(long id) {
        Chunk c = chunks.get(id);
        return c == null || c.bad ? null : new long[] {c.id, c.version, c.length};
    }

    /** {id, version, length} of the first chunk after {@code after} not marked bad (the scrubber's next), or null. */
    long[] nextChunk(long after) {
        for (var e = chunks.higherEntry(after); e != null; e = chunks.higherEntry(e.getKey())) {
            Chunk c = e.getValue();
            if (!c.bad) return new long[] {c.id, c.version, c.length};
        }
        return null;
    }

    Promise<Void> bump(long id, long from, long to) {
        return bump(id, from, to, 0);
    }

    Promise<Void> bump(long id, long from, long to, long writableUntilNanos) {
        return bump(id, from, to, writableUntilNanos, BumpVersion.NO_CUT);
    }

    /** As above, cutting a copy longer than {@code cutTo} bytes to that length ({@link BumpVersion#cutTo}). */
    Promise<Void> bump(long id, long from, long to, long writableUntilNanos, long cutTo) {
        Chunk c = find(id);
        return c.ops.submit(() -> {
            if (c.version != from) {
                return Promise.failed(new CairnException(Status.STALE, "chunk " + id + " is at v" + c.version + ", not v" + from));
            }
            Promise<Void> cut = cutTo != BumpVersion.NO_CUT && cutTo < c.length ? cut(c, cutTo) : Promise.completed(null);
            // Durable before the master hears OK: if every copy lost power after an unsynced bump they would
            // all come back at the old version, stale against the master's, and data acknowledged by an
            // earlier sync would become unreadable. The cut goes in the same header: a power loss keeps both or neither.
            return cut.flatMap(x -> {
                c.version = to;
                c.writableUntilNanos = writableUntilNanos;
                return persistHeader(c);
            }).map(v -> {
                hazard(Hazard.VERSION_BUMPED);
                return null;
            });
        });
    }

    /**
     * Shortens the copy to {@code length} bytes (in memory; the caller persists the header). The bytes stay where
     * they are on disk: only the length and the checksum of a partial last block change, the latter computed over
     * the block's kept bytes once the whole old block passed its checksum (a cut must not bless bytes the disk
     * returned wrong).
     */
    private Promise<Void> cut(Chunk c, long length) {
        assert length >= 0 && length < c.length : "cut of chunk " + c.id + " to " + length + " of " + c.length;
        long blockStart = alignDown(length);
        long blockEnd = Math.min(blockStart + BLOCK_SIZE, c.length);
        Promise<byte[]> last = length > blockStart ? readBlocks(c, blockStart, blockEnd) : Promise.completed(new byte[0]);
        return last.map(bytes -> {
            if (c.deleted) throw new CairnException(Status.NOT_FOUND, "chunk " + c.id + " deleted");
            checkBlocks(c, bytes, 0, blockStart, blockStart + bytes.length);
            if (length > blockStart) c.crcs[(int) (blockStart / BLOCK_SIZE)] = ChunkFormat.crc(bytes, 0, (int) (length - blockStart));
            c.volume.account(0, length - c.length);
            c.length = length;
            return null;
        });
    }

    /** A client write, taken only inside the lease window of this version ({@code nowNanos} on this server's clock). */
    Promise<Void> write(long id, long version, long offset, byte[] data, long nowNanos) {
        Chunk c = find(id);
        if (offset < 0 || offset + data.length > MAX_CHUNK_SIZE) {
            return Promise.failed(new CairnException(Status.BAD_REQUEST, "write of " + data.length + " at " + offset + " outside the chunk"));
        }
        if (c.version == version && nowNanos - c.writableUntilNanos >= 0 && !planted(Plant.LEASE_WINDOW_IGNORED)) {
            return Promise.failed(new CairnException(Status.EXPIRED, "the write window of chunk " + id + " v" + version + " has closed"));
        }
        return c.ops.submit(() -> {
            checkVersion(c, version);
            return writeLocked(c, offset, data).map(v -> {
                c.pieces++;
                return null;
            });
        });
    }

    /**
     * Syncs data, then the header (with checksums and length) into the non-durable slot, then the directory
     * entry. {@code written} is how many bytes the sender has written to this copy: a copy holding fewer
     * lost writes (this server restarted between them and the sync, and came back with what its last
     * durable header says), and syncing it would acknowledge bytes that are not here.
     */
    Promise<Void> sync(long id, long version, long written) { return sync(id, version, written, 0); }

    /**
     * As above; {@code pieces} is how many writes the sender made to this copy since its last sync (under this
     * version): a copy that took fewer lost some in a restart, even writes over bytes it still has.
     */
    Promise<Void> sync(long id, long version, long written, long pieces) {
        Chunk c = find(id);
        return c.ops.submit(() -> {
            checkVersion(c, version);
            if (c.bad) throw new CairnException(Status.CORRUPT, "chunk " + id + " v" + version + " is marked corrupt here");
            if (c.length < written) {
                throw new CairnException(Status.IO, "chunk " + id + " v" + version + " holds " + c.length + " of the " + written
                        + " bytes written to it (writes lost in a restart)");
            }
            if (c.pieces < pieces) {
                throw new CairnException(Status.IO, "chunk " + id + " v" + version + " took " + c.pieces + " of the " + pieces
                        + " writes sent to it since its last sync (writes lost in a restart)");
            }
            if (planted(Plant.ACK_BEFORE_FSYNC)) return writeHeader(c);
            return persistHeader(c);
        });
    }

    /** Reads and verifies every block the range touches; CORRUPT if any checksum fails. */
    Promise<byte[]> read(long id, long version, long offset, int length) { return read(id, version, ReadData.ANY_PART, offset, length); }

    /** As above, of a copy the reader takes for erasure-coded part {@code part}: STALE if it is another part ({@link ReadData#part}). */
    Promise<byte[]> read(long id, long version, int part, long offset, int length) {
        Chunk c = find(id);
        // reads of a chunk overlap each other (a random reader keeps many in flight on one chunk); a write waits for them
        return c.ops.submitShared(() -> {
            if (part != ReadData.ANY_PART && c.part != part) {
                throw new CairnException(Status.STALE, "chunk " + id + ": the copy here is part " + c.part + ", not part " + part);
            }
            Span span = span(c, version, offset, length);
            if (span == null) return Promise.completed(new byte[0]);
            long from = span.from, to = span.to, end = span.end;
            return readBlocks(c, from, to).map(full -> {
                // the planted bug LAST_BLOCK_UNVERIFIED leaves the read's last block unchecked
                long checkTo = planted(Plant.LAST_BLOCK_UNVERIFIED) && to - from > BLOCK_SIZE ? alignDown(to - 1) : to;
                if (planted(Plant.LAST_BLOCK_UNVERIFIED) && to - from <= BLOCK_SIZE) checkTo = from;
                checkBlocks(c, full, 0, from, checkTo);
                // a block-aligned read (most clients') is the bytes read: no second copy
                return offset == from && end == to ? full : Arrays.copyOfRange(full, (int) (offset - from), (int) (end - from));
            });
        });
    }

    /**
     * Checks the blocks of {@code [offset, offset + length)} against their checksums, which the volume
     * computes as it reads (a short file counting as zeros past its end, as in read): the scrubber's read,
     * which keeps no bytes. Fails as {@link #read} does.
     */
    Promise<Void> verify(long id, long version, long offset, int length) {
        Chunk c = find(id);
        return c.ops.submitShared(() -> {
            Span span = span(c, version, offset, length);
            if (span == null) return Promise.completed(null);
            long from = span.from, to = span.to;
            Promise<int[]> now = blockCrcs(c, from, to, c.places::offset);
            // pages rewritten since the newest durable header (not yet synced) have their durable bytes at the other
            // place: those are what a restart comes back with, so the durable blocks are verified too. Left unchecked,
            // a bit flip there hid behind writes never synced (a lease that moved on) while the master counted the copy
            // as current and deleted another as extra (60 s seed 5009)
            Header d = c.durable;
            List<Promise<int[]>> shadowed = new ArrayList<>();
            List<Integer> shadowedBlocks = new ArrayList<>();
            for (int b = (int) (from / BLOCK_SIZE); d != null && b < ChunkFormat.blocks(Math.min(to, d.length())); b++) {
                if (!movedSinceDurable(c, d, b)) continue;
                long blockFrom = (long) b * BLOCK_SIZE;
                shadowed.add(blockCrcs(c, blockFrom, Math.min(blockFrom + BLOCK_SIZE, d.length()), d::pageOffset));
                shadowedBlocks.add(b);
            }
            return now.flatMap(crcs -> {
                for (int i = 0; i < crcs.length; i++) checkBlock(c, (int) (from / BLOCK_SIZE) + i, crcs[i]);
                return Promise.all(shadowed);
            }).map(all -> {
                for (int i = 0; i < all.size(); i++) {
                    int b = shadowedBlocks.get(i);
                    if (all.get(i)[0] != d.crcs()[b]) {
                        throw new CairnException(Status.CORRUPT, "chunk " + c.id + " block " + b + " fails its checksum where the durable header (seq "
                                + d.seq() + ") has it");
                    }
                }
                return null;
            });
        });
    }

    /** Bytes {@link #verifyAll} checks per step (bounded reads, as the scrubber's). */
    static final int VERIFY_PIECE = 8 << 20;

    /** Checks the whole copy as {@link #verify} does, a piece at a time (the master asks it of a copy it remembers as corrupt). */
    Promise<Void> verifyAll(long id, long version) {
        return verifyFrom(find(id), version, 0);
    }

    private Promise<Void> verifyFrom(Chunk c, long version, long offset) {
        int n = (int) Math.max(0, Math.min(VERIFY_PIECE, c.length - offset));
        return verify(c.id, version, offset, n).flatMap(v -> offset + n < c.length && n > 0 ? verifyFrom(c, version, offset + n) : Promise.completed(null));
    }

    /** What a read of a chunk's bytes touches: whole blocks {@code [from, to)} within it, for bytes up to {@code end}. */
    private record Span(long from, long to, long end) {}

    /** The span a read of {@code [offset, offset + length)} touches; null if no byte is there. Refuses what a read refuses. */
    private static Span span(Chunk c, long version, long offset, int length) {
        checkVersion(c, version);
        if (c.bad) throw new CairnException(Status.CORRUPT, "chunk " + c.id + " v" + version + " is marked corrupt here");
        if (offset < 0 || length < 0) throw new CairnException(Status.BAD_REQUEST, "negative offset or length");
        long end = Math.min(c.length, offset + length);
        if (offset >= end) return null;
        return new Span(alignDown(offset), Math.min(alignUp(end), c.length), end);
    }

    /** Fails CORRUPT unless every block of chunk bytes {@code [from, to)}, held in {@code buf} from {@code at}, matches its checksum. */
    private static void checkBlocks(Chunk c, byte[] buf, int at, long from, long to) {
        for (long b = from; b < to; b += BLOCK_SIZE) {
            int n = (int) Math.min(BLOCK_SIZE, to - b);
            checkBlock(c, (int) (b / BLOCK_SIZE), ChunkFormat.crc(buf, at + (int) (b - from), n));
        }
    }

    /** Fails CORRUPT unless block {@code blk}'s bytes, with checksum {@code crc}, match the checksum the header holds. */
    private static void checkBlock(Chunk c, int blk, int crc) {
        if (crc != c.crcs[blk]) throw new CairnException(Status.CORRUPT, "chunk " + c.id + " block " + blk + " fails its checksum");
    }

    /** Deletes the copy if it is at {@code version} (any version for {@code DeleteChunk.ANY_VERSION}); done if there is none. */
    Promise<Void> delete(long id, long version) {
        Chunk c = chunks.get(id);
        if (c == null || (version != dev.cairn.core.proto.MasterProtocol.DeleteChunk.ANY_VERSION && c.version != version)) {
            return Promise.completed(null);
        }
        chunks.remove(id);
        c.volume.account(-1, -(DATA_OFFSET + c.length));
        c.volume.retiring(c.file);
        Promise<Void> gone = c.ops.submit(() -> {
            c.deleted = true;
            return c.volume.delete(c.file).map(v -> {
                c.volume.spaceFreed();
                return null;
            });
        });
        // until the file is gone a new copy of the chunk must not be started: it would write the same file, and
        // the queued delete would then take it (the simulator caught a new header landing on the old file)
        deleting.put(id, gone);
        gone.onComplete((v, e) -> deleting.remove(id, gone));
        return gone;
    }

    /** Chunk id -> the deletion of its file, while it is queued behind the old copy's operations. */
    private final java.util.HashMap<Long, Promise<Void>> deleting = new java.util.HashMap<>();

    // ---------------------------------------------------------------- internals

    /**
     * Writes {@code data} at {@code offset}. Checksums cover whole 64 KiB blocks, so a write that starts
     * or ends inside a block (or leaves a hole after a partial last block) first reads the old bytes of
     * those blocks to checksum them whole; only the pages the write changes (and those of a hole it leaves)
     * are written, each to a place the newest durable header does not name.
     */
    private Promise<Void> writeLocked(Chunk c, long offset, byte[] data) {
        long oldLength = c.length;
        // an empty write past the end extends the copy with zeros (a chunk a file grew over); at or before it, nothing
        if (data.length == 0 && offset <= oldLength) return Promise.completed(null);
        long end = offset + data.length;
        long newLength = Math.max(oldLength, end);
        // past the end, start at the old partial last block so it and the hole get their checksums
        long from = offset > oldLength ? alignDown(oldLength) : alignDown(offset);
        long to = Math.min(alignUp(end), newLength);
        if (to > (long) c.places.capacity * BLOCK_SIZE) {
            return Promise.failed(new CairnException(Status.BAD_REQUEST, "write to " + end + " past the " + c.places.capacity
                    + " blocks chunk " + c.id + " may hold"));
        }
        // the old bytes of a partial first and a partial last block, read from where each block is now and checked
        // against its checksum: merging bytes a disk returned wrong into a rewritten block would give them a valid one
        long headEnd = from < offset && from < oldLength ? Math.min(from + BLOCK_SIZE, oldLength) : from;
        long tailStart = Math.max(headEnd, alignDown(end));
        long tailEnd = end < to && end < oldLength ? Math.min(to, oldLength) : tailStart;
        Promise<byte[]> head = headEnd > from ? readBlocks(c, from, headEnd) : Promise.completed(new byte[0]);
        Promise<byte[]> tail = tailEnd > tailStart ? readBlocks(c, tailStart, tailEnd) : Promise.completed(new byte[0]);
        c.seenIdleUnsynced = false;
        return Promise.all(List.of(head, tail)).flatMap(old -> {
            if (c.deleted) throw new CairnException(Status.NOT_FOUND, "chunk " + c.id + " deleted");
            byte[] headBytes = old.get(0), tailBytes = old.get(1);
            checkBlocks(c, headBytes, 0, from, from + headBytes.length);
            checkBlocks(c, tailBytes, 0, tailStart, tailStart + tailBytes.length);
            byte[] region = from == offset && to == end ? data : new byte[(int) (to - from)]; // whole blocks: as given
            if (region != data) {
                System.arraycopy(headBytes, 0, region, 0, headBytes.length);
                System.arraycopy(tailBytes, 0, region, (int) (tailStart - from), tailBytes.length);
                System.arraycopy(data, 0, region, (int) (offset - from), data.length);
            }
            // the pages the write changes: from its first (or, past the end, from the old end's, so the hole reads
            // as zeros wherever its pages are) to its last; each to a place the newest durable header does not name
            // (never over acknowledged bytes), runs of pages whose places follow each other in one write
            long wFrom = alignDownPage(Math.min(offset, oldLength)), wTo = Math.min(alignUpPage(end), to);
            assert from <= wFrom && wFrom < wTo && wTo <= to : "pages [" + wFrom + ", " + wTo + ") outside blocks [" + from + ", " + to + ")";
            int first = (int) (wFrom / PAGE_SIZE), last = (int) ((wTo - 1) / PAGE_SIZE);
            boolean[] was = new boolean[last - first + 1];
            boolean inPlace = false;
            boolean overDurable = planted(Plant.OVERWRITE_IN_PLACE);
            for (int p = first; p <= last; p++) {
                was[p - first] = c.places.shadowed(p);
                boolean at = overDurable ? was[p - first] : c.places.placeForWrite(p);
                if (at == was[p - first] && (long) p * PAGE_SIZE < oldLength) inPlace = true;
            }
            boolean overwroteInPlace = inPlace;
            List<Promise<Void>> writes = new ArrayList<>(1);
            forEachRun(wFrom, wTo, c.places::offset, (chunkOffset, fileOffset, bytes) -> {
                int at = (int) (chunkOffset - from);
                byte[] piece = at == 0 && bytes == region.length ? region : Arrays.copyOfRange(region, at, at + bytes);
                writes.add(c.volume.write(c.file, fileOffset, piece));
            });
            return Promise.all(writes).onFailure(e -> {
                // the pages go back where they were (their old place holds their old bytes, which the checksums
                // still describe); a page rewritten where it was, not yet durable, now holds bytes no checksum
                // describes: the copy is not to be read or made durable again (the writer leaves it out)
                for (int p = first; p <= last; p++) c.places.restore(p, was[p - first]);
                if (overwroteInPlace) c.bad = true;
            }).map(v -> {
                c.dataDirty = true;
                if (!c.deleted) c.volume.account(0, newLength - c.length);
                c.length = newLength;
                int blocks = ChunkFormat.blocks(newLength);
                if (c.crcs.length < blocks) c.crcs = Arrays.copyOf(c.crcs, Math.min(ChunkFormat.MAX_BLOCKS, Math.max(blocks, 2 * c.crcs.length)));
                for (long b = from; b < to; b += BLOCK_SIZE) {
                    int n = (int) Math.min(BLOCK_SIZE, to - b);
                    c.crcs[(int) (b / BLOCK_SIZE)] = ChunkFormat.crc(region, (int) (b - from), n);
                }
                return null;
            });
        });
    }

    /**
     * Makes the chunk's current state durable, in this order: the data (one fsync), then the header with
     * version, length and checksums in the slot that is not the newest durable one (a second fsync), then
     * (for a new file) the directory entry. Only after all three is the new slot the durable one.
     *
     * <p>Data before header, each with its own fsync: one fsync over both lets the disk persist them in
     * any order, and a power loss in between can keep the new header and tear the data it vouches for: the
     * copy's newest header then fails its own checksums, and after a cluster-wide power cut every copy of a
     * chunk would (the simulator's check of durable images across torn power losses found it). The first
     * fsync is skipped when nothing was written since the last durable header (a version bump).
     */
    private Promise<Void> persistHeader(Chunk c) {
        // a bad copy's idea of which slot holds its newest durable header may be wrong (a header whose read-back failed
        // may be durable after all): nothing more is written over its slots
        if (c.bad) return Promise.failed(new CairnException(Status.CORRUPT, "chunk " + c.id + " v" + c.version + " is marked corrupt here: no header is written to it"));
        c.seenIdleUnsynced = false;
        long length = c.length;
        boolean dataFirst = c.dataDirty && !planted(Plant.HEADER_BEFORE_DATA);
        c.dataDirty = false; // a write from now on (none: the chunk's queue runs this alone) would need the next sync
        Promise<Void> data = dataFirst ? c.volume.sync(c.file) : Promise.completed(null);
        int[] slotOf = {-1};
        Header[] headerOf = {null};
        byte[][] encoded = {null};
        return data
                .flatMap(v -> {
                    if (dataFirst) {
                        synced(c);
                        hazard(Hazard.CHUNK_DATA_SYNCED);
                    }
                    // the slot is chosen once the data is durable: that fsync made any header written since the last
                    // one durable too (a new copy's first header), and the newest durable header is never written over
                    int slot = planted(Plant.HEADER_OVER_DURABLE_SLOT) && c.durableSlot >= 0 ? c.durableSlot : c.nextSlot();
                    slotOf[0] = slot;
                    c.seq++;
                    Header h = c.header();
                    headerOf[0] = h;
                    encoded[0] = ChunkFormat.encodeHeader(h);
                    return c.volume.write(c.file, ChunkFormat.slotOffset(slot), encoded[0]);
                })
                .flatMap(v -> {
                    hazard(Hazard.CHUNK_HEADER_WRITTEN);
                    return planted(Plant.HEADER_NOT_SYNCED) ? Promise.<Void>completed(null) : c.volume.sync(c.file);
                })
                .flatMap(v -> verifyHeader(c, slotOf[0], encoded[0]))
                .flatMap(v -> c.nameDurable || planted(Plant.DIR_NOT_SYNCED) ? Promise.<Void>completed(null) : c.volume.syncDirectory())
                .map(v -> {
                    int slot = slotOf[0];
                    assert slot != c.durableSlot || planted(Plant.HEADER_OVER_DURABLE_SLOT) : "header written over the newest durable one";
                    c.durableSlot = slot;
                    c.unsyncedSlot = -1;
                    c.unsynced = null;
                    c.durableLength = length;
                    c.durable = headerOf[0];
                    c.places.durable(headerOf[0].shadow(), headerOf[0].crcs().length);
                    c.pieces = 0; // writes up to here are durable: a sync from now on counts the ones after
                    c.nameDurable = true;
                    hazard(Hazard.CHUNK_HEADER_SYNCED);
                    return null;
                });
    }

    /**
     * Reads the header just synced back from the device (past the OS's cache): a header the disk put elsewhere
     * or dropped and still acknowledged leaves the slot with an older header that verifies, and after a restart
     * the copy would come back at the same version without the writes this sync made durable, counted current
     * by the master (sim seeds 4065, 4194, 4548 at 30 s: a misdirected header write). Such a copy is marked bad
     * and the sync fails naming this server, so the writer leaves it out of its next lease, whose new version
     * makes the rolled-back copy stale.
     */
    private Promise<Void> verifyHeader(Chunk c, int slot, byte[] header) {
        if (planted(Plant.HEADER_NOT_SYNCED)) return Promise.completed(null);
        return c.volume.readFromDevice(c.file, ChunkFormat.slotOffset(slot), header.length).then((back, e) -> {
            if (e != null) {
                // written and synced, yet unread: the slot may now hold the newest durable header or not, so the copy's
                // record of its slots cannot be trusted, and a later header could go over a durable one (60 s seed 5026,
                // once a read error no longer failed the whole disk)
                c.bad = true;
                return Promise.failed(new CairnException(Status.CORRUPT, "the header of chunk " + c.id + " v" + c.version + " on " + c.volume.name()
                        + " could not be read back (" + e.getMessage() + "): copy marked bad"));
            }
            return Promise.completed(back);
        }).map(back -> {
            if (!Arrays.equals(back, header)) {
                c.bad = true;
                throw new CairnException(Status.IO, "the header of chunk " + c.id + " v" + c.version + " on " + c.volume.name()
                        + " did not read back as written (a write the disk put elsewhere or lost): copy marked bad");
            }
            return null;
        });
    }

    /** The file was fsynced: a header written since the last durable one is durable now. */
    private static void synced(Chunk c) {
        if (c.unsyncedSlot < 0) return;
        c.durableSlot = c.unsyncedSlot;
        c.durableLength = c.unsynced.length();
        c.durable = c.unsynced;
        c.places.durable(c.unsynced.shadow(), c.unsynced.crcs().length);
        c.unsyncedSlot = -1;
        c.unsynced = null;
    }

    /** A run of pages whose places follow each other in the file: chunk bytes from {@code chunkOffset}, at {@code fileOffset}, {@code bytes} long. */
    private interface Run { void accept(long chunkOffset, long fileOffset, int bytes); }

    /**
     * The chunk bytes {@code [from, to)} (from a page boundary) in runs of pages that lie one after another in
     * the file, each page where {@code placeOf} puts it: a copy written once is one run; an overwritten page at
     * its other place splits it.
     */
    private static void forEachRun(long from, long to, IntToLongFunction placeOf, Run run) {
        assert from % PAGE_SIZE == 0 && from < to : "run of [" + from + ", " + to + ")";
        int first = (int) (from / PAGE_SIZE), last = (int) ((to - 1) / PAGE_SIZE);
        int start = first;
        long startAt = placeOf.applyAsLong(first), prev = startAt;
        for (int p = first + 1; p <= last; p++) {
            long at = placeOf.applyAsLong(p);
            if (at != prev + PAGE_SIZE) {
                run.accept((long) start * PAGE_SIZE, startAt, (p - start) * PAGE_SIZE);
                start = p;
                startAt = at;
            }
            prev = at;
        }
        run.accept((long) start * PAGE_SIZE, startAt, (int) (to - (long) start * PAGE_SIZE));
    }

    /** True if a page of block {@code b} is not where the durable header {@code d} has it (written since). */
    private static boolean movedSinceDurable(Chunk c, Header d, int b) {
        if (!d.anyShadowed(b) && !c.places.anyShadowed(b)) return false;
        for (int p = b * PAGES_PER_BLOCK; p < (b + 1) * PAGES_PER_BLOCK; p++) if (d.shadowed(p) != c.places.shadowed(p)) return true;
        return false;
    }

    /**
     * The checksum of each block of chunk bytes {@code [from, to)} (from a block boundary), its pages read where
     * {@code placeOf} puts them, keeping no bytes: the volume checksums each run of pages (whole blocks where a run
     * starts on one, pages up to the next block where it starts inside one) and the pieces combine.
     */
    private static Promise<int[]> blockCrcs(Chunk c, long from, long to, IntToLongFunction placeOf) {
        assert from % BLOCK_SIZE == 0 && from < to;
        List<Promise<int[]>> pieces = new ArrayList<>(1);
        List<long[]> at = new ArrayList<>(1); // {chunk offset, bytes, piece size} of each
        forEachRun(from, to, placeOf, (chunkOffset, fileOffset, bytes) -> {
            int head = chunkOffset % BLOCK_SIZE == 0 ? 0 : (int) Math.min(bytes, BLOCK_SIZE - chunkOffset % BLOCK_SIZE);
            if (head > 0) {
                pieces.add(c.volume.checksums(c.file, fileOffset, head, PAGE_SIZE));
                at.add(new long[] {chunkOffset, head, PAGE_SIZE});
            }
            if (bytes > head) {
                pieces.add(c.volume.checksums(c.file, fileOffset + head, bytes - head, BLOCK_SIZE));
                at.add(new long[] {chunkOffset + head, bytes - head, BLOCK_SIZE});
            }
        });
        return Promise.all(pieces).map(all -> {
            int[] out = new int[ChunkFormat.blocks(to - from)];
            for (int r = 0; r < all.size(); r++) {
                long pos = at.get(r)[0], end = pos + at.get(r)[1];
                int size = (int) at.get(r)[2];
                for (int crc : all.get(r)) {
                    int n = (int) Math.min(size, end - pos);
                    int blk = (int) ((pos - from) / BLOCK_SIZE);
                    out[blk] = pos % BLOCK_SIZE == 0 ? crc : Crc32c.combine(out[blk], crc, n);
                    pos += n;
                }
                assert pos == end : "checksums of " + at.get(r)[1] + " bytes cover " + (pos - at.get(r)[0]);
            }
            return out;
        });
    }

    /** Chunk bytes {@code [from, to)} (from a page boundary) from where their pages are; zeros past the file's end. */
    private static Promise<byte[]> readBlocks(Chunk c, long from, long to) {
        if (to <= from) return Promise.completed(new byte[0]);
        List<Promise<byte[]>> reads = new ArrayList<>(1);
        List<Long> at = new ArrayList<>(1);
        forEachRun(from, to, c.places::offset, (chunkOffset, fileOffset, bytes) -> {
            reads.add(c.volume.read(c.file, fileOffset, bytes));
            at.add(chunkOffset - from);
        });
        return Promise.all(reads).map(parts -> {
            if (parts.size() == 1 && parts.get(0).length == to - from) return parts.get(0); // one run, read whole: no copy
            byte[] out = new byte[(int) (to - from)];
            for (int i = 0; i < parts.size(); i++) System.arraycopy(parts.get(i), 0, out, (int) (long) at.get(i), Math.min(parts.get(i).length, out.length - (int) (long) at.get(i)));
            return out;
        });
    }

    /** Writes the header without syncing (a new, empty chunk: losing it loses nothing acknowledged). */
    private Promise<Void> writeHeader(Chunk c) {
        c.seq++;
        int slot = c.nextSlot();
        Header h = c.header();
        return c.volume.write(c.file, ChunkFormat.slotOffset(slot), ChunkFormat.encodeHeader(h)).map(v -> {
            c.unsyncedSlot = slot;
            c.unsynced = h;
            return null;
        });
    }

    private Chunk find(long id) {
        Chunk c = chunks.get(id);
        if (c == null) throw new CairnException(Status.NOT_FOUND, "no chunk " + id + " here");
        return c;
    }

    private static void checkVersion(Chunk c, long version) {
        if (c.deleted) throw new CairnException(Status.NOT_FOUND, "chunk " + c.id + " deleted");
        if (c.version != version) throw new CairnException(Status.STALE, "chunk " + c.id + " is at v" + c.version + ", asked v" + version);
    }

    /** Into the table and its disk's tally. */
    private void put(Chunk c) {
        chunks.put(c.id, c);
        c.volume.account(1, DATA_OFFSET + c.length);
    }

    /**
     * The disk for a new chunk: of the usable ones (not failed, full or slow) the one with the fewest
     * chunks, first in configured order on a tie; a slow disk only if no other can take it; null if
     * every disk is failed or full.
     */
    private Disk pickVolume() {
        Disk best = null, fallback = null;
        for (Disk d : volumes) {
            if (d.failed() || d.full()) continue;
            if (!d.slow() && (best == null || d.chunkCount() < best.chunkCount())) best = d;
            if (fallback == null || d.chunkCount() < fallback.chunkCount()) fallback = d;
        }
        return best != null ? best : fallback;
    }

    private static long alignDown(long v) { return v / BLOCK_SIZE * BLOCK_SIZE; }

    private static long alignUp(long v) { return (v + BLOCK_SIZE - 1) / BLOCK_SIZE * BLOCK_SIZE; }

    private static long alignDownPage(long v) { return v / PAGE_SIZE * PAGE_SIZE; }

    private static long alignUpPage(long v) { return (v + PAGE_SIZE - 1) / PAGE_SIZE * PAGE_SIZE; }
}
