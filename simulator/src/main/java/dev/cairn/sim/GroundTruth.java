package dev.cairn.sim;

import dev.cairn.core.chunk.ChunkFormat;
import dev.cairn.core.chunk.ChunkFormat.Header;
import dev.cairn.core.chunk.Crc32c;
import dev.cairn.core.proto.CodecException;
import dev.cairn.sim.runtime.SimDisk;
import dev.cairn.sim.runtime.SimHost;
import java.util.ArrayList;
import java.util.List;

/**
 * Reads chunk copies straight off the simulated disks, bypassing the system: what the checkers compare
 * the system's claims against. A copy's header is the valid slot with the highest sequence number, as a
 * chunkserver reads it at start-up; {@code intact} is true when every block matches its checksum.
 *
 * <p>Two views: the <em>current</em> one (what the page cache shows: what the system reads now) and the
 * <em>durable</em> one (the names a directory sync made durable and the bytes a file sync made durable:
 * what any power loss from now on leaves). Acknowledgements and losses are judged on the durable view.
 */
final class GroundTruth {
    /** One chunk file as found; {@code bytes} reads it in the same view. Version -1: no valid header. */
    record Copy(String host, String disk, long chunkId, long version, int part, long length, long seq, boolean intact, String note, Bytes bytes,
                Header header) {
        /** The block checksums its header holds (none without a valid header). */
        int[] crcs() { return header == null ? new int[0] : header.crcs(); }

        /**
         * Up to {@code n} bytes of the copy's data at {@code offset} (its chunk bytes, not the file's) into
         * {@code into}, each page from the place its header names; how many (up to the header's length).
         */
        int readData(long offset, byte[] into, int n) {
            int got = 0;
            while (got < n && offset + got < length) {
                long pos = offset + got;
                int page = (int) (pos / ChunkFormat.PAGE_SIZE), in = (int) (pos % ChunkFormat.PAGE_SIZE);
                int k = (int) Math.min(Math.min(n - got, ChunkFormat.PAGE_SIZE - in), length - pos);
                byte[] tmp = got == 0 && k == n ? into : new byte[k];
                bytes.read(header.pageOffset(page) + in, tmp, k);
                if (tmp != into) System.arraycopy(tmp, 0, into, got, k);
                got += k;
            }
            return got;
        }

        /** The first of its data bytes {@code [offset, offset + n)} that {@code compare} finds different (from {@code offset}), or -1. */
        long mismatchData(long offset, int n, SimDisk.Compare compare) {
            for (int done = 0; done < n; ) {
                long pos = offset + done;
                int page = (int) (pos / ChunkFormat.PAGE_SIZE), in = (int) (pos % ChunkFormat.PAGE_SIZE);
                int k = Math.min(n - done, ChunkFormat.PAGE_SIZE - in);
                int base = done;
                long x = bytes.mismatch(header.pageOffset(page) + in, k, (b, from, len, at) -> compare.mismatch(b, from, len, base + at));
                if (x >= 0) return done + x;
                done += k;
            }
            return -1;
        }
    }

    private GroundTruth() {}

    /** Every chunk file on the host's disks, current view (dead disks excluded: nothing can be read from them). */
    static List<Copy> copies(SimHost h) {
        List<Copy> out = new ArrayList<>();
        // one buffer for every header read (an audit reads every copy once a second while it waits)
        byte[] buf = new byte[ChunkFormat.SLOT_SIZE];
        for (String dn : h.diskNames()) {
            SimDisk d = h.diskOrNull(dn);
            if (d == null || d.isDead()) continue;
            for (String file : d.files()) {
                long id = ChunkFormat.chunkIdOf(file);
                if (id < 0) continue;
                out.add(read(h.name(), dn, id, new DiskFile(d, file), buf));
            }
        }
        return out;
    }

