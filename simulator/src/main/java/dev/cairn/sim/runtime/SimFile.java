package dev.cairn.sim.runtime;

import dev.cairn.core.chunk.Crc32c;
import java.util.Arrays;
import java.util.SplittableRandom;

/**
 * One simulated file: the volatile view (what the page cache shows, {@code length} bytes) and the durable
 * one (what survives power loss, {@code durableLength} bytes), both as pages of {@link #PAGE} bytes.
 *
 * <p>A sync shares the pages instead of copying them; a page is shared while both views hold the same
 * array, and a write copies it first. So a sync costs a table of references, a write the pages it touches,
 * and a file that grows is never copied whole. A missing page reads as zeros. Bytes of a page past its
 * view's length are always zeros (a view only shrinks by taking the other view's pages).
 *
 * <p>The file remembers the CRC32C of each whole page of the volatile view that a checksum has covered or
 * a write made whole, until that page changes. The scrubber re-verifies every chunk each virtual minute
 * and the checkers verify every copy each audit; a checksum of unchanged pages is then combined from what
 * the file remembers instead of re-reading hundreds of megabytes of simulated pages, which is what
 * dominated those reads (they are memory-bound). A change to a page's bytes forgets its checksum, so a
 * checksum always covers the bytes as they are: a flipped bit is seen as surely as by reading.
 */
final class SimFile {
    /** A multiple of the sector, so a torn write's sectors never straddle pages. */
    static final int PAGE = 4 << 10;
    private static final byte[][] NO_PAGES = new byte[0][];
    private static final byte[] ZEROS = new byte[PAGE];
    private static final long[] NO_CRCS = new long[0];
    /** Marks a remembered page checksum (the checksum is the low 32 bits); 0 is "not known". */
    private static final long KNOWN = 1L << 32;
    /** Appending a whole page to a checksum. */
    private static final int PAGE_SHIFT = Crc32c.shift(PAGE);
    private static final int ZERO_PAGE_CRC = crcOf(ZEROS, 0, PAGE);

    private byte[][] current = NO_PAGES;
    private int length;
    private byte[][] durable = NO_PAGES;
    private int durableLength;
    /** Per page of {@code current}: {@code KNOWN | crc} of its whole {@link #PAGE} bytes, or 0 if not known. */
    private long[] pageCrc = NO_CRCS;

    static {
        assert PAGE % SimDisk.SECTOR == 0;
    }

    int length() { return length; }


    int durableLength() { return durableLength; }

    void write(long offset, byte[] data) {
        int end = Math.toIntExact(offset + data.length);
        int pages = pagesFor(end);
        if (pages > current.length) current = Arrays.copyOf(current, Math.max(pages, Math.min(2 * current.length, pages + 64)));
        int pos = 0;
        while (pos < data.length) {
            long at = offset + pos;
            int page = (int) (at / PAGE), in = (int) (at % PAGE);
            int n = Math.min(PAGE - in, data.length - pos);
            forget(page);
            // zeros over a missing page change nothing (it reads as zeros): no page is made for them, as a
            // file system keeps a hole (zero-padded erasure-coded cells, preallocated tails)
            if (current[page] == null && Arrays.mismatch(data, pos, pos + n, ZEROS, 0, n) < 0) {
                // nothing to do
            } else if (n == PAGE && (current[page] == null || page < durable.length && durable[page] == current[page])) {
                current[page] = Arrays.copyOfRange(data, pos, pos + PAGE); // a new whole page: neither zeroed nor cloned first
                // its checksum now, while the bytes are in cache: the scrubber asks for nearly every page once,
                // a minute later, when reading it would be a miss per line
                remember(page, crcOf(data, pos, PAGE));
            } else {
                System.arraycopy(data, pos, writable(page), in, n);
            }
            pos += n;
        }
        if (end > length) length = end;
    }

    private void remember(int page, int crc) {
        if (page >= pageCrc.length) pageCrc = Arrays.copyOf(pageCrc, current.length);
        pageCrc[page] = KNOWN | (crc & 0xFFFF_FFFFL);
    }

    /** The page's bytes may change: its checksum is no longer known. */
    private void forget(int page) {
        if (page < pageCrc.length) pageCrc[page] = 0;
    }

    /** Page {@code i} of the volatile view, its own (copied if shared with the durable view), allocated if missing. */
    private byte[] writable(int i) {
        byte[] p = current[i];
        if (p == null) return current[i] = new byte[PAGE];
        if (i < durable.length && durable[i] == p) return current[i] = p.clone();
        return p;
    }

    /** Bytes {@code [offset, min(length, offset + n))} of the volatile view. */
    byte[] read(long offset, int n) {
        if (offset >= length) return new byte[0];
        return copy(current, (int) offset, (int) Math.min(length, offset + n));
    }

    /** Like {@link #read}, into {@code out} from index {@code at}: how many bytes. */
    int readInto(long offset, byte[] out, int at, int n) {
        if (offset >= length) return 0;
        int from = (int) offset, to = (int) Math.min(length, offset + n);
        copyInto(current, from, to, out, at);
        return to - from;
    }

