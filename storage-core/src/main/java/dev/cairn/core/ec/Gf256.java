package dev.cairn.core.ec;

/** Arithmetic in GF(2^8) with the primitive polynomial x^8+x^4+x^3+x^2+1 (0x11d), as gf-complete and ISA-L use for w = 8. */
public final class Gf256 {
    public static final int POLY = 0x11d;
    private static final int[] EXP = new int[512];
    private static final int[] LOG = new int[256];
    /** MUL[a][b] = a·b; 64 KiB, shared by the Java engine's tables. */
    static final byte[][] MUL = new byte[256][256];

    static {
        int x = 1;
        for (int i = 0; i < 255; i++) {
            EXP[i] = x;
            LOG[x] = i;
            x <<= 1;
            if ((x & 0x100) != 0) x ^= POLY;
        }
        for (int i = 255; i < 512; i++) EXP[i] = EXP[i - 255];
        for (int a = 0; a < 256; a++) for (int b = 0; b < 256; b++) MUL[a][b] = (byte) mulSlow(a, b);
    }

    private Gf256() {}

    private static int mulSlow(int a, int b) {
        if (a == 0 || b == 0) return 0;
        return EXP[LOG[a] + LOG[b]];
    }

    public static int mul(int a, int b) { return MUL[a & 0xff][b & 0xff] & 0xff; }

    public static int div(int a, int b) {
        if (b == 0) throw new ArithmeticException("division by zero in GF(2^8)");
        if (a == 0) return 0;
        return EXP[LOG[a] + 255 - LOG[b]];
    }

    public static int inverse(int a) { return div(1, a); }

    /** Inverts an n×n matrix (row-major); throws if it is singular. */
    public static int[] invert(int[] m, int n) {
        int[] a = m.clone();
        int[] inv = new int[n * n];
        for (int i = 0; i < n; i++) inv[i * n + i] = 1;
        for (int col = 0; col < n; col++) {
            int pivot = col;
            while (pivot < n && a[pivot * n + col] == 0) pivot++;
            if (pivot == n) throw new IllegalArgumentException("singular matrix");
            if (pivot != col) { swapRows(a, n, pivot, col); swapRows(inv, n, pivot, col); }
            int scale = inverse(a[col * n + col]);
            for (int j = 0; j < n; j++) {
                a[col * n + j] = mul(a[col * n + j], scale);
                inv[col * n + j] = mul(inv[col * n + j], scale);
            }
            for (int r = 0; r < n; r++) {
                int f = a[r * n + col];
                if (r == col || f == 0) continue;
                for (int j = 0; j < n; j++) {
                    a[r * n + j] ^= mul(f, a[col * n + j]);
                    inv[r * n + j] ^= mul(f, inv[col * n + j]);
                }
            }
        }
        return inv;
    }

    private static void swapRows(int[] a, int n, int r1, int r2) {
        for (int j = 0; j < n; j++) {
            int t = a[r1 * n + j];
            a[r1 * n + j] = a[r2 * n + j];
            a[r2 * n + j] = t;
        }
    }
}
