package dev.cairn.nfs.rpc;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/** The 4.0 reply cache: one run per call, retransmissions answered or dropped, bounded whatever the peers send. */
class DuplicateRequestCacheTest {
    final DuplicateRequestCache cache = new DuplicateRequestCache();

    static byte[] record(int n) { return new byte[] {(byte) n, (byte) (n >> 8), (byte) (n >> 16), 1}; }

    @Test void aCallRunsOnceItsRetransmissionsAreDroppedThenAnswered() {
        var first = cache.check("10.0.0.1", 5, record(1));
        assertThat(first).isInstanceOf(DuplicateRequestCache.Run.class);
        assertThat(cache.check("10.0.0.1", 5, record(1))).as("while the first runs").isInstanceOf(DuplicateRequestCache.Drop.class);
        cache.done(((DuplicateRequestCache.Run) first).key(), new byte[] {7});
        assertThat(((DuplicateRequestCache.Answer) cache.check("10.0.0.1", 5, record(1))).reply()).containsExactly(7);
        assertThat(cache.check("10.0.0.2", 5, record(1))).as("another peer").isInstanceOf(DuplicateRequestCache.Run.class);
        assertThat(cache.check("10.0.0.1", 5, record(2))).as("another call reusing the xid").isInstanceOf(DuplicateRequestCache.Run.class);
    }

    @Test void boundedInEntriesAndBytesAndLargeRepliesAreNotKept() {
        for (int i = 0; i < DuplicateRequestCache.MAX_ENTRIES * 3; i++) {
            var v = (DuplicateRequestCache.Run) cache.check("p", i, record(i));
            cache.done(v.key(), new byte[DuplicateRequestCache.MAX_ENTRY_BYTES]);
            assertThat(cache.size()).isLessThanOrEqualTo(DuplicateRequestCache.MAX_ENTRIES);
            assertThat(cache.bytes()).isLessThanOrEqualTo(DuplicateRequestCache.MAX_BYTES);
        }
        var big = (DuplicateRequestCache.Run) cache.check("p", -1, record(-1));
        cache.done(big.key(), new byte[DuplicateRequestCache.MAX_ENTRY_BYTES + 1]);
        assertThat(cache.check("p", -1, record(-1))).as("runs again").isInstanceOf(DuplicateRequestCache.Run.class);
        var dropped = (DuplicateRequestCache.Run) cache.check("q", 1, record(1));
        cache.done(dropped.key(), null);
        assertThat(cache.check("q", 1, record(1))).isInstanceOf(DuplicateRequestCache.Run.class);
    }
}
