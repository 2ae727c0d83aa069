package dev.cairn.sim;

import static org.assertj.core.api.Assertions.assertThat;

import dev.cairn.client.CairnClient;
import dev.cairn.client.FileWriter;
import dev.cairn.core.proto.MasterProtocol.ChunkInfo;
import dev.cairn.core.proto.StorageClass;
import dev.cairn.sim.workload.Oracle;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Write leases end to end: what the master knows of a chunk's copies once a writer has committed. */
class WriteLeaseSimTest extends ClusterScenario {
    /**
     * A writer loses one of its two copies mid-file; the next lease bumps the survivor and tops the chain up
     * with a fresh server. Once the writer has committed, that fresh copy holds every acknowledged byte, and
     * the master must count it at once: if the old survivor then dies, the file is read from the fresh copy
     * (sweep seed 1928 lost a file this way, the fresh copy unknown until its server's next inventory).
     */
    @Test void aCopyATopUpAddedIsKnownAsSoonAsTheWriterCommits() {
        cluster(3);
        byte[] data = Oracle.content(7, 300_000);
        CairnClient client = c.client();
        FileWriter w = client.writer(run(() -> client.create("/f", CHUNK, StorageClass.replicated(2))));
        run(() -> w.write(data, 0, 100_000).flatMap(v -> w.sync()));
        List<String> first = current(info("/f").chunks().get(0));
        assertThat(first).hasSize(2);

        host(first.get(0)).crash();
        long before = sim.now();
        run(() -> w.write(data, 100_000, data.length - 100_000).flatMap(v -> w.close()));
        ChunkInfo chunk = info("/f").chunks().get(0);
        List<String> now = current(chunk);
        List<String> fresh = new ArrayList<>(now);
        fresh.removeAll(first);
        assertThat(fresh).as("the top-up's copy, counted at the commit (%s s after the crash); copies %s",
                (sim.now() - before) / SECOND, chunk.copies()).hasSize(1);
        assertThat(now).containsExactlyInAnyOrder(first.get(1), fresh.get(0));

        host(first.get(1)).crash(); // the copy the lease bumped: only the fresh one is left
        assertThat(Arrays.equals(read("/f"), data)).as("read from the fresh copy alone").isTrue();
    }
}
