package dev.cairn.core.chunk;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.cairn.core.chunk.ChunkFormat.Header;
import dev.cairn.core.proto.CodecException;
import java.util.SplittableRandom;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.junit.jupiter.api.Test;

class ChunkFormatTest {
    @ParameterizedTest
    @ValueSource(longs = {0, 1, 65535, 65536, 65537, 64L << 20})
    void headerRoundTrips(long length) throws CodecException {
        int[] crcs = new int[ChunkFormat.blocks(length)];
        SplittableRandom r = new SplittableRandom(length);
        for (int i = 0; i < crcs.length; i++) crcs[i] = r.nextInt();
        byte[] shadow = new byte[ChunkFormat.shadowBytes(crcs.length)];
        for (int p = 0; p < crcs.length * ChunkFormat.PAGES_PER_BLOCK; p++) if (r.nextBoolean()) shadow[p >>> 3] |= (byte) (1 << (p & 7));
        Header h = new Header(42, 7, length, 3, (int) (length % 32), ChunkFormat.capacityFor(Math.max(length, 65536)), crcs, shadow);
        byte[] slot = ChunkFormat.encodeHeader(h);
        assertThat(slot).hasSize(ChunkFormat.headerLength(crcs.length)).hasSizeLessThanOrEqualTo(ChunkFormat.SLOT_SIZE);
        assertThat(ChunkFormat.decodeHeader(slot, 42)).isEqualTo(h);
        // in a slot whose tail is left from an earlier, longer header: the same header
        byte[] inSlot = new byte[ChunkFormat.SLOT_SIZE];
        java.util.Arrays.fill(inSlot, (byte) 0x5a);
        System.arraycopy(slot, 0, inSlot, 0, slot.length);
        assertThat(ChunkFormat.decodeHeader(inSlot, 42)).isEqualTo(h);
        assertThatThrownBy(() -> ChunkFormat.decodeHeader(java.util.Arrays.copyOf(slot, slot.length - 1), 42)).isInstanceOf(CodecException.class);
    }

    @Test void anyFlippedBitInTheUsedPartIsDetected() {
        Header h = new Header(42, 7, 200_000, 3, 5, 16, new int[ChunkFormat.blocks(200_000)]);
        byte[] slot = ChunkFormat.encodeHeader(h);
        int used = ChunkFormat.headerLength(h.crcs().length);
        for (int bit = 0; bit < used * 8; bit += 7) {
            byte[] b = slot.clone();
            b[bit / 8] ^= (byte) (1 << (bit % 8));
            assertThatThrownBy(() -> ChunkFormat.decodeHeader(b, 42)).isInstanceOf(CodecException.class);
        }
    }

    @Test void blankAndForeignSlotsAreRefused() {
        assertThatThrownBy(() -> ChunkFormat.decodeHeader(new byte[ChunkFormat.SLOT_SIZE], 1)).isInstanceOf(CodecException.class);
        byte[] other = ChunkFormat.encodeHeader(new Header(1, 1, 0, 1, 0, 1, new int[0]));
        assertThatThrownBy(() -> ChunkFormat.decodeHeader(other, 2)).isInstanceOf(CodecException.class).hasMessageContaining("chunk");
    }

    /** A header of the first layout (no capacity, no shadow bits) reads as every block at its place. */
    @Test void firstLayoutHeadersStillRead() throws CodecException {
        int[] crcs = {11, 22, 33};
        java.nio.ByteBuffer b = java.nio.ByteBuffer.allocate(4 + 8 * 4 + 4 + 4 + 4 * crcs.length + 4);
        b.putInt(0x4341_4b31).putLong(9).putLong(4).putLong(150_000).putLong(2).putInt(0).putInt(crcs.length);
        for (int c : crcs) b.putInt(c);
        b.putInt(ChunkFormat.crc(b.array(), 0, b.position()));
        byte[] slot = java.util.Arrays.copyOf(b.array(), ChunkFormat.SLOT_SIZE);
        assertThat(ChunkFormat.headerBytes(slot)).isEqualTo(b.capacity());
        Header h = ChunkFormat.decodeHeader(slot, 9);
        assertThat(h).isEqualTo(new Header(9, 4, 150_000, 2, 0, ChunkFormat.MAX_BLOCKS, crcs));
        for (int p = 0; p < crcs.length * ChunkFormat.PAGES_PER_BLOCK; p++) {
            assertThat(h.pageOffset(p)).isEqualTo(ChunkFormat.DATA_OFFSET + (long) p * ChunkFormat.PAGE_SIZE);
        }
    }

