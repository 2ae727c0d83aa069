package dev.cairn.nfs.v4.state;

import static org.assertj.core.api.Assertions.assertThat;

import dev.cairn.core.testing.MemKv;
import dev.cairn.nfs.NfsTestCalls;
import dev.cairn.nfs.v4.Nfs4Status;
import java.nio.charset.StandardCharsets;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/** The grace period after a restart: who may reclaim, what waits, when it ends, and the record behind it. */
class GraceTest {
    static final long PERIOD = ClientTable.LEASE_NANOS;
    final MemKv disk = new MemKv();
    final NfsTestCalls.ManualClock clock = new NfsTestCalls.ManualClock();

    /** One incarnation of the gateway: its client table and grace period over the same disk. */
    final class Boot {
        final ClientTable clients = new ClientTable(new SplittableRandom(clock.nanos).nextInt(), new SplittableRandom(1));
        final Grace grace = new Grace(disk, clock, NfsTestCalls.QUIET, PERIOD, o -> clients.confirmedByOwner(o) != null);

        Boot() { clients.onRemove(id -> grace.removed(clients.client(id))); }

        Client confirmed(String owner, int minor) {
            Client c = clients.create(owner.getBytes(StandardCharsets.UTF_8), new byte[8], minor, 0, clock.nanos);
            clients.confirm(c);
            assertThat(grace.confirmed(c).isDone()).isTrue();
            return c;
        }
    }

    @Test void aGatewayWhoseClientsHeldNothingStartsWithoutGrace() {
        Boot first = new Boot();
        assertThat(first.grace.active()).isFalse();
        assertThat(first.grace.admit(null, false)).isEqualTo(Nfs4Status.NFS4_OK);
        assertThat(first.grace.admit(null, true)).isEqualTo(Nfs4Status.NO_GRACE);
    }

    @Test void afterARestartOnlyRecordedClientsReclaimAndNewStateWaits() {
        Boot first = new Boot();
        first.confirmed("alice", 1);
        first.confirmed("bob", 0);
        clock.nanos += 5_000_000_000L;
        Boot second = new Boot(); // the restart: nothing in memory survives, the record does
        assertThat(second.grace.active()).isTrue();
        Client alice = second.confirmed("alice", 1);
        Client carol = second.confirmed("carol", 1);
        assertThat(second.grace.admit(alice, true)).isEqualTo(Nfs4Status.NFS4_OK);
        assertThat(second.grace.admit(alice, false)).as("new opens and locks wait for the reclaims").isEqualTo(Nfs4Status.GRACE);
        assertThat(second.grace.admit(carol, true)).as("held nothing before the restart").isEqualTo(Nfs4Status.NO_GRACE);
        second.clients.markReclaimComplete(alice);
        second.grace.reclaimComplete(alice);
        assertThat(second.grace.admit(alice, true)).as("after its RECLAIM_COMPLETE").isEqualTo(Nfs4Status.NO_GRACE);
        assertThat(second.grace.active()).as("bob (4.0) has no RECLAIM_COMPLETE: the full period runs").isTrue();
        clock.nanos += PERIOD;
        assertThat(second.grace.active()).isFalse();
        assertThat(second.grace.admit(carol, false)).isEqualTo(Nfs4Status.NFS4_OK);
        // bob never came back: off the record, so the next restart has alice and carol only
        Boot third = new Boot();
        Client bob = third.confirmed("bob", 0);
        assertThat(third.grace.admit(bob, true)).isEqualTo(Nfs4Status.NO_GRACE);
        Client a3 = third.confirmed("alice", 1);
        Client c3 = third.confirmed("carol", 1);
        for (Client c : new Client[] {a3, c3}) {
            assertThat(third.grace.admit(c, true)).isEqualTo(Nfs4Status.NFS4_OK);
            third.grace.reclaimComplete(c);
        }
        assertThat(third.grace.active()).as("every recorded client is done: over early").isFalse();
    }

    @Test void aClientWhoseLeaseEndsLeavesTheRecord() {
        Boot first = new Boot();
        first.confirmed("alice", 1);
        clock.nanos += PERIOD + 1;
        assertThat(first.clients.expire(clock.nanos)).isEqualTo(1);
        assertThat(new Boot().grace.active()).isFalse();
    }
}
