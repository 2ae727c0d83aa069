package dev.cairn.core.ec;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

class StripesTest {
    static final int CELL = Stripes.CELL;

    /**
     * Random profiles and chunk sizes around cell and stripe edges (seeded; the seed is in the message), on the
     * best engine that loads, one codec per profile as a node keeps them: each encode reuses cells an earlier,
     * longer one left bytes in.
     */
    @Test void partsHoldTheirCellsOnlyAndAnyKOfThemZeroPaddedDecodeTheChunk() {
        CodecCache codecs = new CodecCache();
        for (int seed = 0; seed < 300; seed++) {
            SplittableRandom r = new SplittableRandom(seed);
            int k = 1 + r.nextInt(6), m = 1 + r.nextInt(3);
            int stripe = k * CELL;
            int len = switch (r.nextInt(4)) {
                case 0 -> r.nextInt(3 * stripe);
                case 1 -> r.nextInt(4) * stripe + r.nextInt(3) - 1; // a stripe edge
                case 2 -> r.nextInt(3 * k) * CELL + r.nextInt(3) - 1; // a cell edge
                default -> r.nextInt(5000);
            };
            len = Math.max(0, len);
            byte[] chunk = new byte[len];
            r.nextBytes(chunk);
            ErasureCodec codec = codecs.get(k, m);
            byte[][] parts = Stripes.encode(codec, chunk);
            String what = "seed " + seed + ": ec(" + k + "," + m + ") of " + len + " bytes";
            long stored = 0;
            for (int p = 0; p < k + m; p++) {
                assertThat((long) parts[p].length).as(what + ", part " + p).isEqualTo(Stripes.partLength(len, k, p));
                long sum = 0;
                for (long s = 0; s * stripe < Math.max(1, len); s++) sum += Stripes.cellLength(len, k, p, s);
                assertThat(sum).as(what + ": cells add up to the part, part " + p).isEqualTo(parts[p].length);
                stored += parts[p].length;
            }
            // nothing stored past the data: the data parts hold exactly the chunk, the parity no more than part 0
            assertThat(stored).as(what).isEqualTo((long) len + (long) m * parts[0].length);
            for (int i = 0; i < len; i++) {
                int s = i / stripe, d = i % stripe / CELL;
                if (parts[d][s * CELL + i % CELL] != chunk[i]) throw new AssertionError(what + ": byte " + i + " not in part " + d);
            }
            // the trimmed parity is the padded coding's: decode from any k parts, zero-padded to whole cells
            int stripes = (len + stripe - 1) / stripe;
            boolean[] present = new boolean[k + m];
            int[] order = r.ints(0, k + m).distinct().limit(k + m).toArray();
            for (int i = 0; i < k; i++) present[order[i]] = true;
            ByteBuffer[] padded = new ByteBuffer[k + m];
            for (int p = 0; p < k + m; p++) {
                padded[p] = codec.engine().needsDirectBuffers() ? ByteBuffer.allocateDirect(stripes * CELL) : ByteBuffer.allocate(stripes * CELL);
                if (present[p]) padded[p].put(0, parts[p]);
            }
            codec.decode(padded, present);
            byte[] back = new byte[len];
            for (int i = 0; i < len; i++) back[i] = padded[i % stripe / CELL].get(i / stripe * CELL + i % CELL);
            assertThat(Arrays.equals(back, chunk)).as(what + " decoded from parts " + Arrays.toString(Arrays.copyOf(order, k))).isTrue();
        }
    }

