package dev.cairn.sim.runtime;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Arrays;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/**
 * The paged, copy-on-write {@link SimFile} against the plain model it replaced (two flat arrays): random
 * writes (across pages, past the end, leaving holes), syncs, failed syncs, bit flips and power losses with
 * and without torn writes, over many seeds. A torn write draws from the same random stream in both, so
 * the model also pins which sectors tear and how (the simulator's traces depend on it).
 */
class SimFileTest {
    /** The flat model: the volatile bytes and the durable ones, copied on every sync. */
    static final class Flat {
        byte[] current = new byte[0];
        byte[] durable = new byte[0];

        void write(long offset, byte[] data) {
            int end = (int) offset + data.length;
            if (end > current.length) current = Arrays.copyOf(current, end);
            System.arraycopy(data, 0, current, (int) offset, data.length);
        }

        void flip(long offset, int bit) {
            if (offset < current.length) current[(int) offset] ^= (byte) (1 << bit);
            if (offset < durable.length) durable[(int) offset] ^= (byte) (1 << bit);
        }

        void tear(SplittableRandom rnd) {
            byte[] old = durable;
            int len = rnd.nextBoolean() ? current.length : old.length;
            byte[] out = Arrays.copyOf(old, len);
            for (int s = 0; s < len; s += SimDisk.SECTOR) {
                int e = Math.min(len, s + SimDisk.SECTOR);
                boolean changed = e > old.length || e > current.length || !Arrays.equals(old, s, e, current, s, e);
                if (!changed) continue;
                int dice = rnd.nextInt(s >= old.length ? 4 : 3);
                if (dice == 0) continue;
                int split = dice == 2 ? s + rnd.nextInt(e - s) : e;
                for (int i = s; i < split; i++) out[i] = dice <= 2 ? (i < current.length ? current[i] : 0) : (byte) rnd.nextInt(256);
            }
            durable = out;
        }
    }

    @Test void behavesAsTwoFlatCopiesWouldUnderRandomWritesSyncsFlipsAndPowerLoss() {
        for (long seed = 1; seed <= 300; seed++) {
            SplittableRandom r = new SplittableRandom(seed);
            SimFile f = new SimFile();
            Flat m = new Flat();
            for (int step = 0; step < 60; step++) {
                switch (r.nextInt(10)) {
                    case 0, 1, 2, 3 -> {
                        // offsets around page and sector edges, some past the end (a hole)
                        long offset = r.nextInt(4) == 0 ? r.nextInt(5 * SimFile.PAGE) : Math.max(0, m.current.length - r.nextInt(300));
                        byte[] data = new byte[r.nextInt(3 * SimFile.PAGE)];
                        // some writes are zeros in part or whole (padding, holes filled): they make no page
                        int zerosFrom = r.nextInt(3) == 0 ? r.nextInt(data.length + 1) : data.length;
                        r.nextBytes(data);
                        java.util.Arrays.fill(data, zerosFrom, data.length, (byte) 0);
                        f.write(offset, data);
                        m.write(offset, data);
                    }
                    case 4, 5 -> {
                        f.sync();
                        m.durable = m.current.clone();
                    }
                    case 6 -> { // a failed fsync drops the dirty pages
                        f.revert();
                        m.current = m.durable.clone();
                    }
                    case 7 -> {
                        long at = r.nextInt(Math.max(1, Math.max(m.current.length, m.durable.length)));
                        int bit = r.nextInt(8);
                        f.flipBit(at, bit);
                        m.flip(at, bit);
                    }
                    default -> { // power loss, torn half the time
                        if (r.nextBoolean()) {
                            long s = r.nextLong();
                            f.tear(new SplittableRandom(s));
                            m.tear(new SplittableRandom(s));
                        }
                        f.revert();
                        m.current = m.durable.clone();
                    }
                }
                assertThat(f.length()).as("seed %d step %d", seed, step).isEqualTo(m.current.length);
                assertThat(f.durableLength()).isEqualTo(m.durable.length);
                assertThat(f.currentCopy()).as("seed %d step %d", seed, step).isEqualTo(m.current);
                assertThat(f.durableCopy()).as("seed %d step %d", seed, step).isEqualTo(m.durable);
                int from = r.nextInt(m.current.length + 1), n = r.nextInt(2 * SimFile.PAGE);
                assertThat(f.read(from, n)).isEqualTo(Arrays.copyOfRange(m.current, from, Math.min(m.current.length, from + n)));
                // checksums: the whole file in whole pages (remembered, then reused after the next step's changes
                // if the page did not change), and a random range that may start mid-page and run past the end
                int whole = (m.current.length + SimFile.PAGE - 1) / SimFile.PAGE * SimFile.PAGE;
                assertThat(f.crc32c(0, whole)).as("seed %d step %d", seed, step).isEqualTo(crc(m.current, 0, whole));
                assertThat(f.crc32c(from, n)).as("seed %d step %d", seed, step).isEqualTo(crc(m.current, from, n));
                // the durable view's checksums (the checkers' durable reads), whole pages and a random range
                int durableWhole = (m.durable.length + SimFile.PAGE - 1) / SimFile.PAGE * SimFile.PAGE;
                assertThat(f.durableCrc32c(0, durableWhole)).as("seed %d step %d durable", seed, step).isEqualTo(crc(m.durable, 0, durableWhole));
                SplittableRandom r2 = new SplittableRandom(seed * 1000 + step); // its own draws: the steps stay those of the flat-model sweep
                int dFrom = r2.nextInt(m.durable.length + 1);
                assertThat(f.durableCrc32c(dFrom, n)).as("seed %d step %d durable range", seed, step).isEqualTo(crc(m.durable, dFrom, n));
                byte[] into = new byte[n];
                int got = f.readDurableInto(dFrom, into, 0, n);
                assertThat(Arrays.copyOf(into, got)).isEqualTo(Arrays.copyOfRange(m.durable, dFrom, Math.min(m.durable.length, dFrom + n)));
                // compared in place: every byte of the range (zeros past the end) against the model's
                byte[] want = Arrays.copyOfRange(m.durable, dFrom, dFrom + n);
                long mis = f.durableMismatch(dFrom, n, (b, at, len, pos) -> Arrays.mismatch(b, at, at + len, want, (int) pos, (int) pos + len));
                assertThat(mis).as("seed %d step %d in-place compare", seed, step).isEqualTo(-1);
                if (n > 0) {
                    int flip = r2.nextInt(n);
                    want[flip] ^= 1;
                    assertThat(f.durableMismatch(dFrom, n, (b, at, len, pos) -> Arrays.mismatch(b, at, at + len, want, (int) pos, (int) pos + len)))
                            .isEqualTo(flip);
                }
                int block = 1 + r.nextInt(3 * SimFile.PAGE);
                int[] crcs = f.checksums(from, n, block);
                assertThat(crcs).hasSize((n + block - 1) / block);
                for (int i = 0; i < crcs.length; i++) assertThat(crcs[i]).isEqualTo(crc(m.current, from + i * block, Math.min(block, n - i * block)));
            }
        }
    }

    /** The CRC32C of {@code n} bytes of {@code b} at {@code from}, zeros past its end. */
    static int crc(byte[] b, int from, int n) {
        java.util.zip.CRC32C c = new java.util.zip.CRC32C();
        c.update(from >= b.length ? new byte[n] : Arrays.copyOfRange(b, from, from + n));
        return (int) c.getValue();
    }
}
