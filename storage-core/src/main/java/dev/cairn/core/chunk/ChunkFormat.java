package dev.cairn.core.chunk;

import dev.cairn.core.proto.CodecException;
import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.zip.CRC32C;

/**
 * The on-disk format of one chunk copy:
 * <pre>
 *   [header slot 0: 8 KiB][header slot 1: 8 KiB][blocks: capacity × 64 KiB][shadow blocks: capacity × 64 KiB]
 * </pre>
 * A header slot holds the chunk id, version, committed length, a sequence number, the part index (of an
 * erasure-coded chunk; 0 for a replica), the capacity in blocks, the CRC32C of every 64 KiB data block, one
 * bit per 4 KiB page saying where the page is (its place, or its shadow place: the same page of the block's
 * shadow block), and a CRC32C of the slot itself.
 * A commit writes the slot that is <em>not</em> the newest durable one and fsyncs, so a power loss during a
 * commit always leaves one valid slot; recovery takes the valid slot with the highest sequence. Bytes past
 * the committed length were never acknowledged as durable and are ignored.
 *
 * <p><b>Why two places per page.</b> A write into a page the newest durable header vouches for never lands
 * on that page: it goes to the page's other place, and the next header (written after the data is fsynced)
 * points there. A power loss in the middle of an overwrite (torn sectors, even torn within a sector) then
 * leaves the durable header and every page it names exactly as they were: acknowledged bytes are never put
 * at risk by a later write, on any copy. Appends to pages no durable header covers go to their place, so a
 * chunk written once is laid out as before (the shadow places are holes in a sparse file, and cost nothing
 * until a page is overwritten). The other choices were a journal (every overwrite written twice) or
 * out-of-place blocks anywhere with a block map (no fixed layout to read sequentially).
 *
 * <p><b>Why pages, when checksums cover blocks.</b> Places were per block in the second layout ({@code CAK2}):
 * a 4 KiB overwrite then wrote its whole 64 KiB block to the other place, sixteen times the bytes, and the
 * kernel's copy and writeback of them bounded random writes. A place per page writes only the pages a write
 * touches; the block's checksum is still computed over the whole block (its other pages read where they are),
 * so the header keeps one CRC per block and fits its slot. A block's pages may then lie in both places: a
 * reader reads runs of pages whose places follow each other, and checksums of pieces combine
 * ({@link Crc32c#combine}).
 *
 * <p>Headers of the first layout ({@code CAK1}: no capacity, no shadow bits) are still read: every block at its
 * place, capacity the largest chunk; so are the second's ({@code CAK2}: a shadow bit per block, read as that
 * bit for each of its pages). Headers are written in the third ({@code CAK3}).
 */
public final class ChunkFormat {
    public static final int BLOCK_SIZE = 64 << 10;
    public static final int MAX_CHUNK_SIZE = 64 << 20;
    public static final int MAX_BLOCKS = MAX_CHUNK_SIZE / BLOCK_SIZE;
    /** The unit of placement: a write moves whole pages to their other place, never whole blocks. */
    public static final int PAGE_SIZE = 4 << 10;
    public static final int PAGES_PER_BLOCK = BLOCK_SIZE / PAGE_SIZE;
    public static final int SLOT_SIZE = 8 << 10;
    public static final int DATA_OFFSET = 2 * SLOT_SIZE;
    private static final int MAGIC = 0x4341_4b33; // "CAK3": a shadow bit per page
    private static final int MAGIC_V2 = 0x4341_4b32; // "CAK2": a shadow bit per block
    private static final int MAGIC_V1 = 0x4341_4b31; // "CAK1": every block at its place, no capacity
    private static final int FIXED = 4 + 8 + 8 + 8 + 8 + 4 + 4 + 4; // magic, id, version, length, seq, part, capacity, blocks
    private static final int FIXED_V1 = 4 + 8 + 8 + 8 + 8 + 4 + 4; // magic, id, version, length, seq, part, blocks

    static {
        assert headerLength(MAX_BLOCKS) <= SLOT_SIZE : "header slot too small for the CRC table and shadow bits";
        assert PAGES_PER_BLOCK % 8 == 0 : "a block's shadow bits fill whole bytes";
    }

    private ChunkFormat() {}

    /**
     * A decoded header slot. {@code crcs} has one entry per block up to {@code length}; {@code shadow} one bit
     * per page of those blocks (page p in byte p/8, bit p%8): set if the page is at its shadow place;
     * {@code capacity} the blocks the copy may ever hold (where the shadow places begin).
     */
    public record Header(long chunkId, long version, long length, long seq, int part, int capacity, int[] crcs, byte[] shadow) {
        public Header {
            if (length < 0 || length > MAX_CHUNK_SIZE) throw new IllegalArgumentException("length " + length);
            if (capacity < 1 || capacity > MAX_BLOCKS) throw new IllegalArgumentException("capacity " + capacity + " blocks");
            if (crcs.length != blocks(length)) throw new IllegalArgumentException("crc table size");
            if (crcs.length > capacity) throw new IllegalArgumentException(length + " bytes do not fit " + capacity + " blocks");
            if (shadow.length != shadowBytes(crcs.length)) throw new IllegalArgumentException("shadow bitmap size");
        }