    /**
     * An upload codes a chunk a range of stripes at a time: the ranges' pieces, laid end to end per part, must be
     * the whole-chunk coding byte for byte, whatever the range length and however the chunk ends (seeded sweep).
     */
    @Test void rangesOfStripesConcatenateToTheWholeChunksParts() {
        CodecCache codecs = new CodecCache();
        for (int seed = 0; seed < 200; seed++) {
            SplittableRandom r = new SplittableRandom(seed);
            int k = 1 + r.nextInt(6), m = 1 + r.nextInt(3);
            int stripe = k * CELL;
            int len = Math.max(0, switch (r.nextInt(3)) {
                case 0 -> r.nextInt(5 * stripe);
                case 1 -> r.nextInt(6) * stripe + r.nextInt(3) - 1;
                default -> r.nextInt(12 * k) * CELL + r.nextInt(3) - 1;
            });
            int perRange = 1 + r.nextInt(5);
            byte[] chunk = new byte[len];
            r.nextBytes(chunk);
            ErasureCodec codec = codecs.get(k, m);
            byte[][] whole = Stripes.encode(codec, chunk);
            String what = "seed " + seed + ": ec(" + k + "," + m + ") of " + len + " bytes, " + perRange + " stripes a range";
            java.io.ByteArrayOutputStream[] joined = new java.io.ByteArrayOutputStream[k + m];
            for (int p = 0; p < k + m; p++) joined[p] = new java.io.ByteArrayOutputStream();
            // one range past the end too: it must be empty
            for (long first = 0; first <= (len + stripe - 1) / stripe; first += perRange) {
                byte[][] range = Stripes.encode(codec, chunk, first, perRange);
                for (int p = 0; p < k + m; p++) {
                    assertThat(range[p].length).as(what + ", part " + p + " from stripe " + first).isLessThanOrEqualTo(perRange * CELL);
                    joined[p].writeBytes(range[p]);
                }
            }
            for (int p = 0; p < k + m; p++) assertThat(joined[p].toByteArray()).as(what + ", part " + p).isEqualTo(whole[p]);
        }
    }

    @Test void aSmallFileStoresItsBytesInTheFirstDataPartAndEachParityPartOnly() {
        assertThat(Stripes.partLength(10_000, 4, 0)).isEqualTo(10_000);
        for (int p = 1; p < 4; p++) assertThat(Stripes.partLength(10_000, 4, p)).isZero();
        assertThat(Stripes.partLength(10_000, 4, 4)).isEqualTo(10_000);
        assertThat(Stripes.partLength(10_000, 4, 5)).isEqualTo(10_000);
        // one full stripe and a part of the next: every part one cell, then the tail
        long len = 2L * CELL + CELL + 7;
        assertThat(Stripes.partLength(len, 2, 0)).isEqualTo(2L * CELL);
        assertThat(Stripes.partLength(len, 2, 1)).isEqualTo(CELL + 7);
        assertThat(Stripes.partLength(len, 2, 2)).isEqualTo(2L * CELL);
        assertThat(Stripes.partLength(0, 3, 0)).isZero();
        assertThat(Stripes.partLength(0, 3, 3)).isZero();
    }

    /** minChunkBytes is partLength's inverse as a bound: the fewest chunk bytes giving a part at least n bytes. */
    @Test void theFewestChunkBytesForAPartLengthAreExactlyThose() {
        for (int seed = 0; seed < 2000; seed++) {
            SplittableRandom r = new SplittableRandom(seed);
            int k = 1 + r.nextInt(8), m = 1 + r.nextInt(3), part = r.nextInt(k + m);
            long n = switch (r.nextInt(3)) {
                case 0 -> 1 + r.nextInt(4 * CELL);
                case 1 -> (1 + r.nextInt(4)) * (long) CELL + r.nextInt(3) - 1; // a cell edge
                default -> 1 + r.nextInt(100);
            };
            long min = Stripes.minChunkBytes(n, k, part);
            String what = "seed " + seed + ": ec(" + k + "," + m + ") part " + part + ", " + n + " bytes";
            assertThat(Stripes.partLength(min, k, part)).as(what).isGreaterThanOrEqualTo(n);
            assertThat(Stripes.partLength(min - 1, k, part)).as(what + ": one byte fewer").isLessThan(n);
        }
        assertThat(Stripes.minChunkBytes(0, 4, 2)).isZero();
    }
}
