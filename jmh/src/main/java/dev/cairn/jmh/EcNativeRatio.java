package dev.cairn.jmh;

import dev.cairn.core.ec.CodingEngine;
import dev.cairn.core.ec.Engines;
import dev.cairn.core.ec.ErasureCodec;
import dev.cairn.core.ec.Vandermonde;
import dev.cairn.core.ec.jni.IsalEngine;
import dev.cairn.core.ec.jni.JerasureEngine;
import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.Locale;
import java.util.SplittableRandom;

/**
 * JNI versus the same library called from C, measured in one process: for each engine and profile the
 * same encode runs N times through Cairn's JNI path (timed in Java) and N times in a loop inside C (timed
 * in C), alternating for several rounds; the medians give the ratio. The fair way on a shared, noisy
 * machine: both sides see the same interference.
 */
public final class EcNativeRatio {
    static final String[] PROFILES = {"4+1", "4+2", "6+3", "8+3", "10+4"};
    static final int ROUNDS = 7;
    static final long TARGET_NANOS = 200_000_000L;

    private EcNativeRatio() {}

    public static void main(String[] args) {
        int cell = args.length > 0 ? Integer.parseInt(args[0]) : 64 << 10;
        IsalEngine isal = IsalEngine.loadOrNull();
        JerasureEngine jer = JerasureEngine.loadOrNull();
        System.out.printf(Locale.ROOT, "JNI vs native, %d-byte cells, single thread, %d interleaved rounds (median), data GB/s%n", cell, ROUNDS);
        System.out.printf(Locale.ROOT, "%-9s %-7s %12s %12s %8s%n", "engine", "profile", "native", "jni", "jni/native");
        for (String p : PROFILES) {
            String[] km = p.split("\\+");
            int k = Integer.parseInt(km[0]), m = Integer.parseInt(km[1]);
            if (isal != null) row("isa-l", p, k, m, cell, isal, (mat, in, out, n) -> isal.nativeEncodeLoop(mat, m, k, in, out, cell, n));
            if (jer != null) row("jerasure", p, k, m, cell, jer, (mat, in, out, n) -> jer.nativeEncodeLoop(mat, m, k, in, out, cell, n));
        }
        if (isal == null || jer == null) System.out.println("(a native engine is missing here: " + Engines.INSTALL_HINT + ")");
        CodingEngine java = Engines.named("java");
        for (String p : new String[] {"8+3", "4+2"}) {
            String[] km = p.split("\\+");
            int k = Integer.parseInt(km[0]), m = Integer.parseInt(km[1]);
            double[] gbps = new double[ROUNDS];
            ByteBuffer[] in = buffers(k, cell, 1), out = buffers(m, cell, 2);
            ErasureCodec c = new ErasureCodec(k, m, java);
            int n = calibrate(() -> c.encode(in, out));
            for (int r = 0; r < ROUNDS; r++) gbps[r] = (double) k * cell * n / time(() -> c.encode(in, out), n);
            System.out.printf(Locale.ROOT, "%-9s %-7s %12s %12.2f%n", "java", p, "-", median(gbps));
        }
    }

    interface NativeLoop { long run(int[] matrix, ByteBuffer[] in, ByteBuffer[] out, int iterations); }

    static void row(String name, String profile, int k, int m, int cell, CodingEngine engine, NativeLoop loop) {
        ByteBuffer[] in = buffers(k, cell, 1), out = buffers(m, cell, 2);
        int[] matrix = Vandermonde.codingMatrix(k, m);
        ErasureCodec c = new ErasureCodec(k, m, engine);
        int n = calibrate(() -> c.encode(in, out));
        double[] nat = new double[ROUNDS], jni = new double[ROUNDS];
        double bytes = (double) k * cell * n;
        for (int r = 0; r < ROUNDS; r++) {
            nat[r] = bytes / loop.run(matrix, in, out, n);
            jni[r] = bytes / time(() -> c.encode(in, out), n);
        }
        double a = median(nat), b = median(jni);
        System.out.printf(Locale.ROOT, "%-9s %-7s %12.2f %12.2f %8.3f%n", name, profile, a, b, b / a);
    }

    static ByteBuffer[] buffers(int n, int len, long seed) {
        SplittableRandom r = new SplittableRandom(seed);
        byte[] tmp = new byte[len];
        ByteBuffer[] b = new ByteBuffer[n];
        for (int i = 0; i < n; i++) {
            b[i] = ByteBuffer.allocateDirect(len);
            r.nextBytes(tmp);
            b[i].put(0, tmp);
        }
        return b;
    }

    static int calibrate(Runnable op) {
        for (int i = 0; i < 50; i++) op.run(); // warm up the JIT
        int n = 1;
        while (time(op, n) < TARGET_NANOS / 4 && n < (1 << 24)) n *= 2;
        return n;
    }

    static long time(Runnable op, int n) {
        long t = System.nanoTime();
        for (int i = 0; i < n; i++) op.run();
        return System.nanoTime() - t;
    }

    static double median(double[] v) {
        double[] s = v.clone();
        Arrays.sort(s);
        return s[s.length / 2];
    }
}
