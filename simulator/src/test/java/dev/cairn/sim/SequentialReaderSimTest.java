package dev.cairn.sim;

import static org.assertj.core.api.Assertions.assertThat;

import dev.cairn.client.CairnClient;
import dev.cairn.client.SequentialReader;
import dev.cairn.core.proto.ChunkProtocol.ReadData;
import dev.cairn.core.proto.StorageClass;
import dev.cairn.core.proto.Types.FileAttr;
import dev.cairn.sim.runtime.SimHost;
import java.io.ByteArrayOutputStream;
import java.util.Arrays;
import org.junit.jupiter.api.Test;

/**
 * {@code ./cairn get}'s read-ahead ({@link SequentialReader}) in the simulator: pieces handed over in order and whole,
 * reads really ahead and never more than the window, through a copy dying mid-read and through the file moving to
 * another class (and so another piece layout) under the reader.
 */
class SequentialReaderSimTest extends ClusterScenario {
    /** Reads in flight to chunkservers now, and the most seen at once. */
    int inFlight, mostInFlight;

    void countReads() {
        sim.onDeliver((to, m) -> {
            if (m instanceof ReadData) mostInFlight = Math.max(mostInFlight, ++inFlight);
            else if (m instanceof dev.cairn.core.proto.ChunkProtocol.DataReply) inFlight--;
        });
    }

    SequentialReader reader(String path) {
        CairnClient client = c.client();
        FileAttr attr = run(() -> client.lookup(path));
        return run(() -> dev.cairn.core.async.Promise.completed(new SequentialReader(client.reader(attr), attr.size())));
    }

    /** The rest of the file through {@code r}, each piece non-empty, after {@code have}. */
    byte[] drain(SequentialReader r, ByteArrayOutputStream have, long size) {
        while (r.position() < size) {
            long at = r.position();
            byte[] b = run(r::next);
            assertThat(b.length).as("a piece at " + at).isPositive();
            assertThat(r.position()).isEqualTo(at + b.length);
            have.writeBytes(b);
        }
        assertThat(run(r::next)).as("past the end").isEmpty();
        return have.toByteArray();
    }

    @Test void aReplicatedFileReadsAheadWithinItsWindowAndThroughACopyThatDies() {
        cluster(4);
        countReads();
        int size = 22 * CHUNK + 12345; // more than the window: it refills as pieces are taken
        byte[] data = write("/r", StorageClass.replicated(2), size, 5);
        SequentialReader r = reader("/r");
        ByteArrayOutputStream got = new ByteArrayOutputStream();
        got.writeBytes(run(r::next));
        assertThat(mostInFlight).as("reads issued ahead of the first piece taken").isGreaterThan(4);
        // a server holding copies dies mid-read: the reads on it go to the other copies
        SimHost victim = c.chunkservers().get(0);
        victim.crash();
        byte[] back = drain(r, got, size);
        assertThat(Arrays.equals(back, data)).as("bytes in order").isTrue();
        assertThat(mostInFlight).as("reads in flight at most").isLessThanOrEqualTo(SequentialReader.WINDOW_PIECES);
        assertThat(mostInFlight * (long) CHUNK).as("bytes in flight at most").isLessThanOrEqualTo(SequentialReader.WINDOW_BYTES);
        assertThat(sim.violations()).isEmpty();
    }

    @Test void anErasureCodedFileReadsACellAtATimeDegradedToo() {
        cluster(4);
        int size = 5 * CHUNK + 777;
        byte[] data = write("/e", StorageClass.ec(2, 1), size, 6);
        c.chunkservers().get(1).crash();
        byte[] back = drain(reader("/e"), new ByteArrayOutputStream(), size);
        assertThat(Arrays.equals(back, data)).isTrue();
        assertThat(sim.violations()).isEmpty();
    }

    /**
     * The file is archived (rewritten from replicas into erasure-coded parts) between two pieces: the reads issued
     * after it ask for a MiB and come back a cell long, and the reader reads on from where each stopped.
     */
    @Test void aFileThatChangesClassUnderTheReaderReadsTheSame() {
        cluster(5);
        StorageClass hot = StorageClass.parse("replicated(2,archive=ec(3,2),after=60s)");
        int size = 24 * CHUNK + 4321;
        byte[] data = write("/a", hot, size, 7);
        SequentialReader r = reader("/a");
        ByteArrayOutputStream got = new ByteArrayOutputStream();
        got.writeBytes(run(r::next));
        await(180, () -> info("/a").attr().storageClass().equals(StorageClass.ec(3, 2)), "/a archived as ec(3,2)");
        // the replicas are gone once the parts are in: no read can be answered from the old layout
        await(60, () -> info("/a").chunks().stream().allMatch(ch -> ch.copies().size() == 5), "old replicas deleted");
        byte[] back = drain(r, got, size);
        assertThat(Arrays.equals(back, data)).isTrue();
        assertThat(sim.violations()).isEmpty();
    }
}
