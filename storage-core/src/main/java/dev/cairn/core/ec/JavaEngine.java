package dev.cairn.core.ec;

import java.nio.ByteBuffer;

/**
 * The pure-Java engine: per coefficient a 256-byte product table, applied over blocks of {@link #BLOCK}
 * bytes so each input block is read once while every output it feeds stays in cache. Works on heap and
 * direct buffers alike (direct ones are staged through the block scratch arrays).
 */
public final class JavaEngine implements CodingEngine {
    /** Bytes per pass: small enough that k inputs and m outputs stay in L1/L2. */
    static final int BLOCK = 4 << 10;

    @Override public String name() { return "java"; }

    @Override public boolean needsDirectBuffers() { return false; }

    @Override public Prepared prepare(int[] matrix, int rows, int cols) {
        byte[][][] tables = new byte[rows][cols][];
        for (int r = 0; r < rows; r++) for (int j = 0; j < cols; j++) tables[r][j] = Gf256.MUL[matrix[r * cols + j]];
        int[] coef = matrix.clone();
        return (in, out, len) -> apply(tables, coef, rows, cols, in, out, len);
    }

    private static void apply(byte[][][] tables, int[] coef, int rows, int cols, ByteBuffer[] in, ByteBuffer[] out, int len) {
        byte[][] src = new byte[cols][BLOCK];
        byte[][] dst = new byte[rows][BLOCK];
        for (int base = 0; base < len; base += BLOCK) {
            int n = Math.min(BLOCK, len - base);
            for (int j = 0; j < cols; j++) in[j].get(in[j].position() + base, src[j], 0, n);
            for (int r = 0; r < rows; r++) {
                byte[] d = dst[r];
                boolean first = true;
                for (int j = 0; j < cols; j++) {
                    int c = coef[r * cols + j];
                    if (c == 0) continue;
                    byte[] s = src[j];
                    if (c == 1) {
                        if (first) System.arraycopy(s, 0, d, 0, n); else xor(d, s, n);
                    } else {
                        byte[] t = tables[r][j];
                        if (first) for (int i = 0; i < n; i++) d[i] = t[s[i] & 0xff];
                        else for (int i = 0; i < n; i++) d[i] ^= t[s[i] & 0xff];
                    }
                    first = false;
                }
                if (first) java.util.Arrays.fill(d, 0, n, (byte) 0);
                out[r].put(out[r].position() + base, d, 0, n);
            }
        }
    }

    private static void xor(byte[] d, byte[] s, int n) {
        for (int i = 0; i < n; i++) d[i] ^= s[i];
    }
}
