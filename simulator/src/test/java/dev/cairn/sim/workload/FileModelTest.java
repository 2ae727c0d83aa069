package dev.cairn.sim.workload;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/**
 * The file model against brute force: a byte array per possible outcome is too many, so the brute force
 * keeps the acknowledged bytes and, per byte, every value a pending or maybe op could have put there.
 * Seeded sweeps of writes, truncates, acknowledgements and abandonments; then reads that are right and reads
 * with one wrong byte.
 */
class FileModelTest {
    /** The brute force: acknowledged bytes, and the ops whose outcome is open. */
    static final class Brute {
        byte[] acked = new byte[0];
        final List<FileModel.Op> open = new ArrayList<>();

        void fold(FileModel.Op op) {
            if (op.truncate()) {
                acked = Arrays.copyOf(acked, (int) op.offset());
                return;
            }
            if (op.end() > acked.length) acked = Arrays.copyOf(acked, (int) op.end());
            for (long x = op.offset(); x < op.end(); x++) acked[(int) x] = Oracle.valueAt(op.seed(), x);
        }

        boolean allowed(long x, byte b) {
            if ((x < acked.length ? acked[(int) x] : 0) == b) return true;
            for (FileModel.Op op : open) {
                if (op.truncate() ? op.offset() <= x && b == 0 : op.offset() <= x && x < op.end() && Oracle.valueAt(op.seed(), x) == b) return true;
            }
            return false;
        }
    }

    @Test void readsAreJudgedAsTheBruteForceJudgesThem() {
        for (int seed = 0; seed < 400; seed++) {
            SplittableRandom r = new SplittableRandom(seed);
            FileModel m = new FileModel();
            Brute b = new Brute();
            List<FileModel.Op> pending = new ArrayList<>();
            for (int step = 0; step < 40; step++) {
                int dice = r.nextInt(10);
                if (dice < 5) {
                    long off = r.nextInt(3000), len = r.nextInt(1, 900);
                    pending.add(m.write(off, len, r.nextLong()));
                } else if (dice == 5) {
                    pending.add(m.truncate(r.nextInt(3500)));
                } else if (dice < 8) {
                    for (FileModel.Op op : pending) b.fold(op);
                    pending.clear();
                    m.acknowledgeAll();
                } else if (dice == 8 && !pending.isEmpty()) {
                    int k = r.nextInt(pending.size());
                    m.acknowledgeThrough(pending.get(k));
                    for (int i = 0; i <= k; i++) b.fold(pending.get(i));
                    pending.subList(0, k + 1).clear();
                } else if (dice == 9) {
                    b.open.addAll(pending);
                    pending.clear();
                    m.abandonPending();
                }
                List<FileModel.Op> openNow = new ArrayList<>(b.open);
                openNow.addAll(pending);
                Brute judge = new Brute();
                judge.acked = b.acked;
                judge.open.addAll(openNow);
                assertThat(m.ackedLength()).isEqualTo(b.acked.length);
                assertThat(m.ackedBytes(0, b.acked.length)).isEqualTo(b.acked);
                // a read of the acknowledged content is right; so is one with a byte a pending op explains
                int from = r.nextInt(b.acked.length + 1);
                int n = r.nextInt(b.acked.length - from + 1);
                byte[] got = Arrays.copyOfRange(b.acked, from, from + n);
                assertThat(m.mismatch(from, got, 0, n)).as("seed %d step %d: the acknowledged bytes", seed, step).isEqualTo(-1);
                if (n > 0) {
                    int at = r.nextInt(n);
                    got[at] = (byte) r.nextInt(256);
                    long want = -1;
                    for (int i = 0; i < n; i++) if (!judge.allowed(from + i, got[i])) { want = from + i; break; }
                    assertThat(m.mismatch(from, got, 0, n)).as("seed %d step %d: byte %d changed (%s)", seed, step, from + at, m).isEqualTo(want);
                }
                assertThat(m.determined(0, Long.MAX_VALUE)).isEqualTo(openNow.isEmpty());
            }
        }
    }

    @Test void aWholeReadMustHaveALengthTheFileCanHave() {
        FileModel m = new FileModel();
        m.write(0, 100, 7);
        m.acknowledgeAll();
        m.write(100, 50, 8); // pending: may or may not be in the file yet
        assertThat(m.check(Oracle.content(7, 100))).isNull();
        byte[] both = Arrays.copyOf(Oracle.content(7, 100), 150);
        System.arraycopy(Oracle.content(8, 100, 50), 0, both, 100, 50);
        assertThat(m.check(both)).isNull();
        assertThat(m.check(Oracle.content(7, 99))).contains("at least 100");
        assertThat(m.check(Arrays.copyOf(both, 151))).contains("at most 150");
        m.abandonPending();
        m.truncate(40);
        m.acknowledgeAll();
        assertThat(m.check(Oracle.content(7, 40))).isNull();
        assertThat(m.check(Oracle.content(7, 41))).isNotNull();
    }

    /**
     * A read may overlap an overwrite acknowledged while it runs (sim seed 12200: a read begun before an update,
     * ended after its commit): each byte may be as it was when the read began or as the overwrite made it. A read
     * begun after the acknowledgement may not return the old bytes, nor a mix with bytes never written.
     */
    @Test void aReadOverlappingAnAcknowledgedOverwriteMaySeeEitherButAReadAfterItMayNot() {
        FileModel m = new FileModel();
        m.write(0, 100, 7);
        m.acknowledgeAll();
        FileModel.Read during = m.beginRead();
        m.write(40, 20, 9);
        m.acknowledgeAll();
        byte[] old = Oracle.content(7, 100), now = Arrays.copyOf(old, 100);
        System.arraycopy(Oracle.content(9, 40, 20), 0, now, 40, 20);
        byte[] half = Arrays.copyOf(old, 100);
        System.arraycopy(Oracle.content(9, 50, 10), 0, half, 50, 10); // the overwrite's second half only: read in two pieces
        assertThat(m.check(old, during)).as("read before the overwrite landed").isNull();
        FileModel.Read again = m.beginRead();
        m.write(0, 10, 11); // pending during this read
        assertThat(m.check(half, again)).as("a read begun after the acknowledgement sees it").isNotNull();
        FileModel.Read third = m.beginRead();
        assertThat(m.check(now, third)).isNull();
        FileModel.Read fourth = m.beginRead();
        byte[] wrong = Arrays.copyOf(now, 100);
        wrong[45] ^= 1;
        assertThat(m.check(wrong, fourth)).as("a byte neither state holds").contains("offset 45");
        FileModel.Read fifth = m.beginRead();
        m.truncate(30);
        m.acknowledgeAll();
        assertThat(m.check(now, fifth)).as("the length before a truncate acknowledged meanwhile").isNull();
        assertThat(m.check(now)).as("a read after it").contains("at most 30");
    }
}
