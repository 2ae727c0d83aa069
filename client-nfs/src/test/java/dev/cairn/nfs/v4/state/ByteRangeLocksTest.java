package dev.cairn.nfs.v4.state;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.HashMap;
import java.util.Map;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/** Byte-range locks against a model that keeps one lock state per byte, over seeded random sequences. */
class ByteRangeLocksTest {
    static final int BYTES = 48; // a small file, so ranges overlap often; the last byte stands in for "to the end"
    static final int SEEDS = 300;
    static final int STEPS = 200;
    static final ByteRangeLocks.Owner A = new ByteRangeLocks.Owner(1, "aa");
    static final ByteRangeLocks.Owner B = new ByteRangeLocks.Owner(1, "bb");
    static final ByteRangeLocks.Owner C = new ByteRangeLocks.Owner(2, "aa"); // another client, same owner name
    static final ByteRangeLocks.Owner[] OWNERS = {A, B, C};

    /** Per owner, per byte: 0 unlocked, 1 read, 2 write. */
    static final class Model {
        final Map<ByteRangeLocks.Owner, int[]> held = new HashMap<>();

        int[] of(ByteRangeLocks.Owner o) { return held.computeIfAbsent(o, k -> new int[BYTES]); }

        boolean conflicts(ByteRangeLocks.Owner o, boolean write, int first, int last) {
            for (var e : held.entrySet()) {
                if (e.getKey().equals(o)) continue;
                for (int i = first; i <= last; i++) if (e.getValue()[i] == 2 || (write && e.getValue()[i] == 1)) return true;
            }
            return false;
        }

        void set(ByteRangeLocks.Owner o, int first, int last, int v) {
            for (int i = first; i <= last; i++) of(o)[i] = v;
        }
    }

    @Test void locksBehaveLikeAPerByteModel() {
        for (int seed = 1; seed <= SEEDS; seed++) {
            SplittableRandom r = new SplittableRandom(seed);
            ByteRangeLocks locks = new ByteRangeLocks();
            Model m = new Model();
            for (int step = 0; step < STEPS; step++) {
                ByteRangeLocks.Owner o = OWNERS[r.nextInt(OWNERS.length)];
                int first = r.nextInt(BYTES);
                int last = r.nextInt(5) == 0 ? BYTES - 1 : first + r.nextInt(BYTES - first);
                long lastByte = last == BYTES - 1 ? ByteRangeLocks.LAST_BYTE : last;
                String at = "seed " + seed + " step " + step + " " + o + " " + first + ".." + last;
                switch (r.nextInt(3)) {
                    case 0, 1 -> {
                        boolean write = r.nextBoolean();
                        ByteRangeLocks.Range c = locks.conflict(7, o, write, first, lastByte);
                        assertThat(c != null).as(at + " conflict").isEqualTo(m.conflicts(o, write, first, last));
                        if (c != null) {
                            assertThat(c.owner()).isNotEqualTo(o);
                            assertThat(c.write() || write).isTrue();
                        } else {
                            assertThat(locks.lock(7, o, write, first, lastByte)).isTrue();
                            m.set(o, first, last, write ? 2 : 1);
                        }
                    }
                    default -> {
                        locks.unlock(7, o, first, lastByte);
                        m.set(o, first, last, 0);
                    }
                }
                check(locks, m, at);
            }
        }
    }

    /** The ranges held equal the model byte for byte; they are disjoint per owner, and touching ones differ in type. */
    private static void check(ByteRangeLocks locks, Model m, String at) {
        Map<ByteRangeLocks.Owner, int[]> seen = new HashMap<>();
        for (ByteRangeLocks.Range range : locks.ranges(7)) {
            int[] bytes = seen.computeIfAbsent(range.owner(), k -> new int[BYTES]);
            int last = range.last() == ByteRangeLocks.LAST_BYTE ? BYTES - 1 : (int) range.last();
            for (int i = (int) range.first(); i <= last; i++) {
                assertThat(bytes[i]).as(at + ": ranges of one owner overlap at " + i).isZero();
                bytes[i] = range.write() ? 2 : 1;
            }
        }
        for (ByteRangeLocks.Owner o : OWNERS) {
            int[] expected = m.of(o), actual = seen.getOrDefault(o, new int[BYTES]);
            assertThat(actual).as(at + ": locks of " + o).isEqualTo(expected);
            assertThat(locks.holds(7, o)).isEqualTo(java.util.Arrays.stream(expected).anyMatch(v -> v != 0));
        }
        int count = 0;
        for (ByteRangeLocks.Range range : locks.ranges(7)) {
            count++;
            for (ByteRangeLocks.Range other : locks.ranges(7)) {
                if (other == range || !other.owner().equals(range.owner()) || other.write() != range.write()) continue;
                assertThat(range.last() != ByteRangeLocks.LAST_BYTE && range.last() + 1 == other.first())
                        .as(at + ": touching ranges of one type were not merged").isFalse();
            }
        }
        assertThat(locks.size()).isEqualTo(count);
    }

    @Test void rangesAreValidatedAsNfsSays() {
        assertThat(ByteRangeLocks.lastByte(0, 0)).isNull();
        assertThat(ByteRangeLocks.lastByte(10, ByteRangeLocks.TO_EOF)).isEqualTo(ByteRangeLocks.LAST_BYTE);
        assertThat(ByteRangeLocks.lastByte(-2, 2)).isEqualTo(-1L); // up to 2^64 - 1 exactly
        assertThat(ByteRangeLocks.lastByte(-2, 3)).isNull(); // past it
        assertThat(ByteRangeLocks.lastByte(100, 10)).isEqualTo(109L);
        assertThat(new ByteRangeLocks.Range(A, 5, ByteRangeLocks.LAST_BYTE, true).length()).isEqualTo(ByteRangeLocks.TO_EOF);
    }

    @Test void aClientsLocksGoWithIt() {
        ByteRangeLocks locks = new ByteRangeLocks();
        locks.lock(1, A, true, 0, 9);
        locks.lock(2, B, false, 0, 9);
        locks.lock(2, C, false, 0, 9);
        assertThat(locks.dropClient(1)).isEqualTo(2);
        assertThat(locks.holdsAny(A)).isFalse();
        assertThat(locks.conflict(2, A, true, 0, 0)).isEqualTo(new ByteRangeLocks.Range(C, 0, 9, false));
        assertThat(locks.size()).isEqualTo(1);
    }
}
