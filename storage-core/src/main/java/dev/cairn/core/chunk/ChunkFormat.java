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
 * bit per block saying where the block is (its place, or its shadow place), and a CRC32C of the slot itself.
 * A commit writes the slot that is <em>not</em> the newest durable one and fsyncs, so a power loss during a
 * commit always leaves one valid slot; recovery takes the valid slot with the highest sequence. Bytes past
 * the committed length were never acknowledged as durable and are ignored.
 *
 * <p><b>Why two places per block.</b> A write into a block the newest durable header vouches for never lands
 * on that block: it goes to the block's other place, and the next header (written after the data is fsynced)
 * points there. A power loss in the middle of an overwrite (torn sectors, even torn within a sector) then
 * leaves the durable header and every block it names exactly as they were: acknowledged bytes are never put
 * at risk by a later write, on any copy. Appends to blocks no durable header covers go to their place, so a
 * chunk written once is laid out as before (the shadow places are holes in a sparse file, and cost nothing
 * until a block is overwritten). The other choices were a journal (every overwrite written twice) or
 * out-of-place blocks anywhere with a block map (no fixed layout to read sequentially).
 *
 * <p>Headers of the first layout ({@code CAK1}: no capacity, no shadow bits) are still read: every block at its
 * place, capacity the largest chunk.
 */
public final class ChunkFormat {
    public static final int BLOCK_SIZE = 64 << 10;
    public static final int MAX_CHUNK_SIZE = 64 << 20;
    public static final int MAX_BLOCKS = MAX_CHUNK_SIZE / BLOCK_SIZE;
    public static final int SLOT_SIZE = 8 << 10;
    public static final int DATA_OFFSET = 2 * SLOT_SIZE;
    private static final int MAGIC = 0x4341_4b32; // "CAK2"
    private static final int MAGIC_V1 = 0x4341_4b31; // "CAK1": every block at its place, no capacity
    private static final int FIXED = 4 + 8 + 8 + 8 + 8 + 4 + 4 + 4; // magic, id, version, length, seq, part, capacity, blocks
    private static final int FIXED_V1 = 4 + 8 + 8 + 8 + 8 + 4 + 4; // magic, id, version, length, seq, part, blocks

    static {
        assert headerLength(MAX_BLOCKS) <= SLOT_SIZE : "header slot too small for the CRC table and shadow bits";
    }

    private ChunkFormat() {}

    /**
     * A decoded header slot. {@code crcs} has one entry per block up to {@code length}; {@code shadow} one bit
     * per block (block b in byte b/8, bit b%8): set if the block is at its shadow place; {@code capacity} the
     * blocks the copy may ever hold (where the shadow places begin).
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

        /** Whether block {@code block} is at its shadow place. */
        public boolean shadowed(int block) { return (shadow[block >>> 3] & (1 << (block & 7))) != 0; }

        /** Where block {@code block} starts in the file. */
        public long blockOffset(int block) { return ChunkFormat.blockOffset(capacity, block, shadowed(block)); }

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

    /** Blocks a copy of a chunk of {@code bytes} bytes at most may hold (1 for an empty one). */
    public static int capacityFor(long bytes) { return Math.max(1, Math.min(MAX_BLOCKS, blocks(bytes))); }

    /** Bytes of the shadow bitmap of {@code blocks} blocks. */
    public static int shadowBytes(int blocks) { return (blocks + 7) >>> 3; }

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
        if (magic != MAGIC) return 0;
        int n = b.getInt(FIXED - 4);
        return n < 0 || n > MAX_BLOCKS ? MIN_HEADER_BYTES : headerLength(n);
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
        if (magic != MAGIC && magic != MAGIC_V1) throw new CodecException("no header magic");
        boolean v1 = magic == MAGIC_V1;
        long id = b.getLong(), version = b.getLong(), length = b.getLong(), seq = b.getLong();
        int part = b.getInt();
        int capacity = v1 ? MAX_BLOCKS : b.getInt();
        int n = b.getInt();
        int fixed = v1 ? FIXED_V1 : FIXED;
        int shadowLength = v1 ? 0 : shadowBytes(Math.max(0, n));
        if (n < 0 || n > MAX_BLOCKS || fixed + 4L * n + shadowLength + 4 > slotLength) throw new CodecException("bad block count " + n);
        int[] crcs = new int[n];
        for (int i = 0; i < n; i++) crcs[i] = b.getInt();
        byte[] shadow = new byte[shadowBytes(n)];
        if (!v1) b.get(shadow);
        int end = b.position();
        if (b.getInt() != crc(slot, 0, end)) throw new CodecException("header checksum mismatch");
        if (id != expectedChunkId) throw new CodecException("header names chunk " + id + ", expected " + expectedChunkId);
        if (length < 0 || length > MAX_CHUNK_SIZE || n != blocks(length)) throw new CodecException("bad length " + length);
        if (part < 0 || part >= 32) throw new CodecException("bad part index " + part);
        if (capacity < 1 || capacity > MAX_BLOCKS || n > capacity) throw new CodecException("bad capacity " + capacity + " for " + n + " blocks");
        if (n % 8 != 0 && n > 0 && (shadow[shadow.length - 1] & 0xff) >>> (n % 8) != 0) throw new CodecException("shadow bits past the last block");
        return new Header(id, version, length, seq, part, capacity, crcs, shadow);
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
