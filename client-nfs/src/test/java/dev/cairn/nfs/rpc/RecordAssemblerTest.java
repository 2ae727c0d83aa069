package dev.cairn.nfs.rpc;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** Record marking: any split of the stream into reads and of records into fragments gives back the records. */
class RecordAssemblerTest {
    @ParameterizedTest
    @ValueSource(longs = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16})
    void recordsSurviveAnyFragmentationAndAnyReadSizes(long seed) {
        SplittableRandom r = new SplittableRandom(seed);
        List<byte[]> records = new ArrayList<>();
        ByteArrayOutputStream stream = new ByteArrayOutputStream();
        for (int i = 0; i < 20; i++) {
            byte[] rec = new byte[r.nextInt(5000)];
            r.nextBytes(rec);
            records.add(rec);
            int off = 0;
            do { // fragments of random sizes, empty ones included
                int len = Math.min(rec.length - off, r.nextInt(1500));
                boolean last = off + len == rec.length && r.nextInt(4) != 0;
                stream.writeBytes(RecordAssembler.fragment(rec, off, len, last));
                off += len;
                if (last) break;
            } while (true);
        }
        byte[] all = stream.toByteArray();
        RecordAssembler a = new RecordAssembler(8192);
        List<byte[]> got = new ArrayList<>();
        for (int i = 0; i < all.length; ) {
            int n = Math.min(all.length - i, 1 + r.nextInt(700));
            got.addAll(a.feed(all, i, n));
            i += n;
        }
        assertThat(a.poisoned()).isNull();
        assertThat(got).hasSize(records.size());
        for (int i = 0; i < records.size(); i++) assertThat(got.get(i)).isEqualTo(records.get(i));
    }

    @Test void aRecordOverTheLimitPoisonsTheStreamWithoutBufferingIt() {
        RecordAssembler a = new RecordAssembler(1000);
        byte[] header = {(byte) 0x80, 0, 0x10, 0}; // claims 4096 bytes
        assertThat(a.feed(header, 0, 4)).isEmpty();
        assertThat(a.poisoned()).contains("record of more than 1000 bytes");
        assertThat(a.buffered()).isZero();
        // fragments adding up past the limit are caught too
        RecordAssembler b = new RecordAssembler(1000);
        byte[] part = RecordAssembler.fragment(new byte[600], 0, 600, false);
        b.feed(part, 0, part.length);
        assertThat(b.poisoned()).isNull();
        b.feed(part, 0, part.length);
        assertThat(b.poisoned()).isNotNull();
        assertThat(b.buffered()).isLessThanOrEqualTo(1000);
    }

    /**
     * A record's only fragment is buffered at its claimed size once bytes follow its header (so a 1 MiB WRITE is
     * copied once): a header alone costs nothing, and a lying one costs what the whole record would, never more
     * than the limit (the server bounds the sum over connections and closes stalled records).
     */
    @Test void aLyingHeaderCostsNothingUntilBytesFollowAndNeverMoreThanTheRecordLimit() {
        RecordAssembler a = new RecordAssembler(1 << 20);
        byte[] header = {(byte) 0x80, 0x0f, 0, 0}; // claims 983040 bytes, sends 10
        a.feed(header, 0, 4);
        assertThat(a.buffered()).isZero();
        a.feed(new byte[10], 0, 10);
        assertThat(a.buffered()).isEqualTo(983040);
        // a record of several fragments grows with what arrives
        RecordAssembler b = new RecordAssembler(1 << 20);
        byte[] first = {0, 0x0f, 0, 0}; // not the last fragment
        b.feed(first, 0, 4);
        b.feed(new byte[10], 0, 10);
        assertThat(b.buffered()).isLessThan(64);
    }

    @Test void aRecordFedInPiecesIsCopiedIntoOneBufferOfItsSize() {
        RecordAssembler a = new RecordAssembler(2 << 20);
        byte[] payload = new byte[1 << 20];
        new java.util.SplittableRandom(3).nextBytes(payload);
        byte[] framed = RecordAssembler.frame(payload);
        List<byte[]> got = new java.util.ArrayList<>();
        for (int i = 0; i < framed.length; i += 65536) {
            got.addAll(a.feed(java.nio.ByteBuffer.wrap(framed, i, Math.min(65536, framed.length - i))));
            if (got.isEmpty()) assertThat(a.buffered()).isEqualTo(payload.length);
        }
        assertThat(got).hasSize(1);
        assertThat(got.get(0)).isEqualTo(payload);
    }

    @Test void endlessEmptyFragmentsAreCut() {
        RecordAssembler a = new RecordAssembler(1000);
        byte[] empty = RecordAssembler.fragment(new byte[0], 0, 0, false);
        for (int i = 0; i <= RecordAssembler.MAX_FRAGMENTS; i++) a.feed(empty, 0, 4);
        assertThat(a.poisoned()).contains("fragments");
    }
}