        /** A header with every block at its place. */
        public Header(long chunkId, long version, long length, long seq, int part, int capacity, int[] crcs) {
            this(chunkId, version, length, seq, part, capacity, crcs, new byte[shadowBytes(crcs.length)]);
        }

        /** Whether page {@code page} is at its shadow place. */
        public boolean shadowed(int page) { return (shadow[page >>> 3] & (1 << (page & 7))) != 0; }

        /** Where page {@code page} starts in the file. */
        public long pageOffset(int page) { return ChunkFormat.pageOffset(capacity, page, shadowed(page)); }

        /** Whether any page of block {@code block} is at its shadow place. */
        public boolean anyShadowed(int block) {
            for (int i = 0; i < PAGES_PER_BLOCK / 8; i++) if (shadow[block * (PAGES_PER_BLOCK / 8) + i] != 0) return true;
            return false;
        }

        @Override public boolean equals(Object o) {
            return o instanceof Header h && h.chunkId == chunkId && h.version == version && h.length == length && h.seq == seq
                    && h.part == part && h.capacity == capacity && Arrays.equals(h.crcs, crcs) && Arrays.equals(h.shadow, shadow);
        }

        @Override public int hashCode() { return Long.hashCode(chunkId * 31 + version); }
    }

    /** Where block {@code block} of a copy of {@code capacity} blocks starts: its place, or its shadow place. */
    public static long blockOffset(int capacity, int block, boolean shadow) {
        assert block >= 0 && block < capacity : "block " + block + " of " + capacity;
        return DATA_OFFSET + ((shadow ? (long) capacity : 0L) + block) * BLOCK_SIZE;
    }

    /** Where page {@code page} of a copy of {@code capacity} blocks starts: its place, or the same page of its block's shadow place. */
    public static long pageOffset(int capacity, int page, boolean shadow) {
        assert page >= 0 && page < capacity * PAGES_PER_BLOCK : "page " + page + " of " + capacity + " blocks";
        return DATA_OFFSET + (shadow ? (long) capacity * BLOCK_SIZE : 0L) + (long) page * PAGE_SIZE;
    }

    /** Blocks a copy of a chunk of {@code bytes} bytes at most may hold (1 for an empty one). */
    public static int capacityFor(long bytes) { return Math.max(1, Math.min(MAX_BLOCKS, blocks(bytes))); }

    /** Bytes of the shadow bitmap of {@code blocks} blocks (a bit per page). */
    public static int shadowBytes(int blocks) { return blocks * (PAGES_PER_BLOCK / 8); }

    /** Bytes of the second layout's shadow bitmap (a bit per block). */
    private static int shadowBytesV2(int blocks) { return (blocks + 7) >>> 3; }

    /** Bytes of a header with {@code blocks} CRCs and shadow bits, its own checksum included. */
    public static int headerLength(int blocks) { return FIXED + 4 * blocks + shadowBytes(blocks) + 4; }

    /** Bytes of the shortest header (an empty chunk's): a slot holding fewer cannot be valid. */
    public static final int MIN_HEADER_BYTES = FIXED + 4;

    public static int blocks(long length) {
        return (int) ((length + BLOCK_SIZE - 1) / BLOCK_SIZE);
    }

    public static long slotOffset(int slot) {
        assert slot == 0 || slot == 1;
        return (long) slot * SLOT_SIZE;
    }

    /**
     * The header alone, to be written at the start of a slot: a few dozen bytes plus four and a bit per block,
     * not the whole 8 KiB slot. Whatever follows it in the slot (left by an earlier, longer header, or never
     * written) is not part of it: the block count says where the header and its checksum end.
     */
    public static byte[] encodeHeader(Header h) {
        ByteBuffer b = ByteBuffer.allocate(headerLength(h.crcs.length));
        b.putInt(MAGIC).putLong(h.chunkId).putLong(h.version).putLong(h.length).putLong(h.seq).putInt(h.part).putInt(h.capacity).putInt(h.crcs.length);
        for (int c : h.crcs) b.putInt(c);
        b.put(h.shadow);
        int end = b.position();
        b.putInt(crc(b.array(), 0, end));
        assert !b.hasRemaining();
        return b.array();
    }

