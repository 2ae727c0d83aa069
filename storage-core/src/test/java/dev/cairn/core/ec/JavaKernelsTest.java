package dev.cairn.core.ec;

import static org.assertj.core.api.Assertions.assertThat;
import static org.quicktheories.QuickTheory.qt;
import static org.quicktheories.generators.SourceDSL.integers;
import static org.quicktheories.generators.SourceDSL.longs;

import java.nio.ByteBuffer;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/**
 * Both pure-Java kernels against the definition (Σ_j c[i][j]·in[j] with {@link Gf256#mul}) for random
 * matrices, shapes, lengths (including tails that are not a multiple of a word or a block) and buffer
 * offsets. This holds the fallback engine to the on-disk format where no native engine exists to compare with.
 */
class JavaKernelsTest {
    @Test void bothKernelsComputeTheMatrixProduct() {
        qt().withExamples(300).forAll(integers().between(1, 12), integers().between(1, 20), integers().between(0, 9_000), longs().all())
                .checkAssert((rows, cols, len, seed) -> {
                    SplittableRandom r = new SplittableRandom(seed);
                    int[] matrix = new int[rows * cols];
                    for (int i = 0; i < matrix.length; i++) matrix[i] = r.nextInt(4) == 0 ? r.nextInt(2) : r.nextInt(256); // 0 and 1 often
                    int offset = r.nextInt(8);
                    ByteBuffer[] in = new ByteBuffer[cols];
                    for (int j = 0; j < cols; j++) {
                        byte[] b = new byte[offset + len];
                        r.nextBytes(b);
                        in[j] = r.nextBoolean() ? ByteBuffer.wrap(b) : ByteBuffer.allocateDirect(b.length).put(0, b);
                        in[j].position(offset);
                    }
                    byte[][] expected = new byte[rows][len];
                    for (int i = 0; i < rows; i++) {
                        for (int p = 0; p < len; p++) {
                            int v = 0;
                            for (int j = 0; j < cols; j++) v ^= Gf256.mul(matrix[i * cols + j], in[j].get(offset + p) & 0xff);
                            expected[i][p] = (byte) v;
                        }
                    }
                    check("row", RowKernel.prepare(matrix, rows, cols), in, expected, offset, len);
                    check("packed", PackedKernel.prepare(matrix, rows, cols), in, expected, offset, len);
                });
    }

    private static void check(String kernel, CodingEngine.Prepared p, ByteBuffer[] in, byte[][] expected, int offset, int len) {
        ByteBuffer[] out = new ByteBuffer[expected.length];
        for (int i = 0; i < out.length; i++) {
            out[i] = ByteBuffer.allocate(offset + len);
            out[i].position(offset);
        }
        p.apply(in, out, len);
        for (int i = 0; i < out.length; i++) {
            byte[] got = new byte[len];
            out[i].get(offset, got);
            assertThat(got).as(kernel + " row " + i + " of " + out.length + "x" + in.length + " len " + len).isEqualTo(expected[i]);
        }
    }
}