    /**
     * The durable copies of one chunk on a host, as a power loss now would leave them: on every disk but a
     * dead one (a disk that died is gone for good with what it held). A file the chunkserver has deleted counts
     * for nothing even while its removal is not yet durable: the system cannot read it now (only a power loss
     * could bring it back), so a fault that takes the copies it still has is what loses the chunk.
     */
    static void durableCopies(SimHost h, long chunkId, String name, List<Copy> out, byte[] buf) {
        if (h.isLost()) return;
        for (SimDisk d : h.disks()) {
            if (d.isDead() || d.peekDurableLength(name) < 0 || d.peekLength(name) < 0) continue;
            out.add(read(h.name(), d.name(), chunkId, new DurableFile(d, name), buf));
        }
    }

    /** The durable copy in chunk file {@code name} of one disk (it must be a durable name). */
    static Copy durableCopy(String host, SimDisk d, String name) {
        return read(host, d.name(), ChunkFormat.chunkIdOf(name), new DurableFile(d, name), new byte[ChunkFormat.SLOT_SIZE]);
    }

    /**
     * The newest valid header of chunk file {@code name}'s durable view (what a power loss now would come back
     * with), or null if it has none; unlike {@link #durableCopy}, its blocks are not checked (a write's check).
     */
    static Header durableHeader(SimDisk d, String name) {
        return bestHeader(new DurableFile(d, name), ChunkFormat.chunkIdOf(name), new byte[ChunkFormat.SLOT_SIZE]);
    }

    /** The slot (0 or 1) of a durable chunk file whose durable header has sequence {@code seq}. */
    static int durableSlot(SimDisk d, String name, long seq) {
        byte[] buf = new byte[ChunkFormat.SLOT_SIZE];
        for (int slot = 0; slot < 2; slot++) {
            long off = ChunkFormat.slotOffset(slot);
            int n = d.peekDurableInto(name, off, buf, ChunkFormat.SLOT_SIZE);
            if (n < ChunkFormat.MIN_HEADER_BYTES) continue;
            int head = ChunkFormat.headerBytes(buf);
            if (head == 0 || head > n) continue;
            try {
                if (ChunkFormat.decodeHeader(buf, head, ChunkFormat.chunkIdOf(name)).seq() == seq) return slot;
            } catch (CodecException e) {
                // not this one
            }
        }
        throw new IllegalStateException("no durable header seq " + seq + " in " + name);
    }

    /** Chunk ids with a file on one disk of a host, current or durable (what a fault there destroys). */
    static List<Long> chunkIds(SimHost h, String disk) {
        java.util.TreeSet<Long> out = new java.util.TreeSet<>();
        SimDisk d = h.diskOrNull(disk);
        if (d == null) return new ArrayList<>();
        for (String file : d.files()) if (ChunkFormat.chunkIdOf(file) >= 0) out.add(ChunkFormat.chunkIdOf(file));
        for (String file : d.durableFiles()) if (ChunkFormat.chunkIdOf(file) >= 0) out.add(ChunkFormat.chunkIdOf(file));
        return new ArrayList<>(out);
    }

    /** A file's bytes as the checker reads them. */
    interface Bytes {
        long length();

        /** Up to {@code n} bytes at {@code offset} into {@code into} from index 0; how many. */
        int read(long offset, byte[] into, int n);

        /** The CRC32C of {@code n} bytes at {@code offset} (zeros past the end). */
        int crc32c(long offset, int n);

        /** The position (from {@code offset}) of the first byte of {@code [offset, offset + n)} {@code compare} finds different, or -1. */
        default long mismatch(long offset, int n, SimDisk.Compare compare) {
            byte[] b = new byte[n];
            read(offset, b, n);
            return compare.mismatch(b, 0, n, 0);
        }
    }

    private record DiskFile(SimDisk disk, String name) implements Bytes {
        @Override public long length() { return Math.max(0, disk.peekLength(name)); }

        @Override public int read(long offset, byte[] into, int n) { return Math.max(0, disk.peekInto(name, offset, into, n)); }

        /** From the checksums the simulated file remembers of its unchanged pages: an audit does not re-read every byte. */
        @Override public int crc32c(long offset, int n) { return disk.peekCrc32c(name, offset, n); }
    }

    /** The durable view of a durable name: what a power loss now would leave of it. */
    private record DurableFile(SimDisk disk, String name) implements Bytes {
        @Override public long length() { return Math.max(0, disk.peekDurableLength(name)); }

