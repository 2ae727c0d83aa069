package dev.cairn.core.chunk;

import dev.cairn.core.proto.CodecException;
import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.zip.CRC32C;

/**
 * The on-disk format of one chunk copy:
 * <pre>
 *   [header slot 0: 8 KiB][header slot 1: 8 KiB][data: up to 64 MiB]
 * </pre>
 * A header slot holds the chunk id, version, committed length, a sequence number, the part index (of an
 * erasure-coded chunk; 0 for a replica), the CRC32C of every
 * 64 KiB data block, and a CRC32C of the slot itself. A commit writes the slot that is <em>not</em> the
 * newest durable one and fsyncs, so a power loss during a commit always leaves one valid slot; recovery
 * takes the valid slot with the highest sequence. Bytes past the committed length were never
 * acknowledged as durable and are ignored.
 */
public final class ChunkFormat {
    public static final int BLOCK_SIZE = 64 << 10;
    public static final int MAX_CHUNK_SIZE = 64 << 20;
    public static final int MAX_BLOCKS = MAX_CHUNK_SIZE / BLOCK_SIZE;
    public static final int SLOT_SIZE = 8 << 10;
    public static final int DATA_OFFSET = 2 * SLOT_SIZE;
    private static final int MAGIC = 0x4341_4b31; // "CAK1"
    private static final int FIXED = 4 + 8 + 8 + 8 + 8 + 4 + 4; // magic, id, version, length, seq, part, blocks

    static {
        assert FIXED + 4 * MAX_BLOCKS + 4 <= SLOT_SIZE : "header slot too small for the CRC table";
    }

    private ChunkFormat() {}

    /** A decoded header slot. {@code crcs} has one entry per block up to {@code length}. */
    public record Header(long chunkId, long version, long length, long seq, int part, int[] crcs) {
        public Header {
            if (length < 0 || length > MAX_CHUNK_SIZE) throw new IllegalArgumentException("length " + length);
            if (crcs.length != blocks(length)) throw new IllegalArgumentException("crc table size");
        }

        @Override public boolean equals(Object o) {
            return o instanceof Header h && h.chunkId == chunkId && h.version == version && h.length == length
                    && h.seq == seq && h.part == part && Arrays.equals(h.crcs, crcs);
        }

        @Override public int hashCode() { return Long.hashCode(chunkId * 31 + version); }
    }

    /** Bytes of a header with {@code blocks} CRCs, its own checksum included. */
    public static int headerLength(int blocks) { return FIXED + 4 * blocks + 4; }

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
     * The header alone, to be written at the start of a slot: a few dozen bytes plus four per block, not the
     * whole 8 KiB slot. Whatever follows it in the slot (left by an earlier, longer header, or never written)
     * is not part of it: the block count says where the header and its checksum end.
     */
    public static byte[] encodeHeader(Header h) {
        ByteBuffer b = ByteBuffer.allocate(headerLength(h.crcs.length));
        b.putInt(MAGIC).putLong(h.chunkId).putLong(h.version).putLong(h.length).putLong(h.seq).putInt(h.part).putInt(h.crcs.length);
        for (int c : h.crcs) b.putInt(c);
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
        if (b.getInt(0) != MAGIC) return 0;
        int n = b.getInt(FIXED - 4);
        return n < 0 || n > MAX_BLOCKS ? MIN_HEADER_BYTES : headerLength(n);
    }

    /** Decodes a slot, or throws if it is blank, torn or belongs to another chunk. */
    public static Header decodeHeader(byte[] slot, long expectedChunkId) throws CodecException {
        return decodeHeader(slot, slot.length, expectedChunkId);
    }

    /** Decodes a slot held in the first {@code slotLength} bytes of {@code slot} (a reader's reused buffer). */
    public static Header decodeHeader(byte[] slot, int slotLength, long expectedChunkId) throws CodecException {
        if (slotLength < FIXED + 4 || slotLength > slot.length) throw new CodecException("short header slot");
        ByteBuffer b = ByteBuffer.wrap(slot, 0, slotLength);
        if (b.getInt() != MAGIC) throw new CodecException("no header magic");
        long id = b.getLong(), version = b.getLong(), length = b.getLong(), seq = b.getLong();
        int part = b.getInt();
        int n = b.getInt();
        if (n < 0 || n > MAX_BLOCKS || FIXED + 4L * n + 4 > slotLength) throw new CodecException("bad block count " + n);
        int[] crcs = new int[n];
        for (int i = 0; i < n; i++) crcs[i] = b.getInt();
        int end = b.position();
        if (b.getInt() != crc(slot, 0, end)) throw new CodecException("header checksum mismatch");
        if (id != expectedChunkId) throw new CodecException("header names chunk " + id + ", expected " + expectedChunkId);
        if (length < 0 || length > MAX_CHUNK_SIZE || n != blocks(length)) throw new CodecException("bad length " + length);
        if (part < 0 || part >= 32) throw new CodecException("bad part index " + part);
        return new Header(id, version, length, seq, part, crcs);
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
