package dev.cairn.core.ec;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Arrays;

/**
 * Pure-Java kernel for three or more output rows. One 64-bit table entry holds the products of one input
 * byte with the coefficients of four output rows, for one of two byte lanes:
 * {@code T[j][lane·256 + b] = Σ_i (c[i][j]·b) << (16·i + 8·lane)}. So two lookups give the contributions
 * of two adjacent input bytes to four rows at once, accumulated in a {@code long} per byte pair; a final
 * pass spreads each 16-bit field to its row. Inputs are taken four at a time so each accumulator is
 * loaded and stored once per four inputs. Rows beyond four are further groups of four.
 *
 * <p>Why this shape: the per-row kernel ({@link RowKernel}) does m lookups per input byte; this one does
 * one per input byte per group, and keeping accumulators in memory (not registers) lets the inner loop
 * run over positions, which the JIT unrolls well. Tables are 4 KiB per input, so the four in use fit L1.
 */
final class PackedKernel {
    /** Bytes per pass: k input blocks, one accumulator block and four output blocks stay in L2. */
    static final int BLOCK = 4 << 10;
    /** Output rows carried by one table entry (16 bits each: two byte lanes). */
    static final int GROUP = 4;
    private static final VarHandle INT = MethodHandles.byteArrayViewVarHandle(int[].class, ByteOrder.LITTLE_ENDIAN);

    private PackedKernel() {}

    static CodingEngine.Prepared prepare(int[] matrix, int rows, int cols) {
        int groups = (rows + GROUP - 1) / GROUP;
        long[][][] t = new long[groups][cols][512];
        for (int g = 0; g < groups; g++) {
            for (int j = 0; j < cols; j++) {
                for (int lane = 0; lane < 2; lane++) {
                    for (int b = 0; b < 256; b++) {
                        long v = 0;
                        for (int i = 0; i < GROUP && g * GROUP + i < rows; i++) {
                            v |= (long) Gf256.mul(matrix[(g * GROUP + i) * cols + j], b) << (16 * i + 8 * lane);
                        }
                        t[g][j][lane * 256 + b] = v;
                    }
                }
            }
        }
        return (in, out, len) -> apply(t, rows, cols, in, out, len);
    }

    private static void apply(long[][][] t, int rows, int cols, ByteBuffer[] in, ByteBuffer[] out, int len) {
        byte[][] src = new byte[cols][BLOCK];
        byte[][] dst = new byte[GROUP][BLOCK];
        long[] acc = new long[BLOCK / 2];
        for (int base = 0; base < len; base += BLOCK) {
            int n = Math.min(BLOCK, len - base);
            for (int j = 0; j < cols; j++) in[j].get(in[j].position() + base, src[j], 0, n);
            for (int g = 0; g < t.length; g++) {
                int outs = Math.min(GROUP, rows - g * GROUP);
                block(t[g], src, dst, acc, outs, n);
                for (int i = 0; i < outs; i++) out[g * GROUP + i].put(out[g * GROUP + i].position() + base, dst[i], 0, n);
            }
        }
    }

    /** dst[i][0, n) = Σ_j c[i][j]·src[j][0, n) for the {@code outs} rows of one group. */
    private static void block(long[][] t, byte[][] src, byte[][] dst, long[] acc, int outs, int n) {
        int cols = src.length;
        int words = n >>> 2;
        Arrays.fill(acc, 0, 2 * words, 0L);
        int j = 0;
        for (; j + 4 <= cols; j += 4) {
            long[] ta = t[j], tb = t[j + 1], tc = t[j + 2], td = t[j + 3];
            byte[] sa = src[j], sb = src[j + 1], sc = src[j + 2], sd = src[j + 3];
            for (int q = 0; q < words; q++) {
                int w = (int) INT.get(sa, q << 2), v = (int) INT.get(sb, q << 2);
                int x = (int) INT.get(sc, q << 2), y = (int) INT.get(sd, q << 2);
                acc[2 * q] ^= ta[w & 0xff] ^ ta[256 + ((w >>> 8) & 0xff)] ^ tb[v & 0xff] ^ tb[256 + ((v >>> 8) & 0xff)]
                        ^ tc[x & 0xff] ^ tc[256 + ((x >>> 8) & 0xff)] ^ td[y & 0xff] ^ td[256 + ((y >>> 8) & 0xff)];
                acc[2 * q + 1] ^= ta[(w >>> 16) & 0xff] ^ ta[256 + (w >>> 24)] ^ tb[(v >>> 16) & 0xff] ^ tb[256 + (v >>> 24)]
                        ^ tc[(x >>> 16) & 0xff] ^ tc[256 + (x >>> 24)] ^ td[(y >>> 16) & 0xff] ^ td[256 + (y >>> 24)];
            }
        }
        for (; j < cols; j++) {
            long[] tj = t[j];
            byte[] s = src[j];
            for (int q = 0; q < words; q++) {
                int w = (int) INT.get(s, q << 2);
                acc[2 * q] ^= tj[w & 0xff] ^ tj[256 + ((w >>> 8) & 0xff)];
                acc[2 * q + 1] ^= tj[(w >>> 16) & 0xff] ^ tj[256 + (w >>> 24)];
            }
        }
        for (int i = 0; i < outs; i++) {
            int shift = 16 * i;
            byte[] d = dst[i];
            for (int q = 0; q < words; q++) {
                INT.set(d, q << 2, (int) ((acc[2 * q] >>> shift) & 0xffff) | (int) ((acc[2 * q + 1] >>> shift) & 0xffff) << 16);
            }
        }
        for (int p = words << 2; p < n; p++) { // the last n % 4 bytes, lane 0 only
            long a = 0;
            for (int c = 0; c < cols; c++) a ^= t[c][src[c][p] & 0xff];
            for (int i = 0; i < outs; i++) dst[i][p] = (byte) (a >>> (16 * i));
        }
    }
}
