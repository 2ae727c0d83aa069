package dev.cairn.core.ec;

import java.nio.ByteBuffer;

/**
 * One way of multiplying a GF(2^8) matrix by a set of equal-length buffers — the single primitive that
 * both encoding (coding matrix × data) and decoding (inverse rows × survivors) need. Engines must give
 * byte-identical results; they differ only in speed.
 */
public interface CodingEngine {
    String name();

    /** True if the engine needs direct buffers (native engines). */
    boolean needsDirectBuffers();

    /** Prepares {@code rows}×{@code cols} row-major coefficients (tables, expanded matrices) for repeated use. */
    Prepared prepare(int[] matrix, int rows, int cols);

    /** A prepared matrix: {@code out[r] = Σ_j matrix[r][j] · in[j]} over bytes [position, position + len). */
    interface Prepared {
        void apply(ByteBuffer[] in, ByteBuffer[] out, int len);
    }
}
