package dev.cairn.nfs.fs;

import static org.assertj.core.api.Assertions.assertThat;

import dev.cairn.nfs.real.NfsTcpServer;
import org.junit.jupiter.api.Test;

/** The gateway's bounds sized to its heap: the defaults at full size, in proportion below, always in order. */
class ClusterFsMemoryTest {
    static final long MIB = 1 << 20;

    @Test void theDefaultsAtTheFullHeapAndAboveHalfAtHalfAQuarterAtMost() {
        assertThat(ClusterFs.Memory.forHeap(ClusterFs.Memory.FULL_HEAP_BYTES)).isEqualTo(ClusterFs.Memory.DEFAULT);
        assertThat(ClusterFs.Memory.forHeap(8L << 30)).isEqualTo(ClusterFs.Memory.DEFAULT);
        ClusterFs.Memory half = ClusterFs.Memory.forHeap(ClusterFs.Memory.FULL_HEAP_BYTES / 2);
        assertThat(half).isEqualTo(new ClusterFs.Memory(64 * MIB, 32 * MIB, 16 * MIB, 64 * MIB));
        assertThat(ClusterFs.Memory.forHeap(16 * MIB)).as("not below a quarter")
                .isEqualTo(new ClusterFs.Memory(32 * MIB, 16 * MIB, 8 * MIB, 32 * MIB));
        assertThat(NfsTcpServer.Limits.forHeap(ClusterFs.Memory.FULL_HEAP_BYTES)).isEqualTo(NfsTcpServer.DEFAULT_LIMITS);
        assertThat(NfsTcpServer.Limits.forHeap(ClusterFs.Memory.FULL_HEAP_BYTES / 2).maxCallBytes()).isEqualTo(64 * MIB);
    }

    /** Every heap from 1 MiB to 4 GiB (seeded steps) gives bounds in order, whole MiB, never above the defaults, growing with the heap. */
    @Test void boundsGrowWithTheHeapAndStayInOrder() {
        java.util.SplittableRandom r = new java.util.SplittableRandom(7);
        ClusterFs.Memory before = ClusterFs.Memory.forHeap(MIB);
        long callsBefore = NfsTcpServer.Limits.forHeap(MIB).maxCallBytes();
        for (long heap = MIB; heap < (4L << 30); heap += 1 + r.nextLong(16 * MIB)) {
            ClusterFs.Memory m = ClusterFs.Memory.forHeap(heap);
            long calls = NfsTcpServer.Limits.forHeap(heap).maxCallBytes();
            String what = "heap " + heap;
            assertThat(m.flushFileBytes()).as(what).isPositive().isLessThanOrEqualTo(m.fileHeldBytes());
            assertThat(m.fileHeldBytes()).as(what).isLessThanOrEqualTo(m.heldBytes());
            assertThat(m.heldBytes() % MIB).as(what).isZero();
            assertThat(m.heldBytes()).as(what).isLessThanOrEqualTo(ClusterFs.MAX_HELD_BYTES).isGreaterThanOrEqualTo(before.heldBytes());
            assertThat(m.imageBytes()).as(what).isLessThanOrEqualTo(ClusterFs.MAX_IMAGE_BYTES).isGreaterThanOrEqualTo(before.imageBytes());
            assertThat(calls).as(what).isLessThanOrEqualTo(NfsTcpServer.MAX_CALL_BYTES).isGreaterThanOrEqualTo(callsBefore)
                    .isGreaterThanOrEqualTo(NfsTcpServer.CALL_RESERVE_BYTES);
            before = m;
            callsBefore = calls;
        }
    }
}
