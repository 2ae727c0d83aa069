package dev.cairn.core.ec;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.quicktheories.QuickTheory.qt;
import static org.quicktheories.generators.SourceDSL.integers;
import static org.quicktheories.generators.SourceDSL.longs;

import dev.cairn.core.ec.jni.JerasureEngine;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;

class ErasureCodecTest {
    static ByteBuffer[] cells(int n, int len, boolean direct) {
        ByteBuffer[] b = new ByteBuffer[n];
        for (int i = 0; i < n; i++) b[i] = direct ? ByteBuffer.allocateDirect(len) : ByteBuffer.allocate(len);
        return b;
    }

    static ByteBuffer[] randomData(int k, int len, long seed, boolean direct) {
        SplittableRandom r = new SplittableRandom(seed);
        ByteBuffer[] d = cells(k, len, direct);
        byte[] tmp = new byte[len];
        for (ByteBuffer b : d) {
            r.nextBytes(tmp);
            b.put(0, tmp);
        }
        return d;
    }

    static byte[] bytes(ByteBuffer b) {
        byte[] out = new byte[b.remaining()];
        b.get(b.position(), out);
        return out;
    }

    @Test void firstParityRowIsAllOnesSoParityZeroIsTheXorOfTheData() {
        for (int k = 1; k <= 20; k++) {
            int[] c = Vandermonde.codingMatrix(k, 3);
            for (int j = 0; j < k; j++) assertThat(c[j]).isEqualTo(1);
            for (int r = 1; r < 3; r++) assertThat(c[r * k]).as("column 0 of row " + r).isEqualTo(1);
        }
    }

    @Test void theCodingMatrixIsJerasuresForEveryProfile() {
        JerasureEngine j = JerasureEngine.loadOrNull();
        Assumptions.assumeTrue(j != null, "jerasure not loadable here: " + dev.cairn.core.ec.jni.NativeLibrary.failure("jerasure"));
        for (int k = 1; k < 32; k++) {
            for (int m = 1; k + m <= 32; m++) {
                assertThat(Vandermonde.codingMatrix(k, m)).as(k + "+" + m).isEqualTo(j.referenceCodingMatrix(k, m));
            }
        }
    }

    @Test void anyErasuresUpToMDecodeToTheOriginal() {
        qt().withExamples(300).forAll(integers().between(1, 16), integers().between(1, 16), integers().between(0, 3000), longs().all())
                .assuming((k, m, len, seed) -> k + m <= 32)
                .checkAssert((k, m, len, seed) -> {
                    for (CodingEngine e : Engines.available()) roundTrip(e, k, m, len, seed);
                });
    }

    static void roundTrip(CodingEngine e, int k, int m, int len, long seed) {
        boolean direct = e.needsDirectBuffers();
        ErasureCodec codec = new ErasureCodec(k, m, e);
        ByteBuffer[] data = randomData(k, len, seed, direct);
        ByteBuffer[] parity = cells(m, len, direct);
        codec.encode(data, parity);
        ByteBuffer[] parts = new ByteBuffer[k + m];
        System.arraycopy(data, 0, parts, 0, k);
        System.arraycopy(parity, 0, parts, k, m);
        List<byte[]> original = new ArrayList<>();
        for (ByteBuffer p : parts) original.add(bytes(p));
        SplittableRandom r = new SplittableRandom(seed ^ 0x5bd1e995L);
        int erase = r.nextInt(m + 1);
        boolean[] present = new boolean[k + m];
        java.util.Arrays.fill(present, true);
        for (int n = 0; n < erase; ) {
            int i = r.nextInt(k + m);
            if (!present[i]) continue;
            present[i] = false;
            byte[] junk = new byte[len];
            r.nextBytes(junk);
            parts[i].put(0, junk);
            n++;
        }
        codec.decode(parts, present);
        for (int i = 0; i < k + m; i++) {
            assertThat(bytes(parts[i])).as(e.name() + " " + k + "+" + m + " len " + len + " part " + i).isEqualTo(original.get(i));
        }
    }