    /**
     * The CRC32C of bytes {@code [offset, offset + n)} of the volatile view, bytes past its length counting as
     * zeros (as a reader that zero-fills a short read sees them). Whole pages come from their remembered
     * checksums where known and are remembered once computed; parts of pages are computed from the bytes.
     */
    int crc32c(long offset, int n) {
        if (offset < 0 || n < 0) throw new IllegalArgumentException("offset " + offset + ", length " + n);
        long end = offset + n;
        int crc = 0; // the checksum of nothing
        for (long pos = offset; pos < end; ) {
            int page = (int) (pos / PAGE), in = (int) (pos % PAGE), k = (int) Math.min(PAGE - in, end - pos);
            if (k == PAGE) {
                crc = Crc32c.combineShifted(crc, pageCrc(page), PAGE_SHIFT);
            } else {
                byte[] p = page < current.length ? current[page] : null;
                crc = Crc32c.combine(crc, crcOf(p == null ? ZEROS : p, in, k), k);
            }
            pos += k;
        }
        return crc;
    }

    /** {@link dev.cairn.core.env.Volume#checksums} of the volatile view. */
    int[] checksums(long offset, int length, int blockSize) {
        int[] out = new int[dev.cairn.core.env.Volume.checksumPieces(offset, length, blockSize)];
        for (int i = 0; i < out.length; i++) {
            long at = (long) i * blockSize;
            out[i] = crc32c(offset + at, (int) Math.min(blockSize, length - at));
        }
        return out;
    }

    /** The checksum of page {@code i} of the volatile view (a missing page, or one past the end: zeros), remembered. */
    private int pageCrc(int i) {
        if (i >= current.length || current[i] == null) return ZERO_PAGE_CRC;
        if (i < pageCrc.length && pageCrc[i] != 0) return (int) pageCrc[i];
        int c = crcOf(current[i], 0, PAGE);
        remember(i, c);
        return c;
    }

    private static int crcOf(byte[] b, int from, int n) {
        java.util.zip.CRC32C c = new java.util.zip.CRC32C();
        c.update(b, from, n);
        return (int) c.getValue();
    }

    /**
     * Like {@link #crc32c}, of the durable view. A durable page still shared with the volatile view (nothing
     * written to it since the sync) takes the checksum the volatile view remembers; others are computed.
     */
    int durableCrc32c(long offset, int n) {
        if (offset < 0 || n < 0) throw new IllegalArgumentException("offset " + offset + ", length " + n);
        long end = offset + n;
        int crc = 0;
        for (long pos = offset; pos < end; ) {
            int page = (int) (pos / PAGE), in = (int) (pos % PAGE), k = (int) Math.min(PAGE - in, end - pos);
            byte[] p = page < durable.length && pos < durableLength ? durable[page] : null;
            // a page shared with the volatile view and wholly within both views: the remembered checksum
            if (k == PAGE && p != null && (long) (page + 1) * PAGE <= Math.min(durableLength, length) && page < current.length && current[page] == p) {
                crc = Crc32c.combineShifted(crc, pageCrc(page), PAGE_SHIFT);
            } else {
                // past the durable end the view holds zeros, whatever the page (shared with a longer volatile view) holds there
                int have = p == null ? 0 : (int) Math.min(k, durableLength - pos);
                if (have > 0) crc = Crc32c.combine(crc, crcOf(p, in, have), have);
                if (k > have) crc = Crc32c.combine(crc, crcOf(ZEROS, 0, k - have), k - have);
            }
            pos += k;
        }
        return crc;
    }

    /**
     * Hands {@code compare} the durable view's bytes {@code [offset, offset + n)} page piece by page piece, in
     * place (no copy; a missing page or bytes past the end as zeros), until it reports a mismatch: the
     * position of the first differing byte from {@code offset}, or -1.
     */
    long durableMismatch(long offset, int n, SimDisk.Compare compare) {
        for (long pos = offset; pos < offset + n; ) {
            int page = (int) (pos / PAGE), in = (int) (pos % PAGE), k = (int) Math.min(PAGE - in, offset + n - pos);
            byte[] p = page < durable.length && durable[page] != null && pos < durableLength ? durable[page] : ZEROS;
            if (p != ZEROS && pos + k > durableLength) k = (int) (durableLength - pos); // the rest of the page reads as zeros
            int at = compare.mismatch(p, in, k, pos - offset);
            if (at >= 0) return pos - offset + at;
            pos += k;
        }
        return -1;
    }

    /** Like {@link #readInto}, of the durable view (what a power loss now would leave). */
    int readDurableInto(long offset, byte[] out, int at, int n) {
        if (offset >= durableLength) return 0;
        int from = (int) offset, to = (int) Math.min(durableLength, offset + n);
        copyInto(durable, from, to, out, at);
        return to - from;
    }

    byte[] currentCopy() { return copy(current, 0, length); }

    byte[] durableCopy() { return copy(durable, 0, durableLength); }

    private static byte[] copy(byte[][] pages, int from, int to) {
        byte[] out = new byte[to - from];
        copyInto(pages, from, to, out, 0);
        return out;
    }