    /**
     * The bytes of a slot its header occupies, judged from the slot's first {@link #MIN_HEADER_BYTES}: 0 if it
     * has no header magic (blank, never written). Decoding just that many bytes of the slot gives the verdict
     * decoding the whole slot gives, so a reader of many slots (the simulator's checkers) reads a few dozen
     * bytes each, not 8 KiB, and throws nothing for a blank one.
     */
    public static int headerBytes(byte[] slot) {
        ByteBuffer b = ByteBuffer.wrap(slot, 0, MIN_HEADER_BYTES);
        int magic = b.getInt(0);
        if (magic == MAGIC_V1) {
            int n = b.getInt(FIXED_V1 - 4);
            return n < 0 || n > MAX_BLOCKS ? MIN_HEADER_BYTES : FIXED_V1 + 4 * n + 4;
        }
        if (magic != MAGIC && magic != MAGIC_V2) return 0;
        int n = b.getInt(FIXED - 4);
        if (n < 0 || n > MAX_BLOCKS) return MIN_HEADER_BYTES;
        return magic == MAGIC ? headerLength(n) : FIXED + 4 * n + shadowBytesV2(n) + 4;
    }

    /** Decodes a slot, or throws if it is blank, torn or belongs to another chunk. */
    public static Header decodeHeader(byte[] slot, long expectedChunkId) throws CodecException {
        return decodeHeader(slot, slot.length, expectedChunkId);
    }

    /** Decodes a slot held in the first {@code slotLength} bytes of {@code slot} (a reader's reused buffer). */
    public static Header decodeHeader(byte[] slot, int slotLength, long expectedChunkId) throws CodecException {
        if (slotLength < FIXED_V1 + 4 || slotLength > slot.length) throw new CodecException("short header slot");
        ByteBuffer b = ByteBuffer.wrap(slot, 0, slotLength);
        int magic = b.getInt();
        if (magic != MAGIC && magic != MAGIC_V2 && magic != MAGIC_V1) throw new CodecException("no header magic");
        boolean v1 = magic == MAGIC_V1, v2 = magic == MAGIC_V2;
        long id = b.getLong(), version = b.getLong(), length = b.getLong(), seq = b.getLong();
        int part = b.getInt();
        int capacity = v1 ? MAX_BLOCKS : b.getInt();
        int n = b.getInt();
        int fixed = v1 ? FIXED_V1 : FIXED;
        int shadowLength = v1 ? 0 : v2 ? shadowBytesV2(Math.max(0, n)) : shadowBytes(Math.max(0, n));
        if (n < 0 || n > MAX_BLOCKS || fixed + 4L * n + shadowLength + 4 > slotLength) throw new CodecException("bad block count " + n);
        int[] crcs = new int[n];
        for (int i = 0; i < n; i++) crcs[i] = b.getInt();
        byte[] bits = new byte[shadowLength];
        b.get(bits);
        int end = b.position();
        if (b.getInt() != crc(slot, 0, end)) throw new CodecException("header checksum mismatch");
        if (id != expectedChunkId) throw new CodecException("header names chunk " + id + ", expected " + expectedChunkId);
        if (length < 0 || length > MAX_CHUNK_SIZE || n != blocks(length)) throw new CodecException("bad length " + length);
        if (part < 0 || part >= 32) throw new CodecException("bad part index " + part);
        if (capacity < 1 || capacity > MAX_BLOCKS || n > capacity) throw new CodecException("bad capacity " + capacity + " for " + n + " blocks");
        if (v2 && n % 8 != 0 && (bits[bits.length - 1] & 0xff) >>> (n % 8) != 0) throw new CodecException("shadow bits past the last block");
        byte[] shadow = v1 ? new byte[shadowBytes(n)] : v2 ? pageBits(bits, n) : bits;
        return new Header(id, version, length, seq, part, capacity, crcs, shadow);
    }

    /** A second layout's bit per block as a bit per page: each page where its block is. */
    private static byte[] pageBits(byte[] blockBits, int blocks) {
        byte[] out = new byte[shadowBytes(blocks)];
        for (int blk = 0; blk < blocks; blk++) {
            if ((blockBits[blk >>> 3] & (1 << (blk & 7))) != 0) Arrays.fill(out, blk * (PAGES_PER_BLOCK / 8), (blk + 1) * (PAGES_PER_BLOCK / 8), (byte) 0xff);
        }
        return out;
    }

    public static int crc(byte[] data, int off, int len) {
        CRC32C c = new CRC32C();
        c.update(data, off, len);
        return (int) c.getValue();
    }

    /** {@code chunk_<16 lower-case hex digits>.ck} (built by hand: {@code String.format} cost a microsecond per chunk created). */
    public static String fileName(long chunkId) {
        char[] c = {'c', 'h', 'u', 'n', 'k', '_', 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, '.', 'c', 'k'};
        for (int i = 0; i < 16; i++) c[6 + i] = Character.forDigit((int) (chunkId >>> (60 - 4 * i)) & 0xf, 16);
        return new String(c);
    }

    /** The chunk id named by a chunk file, or -1 for any other file. */
    public static long chunkIdOf(String fileName) {
        if (!fileName.startsWith("chunk_") || !fileName.endsWith(".ck") || fileName.length() != 6 + 16 + 3) return -1;
        try {
            return Long.parseUnsignedLong(fileName.substring(6, 22), 16);
        } catch (NumberFormatException e) {
            return -1;
        }
    }
}