    @Test void everyEngineGivesIdenticalParity() {
        List<CodingEngine> engines = Engines.available();
        Assumptions.assumeTrue(engines.size() > 1, "only the Java engine loads here");
        qt().withExamples(200).forAll(integers().between(1, 20), integers().between(1, 12), integers().between(1, 70_000), longs().all())
                .assuming((k, m, len, seed) -> k + m <= 32)
                .checkAssert((k, m, len, seed) -> {
                    byte[][] reference = null;
                    for (CodingEngine e : engines) {
                        ByteBuffer[] parity = cells(m, len, true);
                        new ErasureCodec(k, m, e).encode(randomData(k, len, seed, true), parity);
                        byte[][] got = new byte[m][];
                        for (int i = 0; i < m; i++) got[i] = bytes(parity[i]);
                        if (reference == null) reference = got;
                        else assertThat(got).as(e.name() + " vs " + engines.get(0).name() + " " + k + "+" + m + " len " + len).isEqualTo(reference);
                    }
                });
    }

    @Test void cellsAtOffsetsAreHonoured() {
        for (CodingEngine e : Engines.available()) {
            ByteBuffer big = ByteBuffer.allocateDirect(4 * 1024 + 64);
            ByteBuffer[] data = new ByteBuffer[2], parity = new ByteBuffer[1];
            for (int i = 0; i < 2; i++) {
                data[i] = big.duplicate().position(16 + i * 1024).limit(16 + i * 1024 + 1000);
                for (int b = 0; b < 1000; b++) data[i].put(data[i].position() + b, (byte) (b * (i + 3)));
            }
            parity[0] = big.duplicate().position(16 + 2 * 1024).limit(16 + 2 * 1024 + 1000);
            new ErasureCodec(2, 1, e).encode(data, parity);
            for (int b = 0; b < 1000; b++) {
                assertThat(parity[0].get(parity[0].position() + b)).isEqualTo((byte) ((b * 3) ^ (b * 4)));
            }
            assertThat(parity[0].position()).isEqualTo(16 + 2048);
        }
    }

    @Test void moreThanMErasuresFailClearlyAndTouchNothing() {
        ErasureCodec c = new ErasureCodec(4, 2, new JavaEngine());
        ByteBuffer[] parts = cells(6, 100, false);
        parts[0].put(0, (byte) 42);
        boolean[] present = {false, false, false, true, true, true};
        assertThatThrownBy(() -> c.decode(parts, present)).isInstanceOf(IllegalArgumentException.class).hasMessageContaining("only 3 of 6");
        assertThat(parts[0].get(0)).isEqualTo((byte) 42);
    }

    @Test void badArgumentsAreIllegalArgumentsNeverCrashes() {
        assertThatThrownBy(() -> new ErasureCodec(0, 1, new JavaEngine())).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> new ErasureCodec(1, 0, new JavaEngine())).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> new ErasureCodec(30, 3, new JavaEngine())).isInstanceOf(IllegalArgumentException.class).hasMessageContaining("32");
        ErasureCodec c = new ErasureCodec(3, 2, new JavaEngine());
        assertThatThrownBy(() -> c.encode(cells(2, 10, false), cells(2, 10, false))).isInstanceOf(IllegalArgumentException.class).hasMessageContaining("expected 3");
        ByteBuffer[] uneven = {ByteBuffer.allocate(10), ByteBuffer.allocate(10), ByteBuffer.allocate(11)};
        assertThatThrownBy(() -> c.encode(uneven, cells(2, 10, false))).isInstanceOf(IllegalArgumentException.class).hasMessageContaining("differ");
        assertThatThrownBy(() -> c.decode(cells(5, 10, false), new boolean[4])).isInstanceOf(IllegalArgumentException.class);
        for (CodingEngine e : Engines.available()) {
            if (!e.needsDirectBuffers()) continue;
            ErasureCodec n = new ErasureCodec(3, 2, e);
            assertThatThrownBy(() -> n.encode(cells(3, 64, false), cells(2, 64, true))).isInstanceOf(IllegalArgumentException.class).hasMessageContaining("direct");
        }
    }

    @Test void jerasureRefusesIncongruentBuffersInsteadOfAborting() {
        dev.cairn.core.ec.CodingEngine j = Engines.named("jerasure");
        Assumptions.assumeTrue(j != null, "jerasure not loadable here");
        ByteBuffer a = ByteBuffer.allocateDirect(256), b = ByteBuffer.allocateDirect(256).position(3).limit(131);
        ByteBuffer[] data = {a.limit(128), b};
        assertThatThrownBy(() -> new ErasureCodec(2, 1, j).encode(data, cells(1, 128, true)))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("modulo 16");
    }
}