    /** Bytes {@code [from, to)} of {@code pages} into {@code out} at {@code at} (a missing page: zeros). */
    private static void copyInto(byte[][] pages, int from, int to, byte[] out, int at) {
        for (int pos = from; pos < to; ) {
            int page = pos / PAGE, in = pos % PAGE, n = Math.min(PAGE - in, to - pos);
            int dst = at + pos - from;
            if (page < pages.length && pages[page] != null) System.arraycopy(pages[page], in, out, dst, n);
            else Arrays.fill(out, dst, dst + n, (byte) 0);
            pos += n;
        }
    }

    /** The volatile view becomes durable. */
    void sync() {
        durable = Arrays.copyOf(current, pagesFor(length));
        durableLength = length;
    }

    /** The volatile view is the durable one again (a power loss, or a failed fsync dropping dirty pages). */
    void revert() {
        current = Arrays.copyOf(durable, durable.length);
        pageCrc = NO_CRCS;
        length = durableLength;
    }

    /** A bit flips on the platter: both views see it where they hold the byte. */
    void flipBit(long offset, int bit) {
        int page = (int) (offset / PAGE), in = (int) (offset % PAGE);
        byte mask = (byte) (1 << bit);
        boolean shared = page < current.length && page < durable.length && current[page] != null && current[page] == durable[page];
        if (offset < length) {
            forget(page);
            // past the durable end the byte is the volatile view's alone: a shared page is split first, or the
            // durable view would hold the flip past its length (and a revert would bring it back)
            if (shared && offset >= durableLength) {
                writable(page);
                shared = false;
            }
            if (current[page] == null) current[page] = new byte[PAGE];
            current[page][in] ^= mask;
        }
        if (!shared && offset < durableLength) {
            if (durable[page] == null) durable[page] = new byte[PAGE];
            durable[page][in] ^= mask;
        }
    }

    /**
     * Power loss with torn writes: what reached the platter of the unsynced writes becomes the durable view.
     * Per sector old, new, torn (the new bytes up to a point within it, the old ones after: a sector being
     * written when the power went, which not every device writes atomically) or, only where the file grew,
     * garbage; the length old or new.
     */
    void tear(SplittableRandom rnd) {
        int oldLength = durableLength;
        int len = rnd.nextBoolean() ? length : oldLength;
        byte[] out = copy(durable, 0, Math.min(len, oldLength));
        out = Arrays.copyOf(out, len); // past the old end: zeros
        for (int s = 0; s < len; s += SimDisk.SECTOR) {
            int e = Math.min(len, s + SimDisk.SECTOR);
            if (!(e > oldLength || e > length || !sameSector(s, e))) continue;
            // a sector is written whole (old or new); only space the file grew into may hold garbage (blocks
            // allocated and sized before their data landed, as with ext4's writeback mode)
            int dice = rnd.nextInt(s >= oldLength ? 4 : 3);
            if (dice == 0) continue; // old bytes (zeros past the old end)
            int split = dice == 2 ? s + rnd.nextInt(e - s) : e; // torn: new before the split, old from it
            for (int i = s; i < split; i++) out[i] = dice <= 2 ? (i < length ? byteAt(current, i) : 0) : (byte) rnd.nextInt(256);
        }
        durable = pagesOf(out);
        durableLength = len;
    }

    /** Both views hold the same bytes in {@code [s, e)} (within one page). */
    private boolean sameSector(int s, int e) {
        int page = s / PAGE;
        byte[] a = page < durable.length ? durable[page] : null, b = page < current.length ? current[page] : null;
        if (a == b) return true;
        int in = s % PAGE, n = e - s;
        if (a == null) return isZero(b, in, n);
        if (b == null) return isZero(a, in, n);
        return Arrays.equals(a, in, in + n, b, in, in + n);
    }

    private static boolean isZero(byte[] p, int from, int n) {
        for (int i = from; i < from + n; i++) if (p[i] != 0) return false;
        return true;
    }

    private static byte byteAt(byte[][] pages, int at) {
        int page = at / PAGE;
        return page < pages.length && pages[page] != null ? pages[page][at % PAGE] : 0;
    }

    /**
     * The pages of {@code flat}, a page of zeros left missing (it reads as zeros): a torn power loss of a sparse 64 MiB
     * chunk file made all 16,384 of its pages, and a cluster power loss with torn writes took a group sweep's heap
     * past 6 GB (seeds 967, 969, 971 with {@code --masters 3}: OutOfMemoryError).
     */
    private static byte[][] pagesOf(byte[] flat) {
        byte[][] pages = new byte[pagesFor(flat.length)][];
        for (int i = 0; i < pages.length; i++) {
            int from = i * PAGE, to = Math.min(flat.length, from + PAGE);
            if (!isZero(flat, from, to - from)) pages[i] = Arrays.copyOf(Arrays.copyOfRange(flat, from, to), PAGE);
        }
        return pages;
    }

    private static int pagesFor(int bytes) { return (bytes + PAGE - 1) / PAGE; }
}
