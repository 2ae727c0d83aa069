package dev.cairn.core.ec;

/**
 * jerasure's {@code reed_sol_vandermonde_coding_matrix(k, m, 8)}: the m×k coding matrix that is part of
 * Cairn's on-disk format. Built the way jerasure builds it (an extended Vandermonde matrix of k+m rows,
 * reduced so the top k rows are the identity, then row k and column 0 normalised to ones), so parity is
 * byte-identical to jerasure's and, fed to {@code ec_init_tables}, to ISA-L's.
 */
public final class Vandermonde {
    public static final int MAX_PARTS = 32;

    private Vandermonde() {}

    /** Row-major m×k coefficients. */
    public static int[] codingMatrix(int k, int m) {
        check(k, m);
        int rows = k + m, cols = k;
        int[] dist = bigDistribution(rows, cols);
        int[] out = new int[m * k];
        System.arraycopy(dist, k * k, out, 0, m * k);
        return out;
    }

    public static void check(int k, int m) {
        if (k < 1 || m < 1 || k + m > MAX_PARTS) {
            throw new IllegalArgumentException("erasure code " + k + "+" + m + ": need k >= 1, m >= 1 and k + m <= " + MAX_PARTS);
        }
    }

    private static int[] extended(int rows, int cols) {
        int[] vdm = new int[rows * cols];
        vdm[0] = 1;
        if (rows == 1) return vdm;
        vdm[(rows - 1) * cols + cols - 1] = 1;
        if (rows == 2) return vdm;
        for (int i = 1; i < rows - 1; i++) {
            int k = 1;
            for (int j = 0; j < cols; j++) {
                vdm[i * cols + j] = k;
                k = Gf256.mul(k, i);
            }
        }
        return vdm;
    }

    private static int[] bigDistribution(int rows, int cols) {
        int[] dist = extended(rows, cols);
        int sindex = 0;
        for (int i = 1; i < cols; i++) {
            sindex += cols;
            // find a row j >= i with a non-zero element in column i
            int srindex = sindex + i;
            int j = i;
            while (j < rows && dist[srindex] == 0) { j++; srindex += cols; }
            if (j >= rows) throw new IllegalStateException("cannot build the Vandermonde matrix " + rows + "x" + cols);
            if (j != i) {
                srindex -= i;
                for (int c = 0; c < cols; c++) {
                    int t = dist[srindex + c];
                    dist[srindex + c] = dist[sindex + c];
                    dist[sindex + c] = t;
                }
            }
            // make element (i,i) one by scaling column i
            if (dist[sindex + i] != 1) {
                int t = Gf256.div(1, dist[sindex + i]);
                for (int r = 0, idx = i; r < rows; r++, idx += cols) dist[idx] = Gf256.mul(t, dist[idx]);
            }
            // zero the rest of row i by column operations
            for (int c = 0; c < cols; c++) {
                int t = dist[sindex + c];
                if (c != i && t != 0) {
                    for (int r = 0, dst = c, src = i; r < rows; r++, dst += cols, src += cols) {
                        dist[dst] ^= Gf256.mul(t, dist[src]);
                    }
                }
            }
        }
        // row k (the first coding row) all ones: scale each column's coding part
        sindex = cols * cols;
        for (int j = 0; j < cols; j++) {
            int t = dist[sindex];
            if (t != 1) {
                t = Gf256.div(1, t);
                for (int r = cols, idx = sindex; r < rows; r++, idx += cols) dist[idx] = Gf256.mul(t, dist[idx]);
            }
            sindex++;
        }
        // first column of every later coding row one: scale the row
        sindex = cols * (cols + 1);
        for (int r = cols + 1; r < rows; r++) {
            int t = dist[sindex];
            if (t != 1) {
                t = Gf256.div(1, t);
                for (int j = 0; j < cols; j++) dist[sindex + j] = Gf256.mul(dist[sindex + j], t);
            }
            sindex += cols;
        }
        return dist;
    }
}