    /** A header of the second layout (a shadow bit per block) reads as each page where its block is. */
    @Test void secondLayoutHeadersReadAsPages() throws CodecException {
        int[] crcs = {11, 22, 33};
        java.nio.ByteBuffer b = java.nio.ByteBuffer.allocate(4 + 8 * 4 + 4 + 4 + 4 + 4 * crcs.length + 1 + 4);
        b.putInt(0x4341_4b32).putLong(9).putLong(4).putLong(150_000).putLong(2).putInt(0).putInt(4).putInt(crcs.length);
        for (int c : crcs) b.putInt(c);
        b.put((byte) 0b010);
        b.putInt(ChunkFormat.crc(b.array(), 0, b.position()));
        byte[] slot = java.util.Arrays.copyOf(b.array(), ChunkFormat.SLOT_SIZE);
        assertThat(ChunkFormat.headerBytes(slot)).isEqualTo(b.capacity());
        Header h = ChunkFormat.decodeHeader(slot, 9);
        int pages = ChunkFormat.PAGES_PER_BLOCK;
        for (int p = 0; p < crcs.length * pages; p++) {
            assertThat(h.shadowed(p)).as("page %d", p).isEqualTo(p / pages == 1);
            assertThat(h.pageOffset(p)).isEqualTo(ChunkFormat.DATA_OFFSET + (p / pages == 1 ? 4L * 65536 : 0) + (long) p * ChunkFormat.PAGE_SIZE);
        }
        // written back, it is a third-layout header holding the same places
        assertThat(ChunkFormat.decodeHeader(ChunkFormat.encodeHeader(h), 9)).isEqualTo(h);
        byte[] stray = slot.clone();
        stray[4 + 8 * 4 + 4 + 4 + 4 + 4 * crcs.length] = (byte) 0b1010; // a bit for a fourth block of three
        java.nio.ByteBuffer.wrap(stray).putInt(b.capacity() - 4, ChunkFormat.crc(stray, 0, b.capacity() - 4));
        assertThatThrownBy(() -> ChunkFormat.decodeHeader(stray, 9)).isInstanceOf(CodecException.class);
    }

    /** A page's two places: its place in the data area, or the same page of its block past the capacity. */
    @Test void shadowPlacesFollowTheCapacity() {
        byte[] shadow = new byte[ChunkFormat.shadowBytes(3)];
        shadow[2] = 0b1; // page 16: block 1's first page
        shadow[5] = (byte) 0x80; // page 47: block 2's last page
        Header h = new Header(1, 1, 3 * 65536L, 1, 0, 4, new int[3], shadow);
        assertThat(h.pageOffset(0)).isEqualTo(ChunkFormat.DATA_OFFSET);
        assertThat(h.pageOffset(16)).isEqualTo(ChunkFormat.DATA_OFFSET + 5L * 65536);
        assertThat(h.pageOffset(17)).isEqualTo(ChunkFormat.DATA_OFFSET + 65536 + 4096);
        assertThat(h.pageOffset(47)).isEqualTo(ChunkFormat.DATA_OFFSET + 4L * 65536 + 47L * 4096);
        assertThat(h.anyShadowed(0)).isFalse();
        assertThat(h.anyShadowed(1)).isTrue();
        assertThat(h.anyShadowed(2)).isTrue();
        assertThatThrownBy(() -> new Header(1, 1, 5 * 65536L, 1, 0, 4, new int[5])).isInstanceOf(IllegalArgumentException.class);
    }

    @Test void fileNamesMapBackToIds() {
        for (long id : new long[] {1, 255, Long.MAX_VALUE, -1}) {
            assertThat(ChunkFormat.chunkIdOf(ChunkFormat.fileName(id))).isEqualTo(id == -1 ? -1 : id);
        }
        // the on-disk names are the format's: chunk_ and 16 lower-case hex digits
        java.util.SplittableRandom r = new java.util.SplittableRandom(7);
        for (int i = 0; i < 1000; i++) {
            long id = i < 500 ? r.nextLong() : r.nextLong(1 << 20);
            assertThat(ChunkFormat.fileName(id)).isEqualTo(String.format(java.util.Locale.ROOT, "chunk_%016x.ck", id));
        }
        assertThat(ChunkFormat.chunkIdOf("chunk_zz.ck")).isEqualTo(-1);
        assertThat(ChunkFormat.chunkIdOf(".cairn-probe")).isEqualTo(-1);
    }
}
