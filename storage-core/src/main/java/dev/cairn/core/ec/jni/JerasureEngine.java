package dev.cairn.core.ec.jni;

import dev.cairn.core.ec.CodingEngine;
import dev.cairn.core.ec.JavaEngine;
import java.nio.ByteBuffer;

/**
 * jerasure (over gf-complete) through JNI. jerasure wants lengths that are a multiple of 8 and gf-complete
 * wants every buffer's address congruent modulo 16; the bulk (a multiple of 16 bytes) runs natively and
 * the few tail bytes in Java, and incongruent buffers are refused with a clear error.
 */
public final class JerasureEngine implements CodingEngine {
    private static final boolean AVAILABLE = NativeLibrary.load("jerasure");
    private static final int ALIGN = 16;

    /** The engine, or null if the glue or libJerasure/libgf_complete cannot be loaded. */
    public static JerasureEngine loadOrNull() { return AVAILABLE ? new JerasureEngine() : null; }

    private final JavaEngine tail = new JavaEngine();

    private JerasureEngine() {}

    @Override public String name() { return "jerasure"; }

    @Override public boolean needsDirectBuffers() { return true; }

    @Override public Prepared prepare(int[] matrix, int rows, int cols) {
        int[] m = matrix.clone();
        Prepared javaTail = tail.prepare(matrix, rows, cols);
        int[] inPos = new int[cols], outPos = new int[rows];
        return (in, out, len) -> {
            int bulk = len & ~(ALIGN - 1);
            if (bulk > 0) {
                for (int j = 0; j < cols; j++) inPos[j] = in[j].position();
                for (int r = 0; r < rows; r++) outPos[r] = out[r].position();
                int rc = apply(bulk, cols, rows, m, in, inPos, out, outPos);
                if (rc == -2) throw new IllegalArgumentException("jerasure needs cells whose addresses agree modulo 16");
                if (rc != 0) throw new IllegalArgumentException("jerasure needs direct buffers");
            }
            if (bulk < len) {
                ByteBuffer[] i2 = new ByteBuffer[cols], o2 = new ByteBuffer[rows];
                for (int j = 0; j < cols; j++) i2[j] = in[j].duplicate().position(in[j].position() + bulk);
                for (int r = 0; r < rows; r++) o2[r] = out[r].duplicate().position(out[r].position() + bulk);
                javaTail.apply(i2, o2, len - bulk);
            }
        };
    }

    /** jerasure's own {@code reed_sol_vandermonde_coding_matrix(k, m, 8)} (for tests of the on-disk format). */
    public int[] referenceCodingMatrix(int k, int m) {
        dev.cairn.core.ec.Vandermonde.check(k, m);
        return referenceMatrix(k, m);
    }

    private static native int[] referenceMatrix(int k, int m);

    /** Benchmark support: the library's encode repeated {@code iterations} times inside C; nanoseconds. */
    public long nativeEncodeLoop(int[] matrix, int rows, int cols, ByteBuffer[] in, ByteBuffer[] out, int len, int iterations) {
        if (len % ALIGN != 0) throw new IllegalArgumentException("benchmark lengths must be a multiple of " + ALIGN);
        int[] inPos = new int[cols], outPos = new int[rows];
        for (int j = 0; j < cols; j++) inPos[j] = in[j].position();
        for (int r = 0; r < rows; r++) outPos[r] = out[r].position();
        long t = nativeLoop(len, cols, rows, matrix.clone(), in, inPos, out, outPos, iterations);
        if (t < 0) throw new IllegalArgumentException("jerasure needs direct, congruent buffers");
        return t;
    }

    private static native long nativeLoop(int len, int k, int rows, int[] matrix, ByteBuffer[] in, int[] inPos, ByteBuffer[] out, int[] outPos, int iterations);

    private static native int apply(int len, int k, int rows, int[] matrix, ByteBuffer[] in, int[] inPos, ByteBuffer[] out, int[] outPos);
}