        @Override public int read(long offset, byte[] into, int n) { return Math.max(0, disk.peekDurableInto(name, offset, into, n)); }

        /** From the checksums the volatile view remembers of pages the durable one still shares with it. */
        @Override public int crc32c(long offset, int n) { return disk.peekDurableCrc32c(name, offset, n); }

        /** In place, page by page: the checkers compare every acknowledged byte of a copy without copying it out. */
        @Override public long mismatch(long offset, int n, SimDisk.Compare compare) { return disk.peekDurableMismatch(name, offset, n, compare); }
    }

    /** A copy held in an array (tests). */
    static Copy read(String host, String disk, long id, byte[] bytes) {
        Bytes b = new Bytes() {
            @Override public long length() { return bytes.length; }

            @Override public int read(long offset, byte[] into, int n) {
                int k = (int) Math.max(0, Math.min(n, bytes.length - offset));
                System.arraycopy(bytes, (int) offset, into, 0, k);
                return k;
            }

            @Override public int crc32c(long offset, int n) {
                byte[] b = new byte[n];
                read(offset, b, n);
                return ChunkFormat.crc(b, 0, n);
            }
        };
        return read(host, disk, id, b, new byte[ChunkFormat.SLOT_SIZE]);
    }

    /** The valid header of the two slots with the highest sequence, or null if neither holds one. */
    private static Header bestHeader(Bytes bytes, long id, byte[] buf) {
        long size = bytes.length();
        Header best = null;
        for (int slot = 0; slot < 2; slot++) {
            long off = ChunkFormat.slotOffset(slot);
            if (size < off + ChunkFormat.MIN_HEADER_BYTES) continue; // a slot holds just its header
            int n = (int) Math.min(ChunkFormat.SLOT_SIZE, size - off);
            bytes.read(off, buf, ChunkFormat.MIN_HEADER_BYTES);
            int head = ChunkFormat.headerBytes(buf);
            if (head == 0) continue; // blank: never written
            int len = Math.min(n, head); // too short for its header: decoding says so
            bytes.read(off, buf, len);
            try {
                Header h = ChunkFormat.decodeHeader(buf, len, id);
                if (best == null || h.seq() > best.seq()) best = h;
            } catch (CodecException e) {
                // blank or torn slot: the other one decides
            }
        }
        return best;
    }

    /** A copy with version -1 has no valid header (a chunk never synced, or a torn one). */
    private static Copy read(String host, String disk, long id, Bytes bytes, byte[] buf) {
        long size = bytes.length();
        Header best = bestHeader(bytes, id, buf);
        if (best == null) return new Copy(host, disk, id, -1, -1, 0, -1, false, "no valid header", bytes, null);
        boolean intact = true;
        String note = "";
        for (int b = 0; intact && b < best.crcs().length; b++) {
            long from = (long) b * ChunkFormat.BLOCK_SIZE;
            int n = (int) Math.min(ChunkFormat.BLOCK_SIZE, best.length() - from);
            // the block's pages in runs whose places follow each other, their checksums combined
            int crc = 0;
            for (int done = 0; done < n; ) {
                int page = (int) ((from + done) / ChunkFormat.PAGE_SIZE);
                long at = best.pageOffset(page);
                int run = Math.min(ChunkFormat.PAGE_SIZE, n - done);
                while (done + run < n && best.pageOffset(page + run / ChunkFormat.PAGE_SIZE) == at + run) run += Math.min(ChunkFormat.PAGE_SIZE, n - done - run);
                if (size < at + run) {
                    intact = false;
                    note = "file is " + size + " bytes, header puts page " + page + " at " + at + " (" + run + " bytes)";
                    break;
                }
                int piece = bytes.crc32c(at, run);
                crc = done == 0 ? piece : Crc32c.combine(crc, piece, run);
                done += run;
            }
            if (!intact) break;
            intact = crc == best.crcs()[b];
            if (!intact) note = "block " + b + " of " + best.crcs().length + (best.anyShadowed(b) ? " (pages at shadow places)" : "") + " fails its checksum (header seq " + best.seq() + ")";
        }
        return new Copy(host, disk, id, best.version(), best.part(), best.length(), best.seq(), intact, note, bytes, best);
    }
}
