package dev.cairn.sim;

import static org.assertj.core.api.Assertions.assertThat;

import dev.cairn.client.CairnClient;
import dev.cairn.core.chunk.ChunkFormat;
import dev.cairn.core.proto.MasterProtocol.ChunkInfo;
import dev.cairn.core.proto.StorageClass;
import dev.cairn.core.proto.Types.FileAttr;
import dev.cairn.sim.runtime.SimHost;
import dev.cairn.sim.workload.Oracle;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The auditor's durability check: what it must flag, and what it must not. */
class AuditorSimTest extends ClusterScenario {
    /**
     * A file whose first chunk is acknowledged and whose second was uploaded (twice: at v2) but never
     * committed: losing every copy of the second loses nothing acknowledged (sweep seed 803 was flagged for
     * it), losing every copy of the first is a durability violation.
     */
    @Test void onlyAChunkHoldingAcknowledgedBytesIsADurabilityFindingWhenLost() {
        cluster(3);
        write("/f", StorageClass.replicated(3), CHUNK, 1);
        CairnClient client = c.client();
        FileAttr f = run(() -> client.lookup("/f"));
        byte[] image = Oracle.content(2, 100_000);
        dev.cairn.client.Uncommitted versions = new dev.cairn.client.Uncommitted();
        run(() -> client.writeChunk(f, 1, image, versions));
        run(() -> client.writeChunk(f, 1, image, versions)); // a second lease: v2, no longer "new"
        List<ChunkInfo> chunks = info("/f").chunks();
        assertThat(chunks).hasSize(2);
        assertThat(chunks.get(1).version()).isEqualTo(2);
        assertThat(run(() -> client.lookup("/f")).size()).as("the second chunk holds nothing acknowledged").isEqualTo(CHUNK);
        Oracle oracle = new Oracle();
        oracle.created("/f").write(0, CHUNK, 1);
        oracle.model("/f").acknowledgeAll();
        Holdings holdings = new Holdings();
        Auditor auditor = new Auditor(c, new LossModel(c, oracle, holdings), oracle, holdings);
        assertThat(auditor.audit(true).findings()).as("every current copy holds the acknowledged bytes").isEmpty();
        assertThat(auditor.audit().findings()).doesNotContainKey("durability");

        assertThat(wreckHeaders(chunks.get(1).chunkId())).isEqualTo(3);
        assertThat(auditor.audit().findings()).as("no acknowledged byte was in it").doesNotContainKey("durability");

        assertThat(wreckHeaders(chunks.get(0).chunkId())).isEqualTo(3);
        assertThat(auditor.audit().findings().get("durability")).as("every copy of an acknowledged chunk gone")
                .singleElement().asString().contains("chunk " + chunks.get(0).chunkId() + " ");
    }

    /** Flips a bit in both header slots of every copy of the chunk (none is then a valid copy); how many copies. */
    private static int wrecks(long chunkId, SimHost h) {
        int n = 0;
        String file = ChunkFormat.fileName(chunkId);
        for (String disk : h.diskNames()) {
            if (!h.diskOrNull(disk).files().contains(file)) continue;
            h.flipBit(disk, file, ChunkFormat.slotOffset(0), 0);
            h.flipBit(disk, file, ChunkFormat.slotOffset(1), 0);
            n++;
        }
        return n;
    }

    private int wreckHeaders(long chunkId) {
        int n = 0;
        for (SimHost h : c.chunkservers()) n += wrecks(chunkId, h);
        return n;
    }
}
