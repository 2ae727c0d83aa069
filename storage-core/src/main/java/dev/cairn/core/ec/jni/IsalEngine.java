package dev.cairn.core.ec.jni;

import dev.cairn.core.ec.CodingEngine;
import java.nio.ByteBuffer;

/** Intel ISA-L through JNI: the matrix is expanded into ISA-L's tables once per prepared matrix. */
public final class IsalEngine implements CodingEngine {
    private static final boolean AVAILABLE = NativeLibrary.load("isal");

    /** The engine, or null if the glue or libisal cannot be loaded. */
    public static IsalEngine loadOrNull() { return AVAILABLE ? new IsalEngine() : null; }

    private IsalEngine() {}

    @Override public String name() { return "isa-l"; }

    @Override public boolean needsDirectBuffers() { return true; }

    @Override public Prepared prepare(int[] matrix, int rows, int cols) {
        byte[] a = new byte[rows * cols];
        for (int i = 0; i < a.length; i++) a[i] = (byte) matrix[i];
        ByteBuffer tables = ByteBuffer.allocateDirect(32 * rows * cols);
        initTables(cols, rows, a, tables);
        int[] inPos = new int[cols], outPos = new int[rows];
        return (in, out, len) -> {
            for (int j = 0; j < cols; j++) inPos[j] = in[j].position();
            for (int r = 0; r < rows; r++) outPos[r] = out[r].position();
            if (apply(len, cols, rows, tables, in, inPos, out, outPos) != 0) {
                throw new IllegalArgumentException("isa-l needs direct buffers");
            }
        };
    }

    /**
     * Benchmark support: runs the library's encode {@code iterations} times inside C and returns the
     * nanoseconds it took, for a paired comparison with the same work done call by call through JNI.
     */
    public long nativeEncodeLoop(int[] matrix, int rows, int cols, ByteBuffer[] in, ByteBuffer[] out, int len, int iterations) {
        byte[] a = new byte[rows * cols];
        for (int i = 0; i < a.length; i++) a[i] = (byte) matrix[i];
        ByteBuffer tables = ByteBuffer.allocateDirect(32 * rows * cols);
        initTables(cols, rows, a, tables);
        int[] inPos = new int[cols], outPos = new int[rows];
        for (int j = 0; j < cols; j++) inPos[j] = in[j].position();
        for (int r = 0; r < rows; r++) outPos[r] = out[r].position();
        long t = nativeLoop(len, cols, rows, tables, in, inPos, out, outPos, iterations);
        if (t < 0) throw new IllegalArgumentException("isa-l needs direct buffers");
        return t;
    }

    private static native long nativeLoop(int len, int k, int rows, ByteBuffer tables, ByteBuffer[] in, int[] inPos, ByteBuffer[] out, int[] outPos, int iterations);

    private static native void initTables(int k, int rows, byte[] matrix, ByteBuffer tables);

    private static native int apply(int len, int k, int rows, ByteBuffer tables, ByteBuffer[] in, int[] inPos, ByteBuffer[] out, int[] outPos);
}
