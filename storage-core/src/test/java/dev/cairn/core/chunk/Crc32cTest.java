package dev.cairn.core.chunk;

import static org.assertj.core.api.Assertions.assertThat;
import static org.quicktheories.QuickTheory.qt;
import static org.quicktheories.generators.SourceDSL.integers;

import java.util.SplittableRandom;
import java.util.zip.CRC32C;
import org.junit.jupiter.api.Test;

/** {@link Crc32c#combine} against the JDK's CRC32C of the concatenation, for any split of any bytes. */
class Crc32cTest {
    @Test void theChecksumOfAConcatenationComesFromTheChecksumsOfItsParts() {
        qt().forAll(integers().between(0, 3 * ChunkFormat.PAGE_SIZE), integers().between(0, 3 * ChunkFormat.PAGE_SIZE), integers().all()).checkAssert((a, b, seed) -> {
            byte[] bytes = new byte[a + b];
            new SplittableRandom(seed).nextBytes(bytes);
            int whole = crc(bytes, 0, a + b), left = crc(bytes, 0, a), right = crc(bytes, a, b);
            assertThat(Crc32c.combine(left, right, b)).isEqualTo(whole);
            assertThat(Crc32c.combineShifted(left, right, Crc32c.shift(b))).isEqualTo(whole);
        });
    }

    @Test void lengthsPastAnIntCombineAsZerosWould() {
        // x^(8n) for large n, checked against shifting in two halves: shift(a + b) = shift(a) · shift(b)
        long a = 3_000_000_000L, b = 5_123_456_789L;
        int crc = 0x1234_5678;
        assertThat(Crc32c.combine(Crc32c.combine(crc, 0, a), 0, b)).isEqualTo(Crc32c.combine(crc, 0, a + b));
        assertThat(Crc32c.combine(0, 0, 0)).isZero();
    }

    /** A block checksummed page by page, the pages combined in order: the block's checksum; out of order: not. */
    @Test void pagesCombineIntoTheirBlock() {
        byte[] block = new byte[ChunkFormat.BLOCK_SIZE];
        new SplittableRandom(7).nextBytes(block);
        int acc = ChunkFormat.crc(block, 0, ChunkFormat.PAGE_SIZE);
        for (int p = 1; p < ChunkFormat.PAGES_PER_BLOCK; p++) {
            acc = Crc32c.combine(acc, ChunkFormat.crc(block, p * ChunkFormat.PAGE_SIZE, ChunkFormat.PAGE_SIZE), ChunkFormat.PAGE_SIZE);
        }
        assertThat(acc).isEqualTo(ChunkFormat.crc(block, 0, block.length));
        int swapped = Crc32c.combine(ChunkFormat.crc(block, ChunkFormat.PAGE_SIZE, ChunkFormat.PAGE_SIZE), ChunkFormat.crc(block, 0, ChunkFormat.PAGE_SIZE), ChunkFormat.PAGE_SIZE);
        assertThat(swapped).isNotEqualTo(ChunkFormat.crc(block, 0, 2 * ChunkFormat.PAGE_SIZE));
    }

    private static int crc(byte[] b, int from, int n) {
        CRC32C c = new CRC32C();
        c.update(b, from, n);
        return (int) c.getValue();
    }
}
