package dev.cairn.sim;

import static org.assertj.core.api.Assertions.assertThat;

import dev.cairn.core.proto.MasterProtocol.ChunkInventory;
import dev.cairn.core.proto.MasterProtocol.ReportBad;
import dev.cairn.core.proto.Types.ChunkReport;
import dev.cairn.sim.runtime.SimHost;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The checkers' record of what the serving master was told is bad: only a report or an inventory naming the copy
 * bad, handed to the master while it serves, and only within the instants asked about. Anything looser would let a
 * planner that kept a copy it was told is bad pass for one that could not know.
 */
class BadCopyNoticesTest extends ClusterScenario {
    @Test void onlyWhatTheServingMasterWasToldCounts() {
        cluster(3);
        BadCopyNotices notices = new BadCopyNotices(c);
        SimHost master = c.master();
        notices.delivered(10, c.chunkservers().get(0), new ReportBad(1, "cs2", 7, 1, "checksum"));
        assertThat(notices.toldBetween("cs2", 7, 0, 100)).as("handed to a chunkserver, not the master").isFalse();

        notices.delivered(20, master, new ChunkInventory(2, "cs1", 1,
                List.of(new ChunkReport(7, 1, 100, 0, false, false), new ChunkReport(8, 1, 100, 0, true, false))));
        assertThat(notices.toldBetween("cs1", 7, 0, 100)).as("listed as good").isFalse();
        assertThat(notices.toldBetween("cs1", 8, 0, 100)).as("listed as bad").isTrue();
        assertThat(notices.toldBetween("cs2", 8, 0, 100)).as("another server's copy").isFalse();
        assertThat(notices.toldBetween("cs1", 8, 21, 100)).as("told before the window").isFalse();
        assertThat(notices.toldBetween("cs1", 8, 0, 19)).as("told after the window").isFalse();

        notices.delivered(30, master, new ReportBad(3, "cs2", 7, 1, "checksum"));
        assertThat(notices.toldBetween("cs2", 7, 30, 30)).isTrue();

        master.crash();
        notices.delivered(40, master, new ReportBad(4, "cs3", 9, 1, "checksum"));
        assertThat(notices.toldBetween("cs3", 9, 0, 100)).as("a master that is down is told nothing").isFalse();
    }
}
