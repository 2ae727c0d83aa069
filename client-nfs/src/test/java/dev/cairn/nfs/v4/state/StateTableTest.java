package dev.cairn.nfs.v4.state;

import static org.assertj.core.api.Assertions.assertThat;

import dev.cairn.nfs.v4.Nfs4Status;
import dev.cairn.nfs.v4.state.StateTable.StateId;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** Stateid lookups as every stateid-taking operation meets them, in both minor versions. */
class StateTableTest {
    static final int BOOT = 0x5eed;
    final StateTable states = new StateTable(BOOT);
    final int[] status = new int[1];

    StateTable.Open open(long client, String owner, int access, int deny) {
        StateTable.Open o = states.open(client, owner.getBytes(), 42, access, deny, 1, status);
        assertThat(status[0]).isEqualTo(Nfs4Status.NFS4_OK);
        return o;
    }

    /** RFC 7530 §9.1.4.3: special stateids name no state; where a lookup meets one (CLOSE, OPEN_DOWNGRADE, LOCK) it is BAD_STATEID, never STALE. */
    @ParameterizedTest
    @ValueSource(ints = {0, 1})
    void specialStateidsAreBadNotStale(int minor) {
        open(7, "o", StateTable.ACCESS_READ, 0);
        for (StateId special : new StateId[] {StateId.ANONYMOUS, StateId.BYPASS, StateId.CURRENT}) {
            assertThat(states.find(special, minor, StateTable.ANY_CLIENT, status)).isNull();
            assertThat(status[0]).as("%s in 4.%d", special, minor).isEqualTo(Nfs4Status.BAD_STATEID);
            assertThat(states.findLock(special, minor, StateTable.ANY_CLIENT, status)).isNull();
            assertThat(status[0]).isEqualTo(Nfs4Status.BAD_STATEID);
        }
    }

    /** RFC 8881 §8.2.4: another client's stateid is BAD_STATEID (4.1 knows the client from the session). */
    @Test void anotherClientsStateidNamesNothing() {
        StateTable.Open o = open(7, "o", StateTable.ACCESS_BOTH, 0);
        StateId sid = states.stateId(o);
        assertThat(states.find(sid, 1, 7, status)).isSameAs(o);
        assertThat(states.find(sid, 1, 8, status)).isNull();
        assertThat(status[0]).isEqualTo(Nfs4Status.BAD_STATEID);
        assertThat(states.resolve(sid, 1, 8, status)).isNull();
        assertThat(status[0]).isEqualTo(Nfs4Status.BAD_STATEID);
        assertThat(states.find(sid, 0, StateTable.ANY_CLIENT, status)).as("4.0: no client to check").isSameAs(o);
    }

    /** A stateid of another boot is STALE_STATEID in 4.0, BAD_STATEID in 4.1; an older seqid OLD_STATEID; a newer one BAD. */
    @Test void seqidsAndBootsAreChecked() {
        StateTable.Open o = open(7, "o", StateTable.ACCESS_READ, 0);
        StateId first = states.stateId(o);
        open(7, "o", StateTable.ACCESS_WRITE, 0);
        assertThat(states.find(first, 1, 7, status)).isNull();
        assertThat(status[0]).isEqualTo(Nfs4Status.OLD_STATEID);
        assertThat(states.find(new StateId(first.seqid() + 5, first.other()), 1, 7, status)).isNull();
        assertThat(status[0]).isEqualTo(Nfs4Status.BAD_STATEID);
        assertThat(states.find(new StateId(0, first.other()), 1, 7, status)).as("4.1: seqid 0 is the current one").isSameAs(o);
        byte[] otherBoot = first.other().clone();
        otherBoot[0] ^= 0x40;
        assertThat(states.find(new StateId(2, otherBoot), 0, StateTable.ANY_CLIENT, status)).isNull();
        assertThat(status[0]).isEqualTo(Nfs4Status.STALE_STATEID);
        assertThat(states.find(new StateId(2, otherBoot), 1, 7, status)).isNull();
        assertThat(status[0]).isEqualTo(Nfs4Status.BAD_STATEID);
    }

    /** RFC 7530 §16.19.4: a downgrade goes to the union of some of the owner's OPENs, and drops the others. */
    @Test void downgradesGoOnlyToUnionsOfTheOpensMade() {
        StateTable.Open o = open(7, "o", StateTable.ACCESS_READ, 0); // READ, deny NONE
        open(7, "o", StateTable.ACCESS_WRITE, 1);                    // WRITE, deny READ
        assertThat(o.access).isEqualTo(StateTable.ACCESS_BOTH);
        assertThat(o.deny).isEqualTo(1);
        assertThat(states.downgrade(o, StateTable.ACCESS_BOTH, 0)).as("BOTH without the deny: no subset gives it").isEqualTo(Nfs4Status.INVAL);
        assertThat(states.downgrade(o, StateTable.ACCESS_READ, 1)).as("READ denying READ was never opened").isEqualTo(Nfs4Status.INVAL);
        assertThat(states.downgrade(o, StateTable.ACCESS_BOTH, 1)).as("all of them").isEqualTo(Nfs4Status.NFS4_OK);
        assertThat(states.downgrade(o, StateTable.ACCESS_WRITE, 1)).isEqualTo(Nfs4Status.NFS4_OK);
        assertThat(o.access).isEqualTo(StateTable.ACCESS_WRITE);
        assertThat(o.deny).isEqualTo(1);
        assertThat(states.downgrade(o, StateTable.ACCESS_READ, 0)).as("that OPEN is given up").isEqualTo(Nfs4Status.INVAL);
        assertThat(states.downgrade(o, StateTable.ACCESS_WRITE, 1)).as("to what it holds").isEqualTo(Nfs4Status.NFS4_OK);
    }

    /** RFC 7530 §9.1.7: a CLOSE retransmitted after its open is gone still finds its owner, whose last reply answers it. */
    @Test void aClosedOpensOwnerIsFoundForItsRetransmittedClose() {
        StateTable.Open o = open(7, "o", StateTable.ACCESS_READ, 0);
        StateId sid = states.stateId(o);
        states.close(o);
        assertThat(states.sequenceOwner(sid)).isEqualTo(o.sequenceOwner);
        assertThat(states.find(sid, 0, StateTable.ANY_CLIENT, status)).isNull();
        assertThat(status[0]).isEqualTo(Nfs4Status.BAD_STATEID);
        states.dropClient(7);
        assertThat(states.sequenceOwner(sid)).as("forgotten with its client").isNull();
    }
}
