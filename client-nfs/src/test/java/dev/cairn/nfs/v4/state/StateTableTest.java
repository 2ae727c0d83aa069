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

    StateTable.Open openOf(long client, String owner, long inode, int access, int deny, int minor) {
        StateTable.Open o = states.open(client, owner.getBytes(), inode, access, deny, minor, status);
        assertThat(status[0]).isEqualTo(Nfs4Status.NFS4_OK);
        return o;
    }

    StateTable.LockState locked(StateTable.Open o, String lockOwner, long first, long last) {
        ByteRangeLocks.Owner owner = new ByteRangeLocks.Owner(o.clientId, lockOwner);
        StateTable.LockState l = states.lockState(o, owner, status);
        assertThat(status[0]).isEqualTo(Nfs4Status.NFS4_OK);
        assertThat(states.ranges().conflict(o.inode, owner, true, first, last)).isNull();
        assertThat(states.ranges().lock(o.inode, owner, true, first, last)).isTrue();
        l.seqid++;
        return l;
    }

    /** Share modes outside 1..3 (access) and 0..3 (deny) are INVAL (RFC 8881 §18.16.3); the edges themselves are fine. */
    @Test void shareModesOutsideTheirRangeAreInval() {
        for (int[] bad : new int[][] {{0, 0}, {4, 0}, {1, -1}, {1, 4}, {-1, 0}}) {
            assertThat(states.open(7, "o".getBytes(), 42, bad[0], bad[1], 1, status)).isNull();
            assertThat(status[0]).as("access %d deny %d", bad[0], bad[1]).isEqualTo(Nfs4Status.INVAL);
        }
        assertThat(states.size()).isZero();
        openOf(7, "o", 42, StateTable.ACCESS_READ, 0, 1);
        openOf(7, "o", 42, StateTable.ACCESS_BOTH, 3, 1);
        assertThat(states.size()).as("one owner, one file: one open").isEqualTo(1);
    }

    /** Share reservations hold between owners (and a file's deny against the owner's own upgrade), never across files. */
    @Test void shareReservationsHoldPerFile() {
        openOf(7, "a", 42, StateTable.ACCESS_READ, StateTable.ACCESS_WRITE, 1);
        assertThat(states.open(8, "b".getBytes(), 42, StateTable.ACCESS_WRITE, 0, 1, status)).isNull();
        assertThat(status[0]).isEqualTo(Nfs4Status.SHARE_DENIED);
        assertThat(states.open(8, "b".getBytes(), 42, StateTable.ACCESS_READ, StateTable.ACCESS_READ, 1, status)).as("denies what a holds").isNull();
        assertThat(status[0]).isEqualTo(Nfs4Status.SHARE_DENIED);
        openOf(8, "b", 42, StateTable.ACCESS_READ, 0, 1);
        openOf(8, "b", 43, StateTable.ACCESS_BOTH, StateTable.ACCESS_BOTH, 1);
        assertThat(states.denied(42, StateTable.ACCESS_WRITE)).isTrue();
        assertThat(states.denied(42, StateTable.ACCESS_READ)).isFalse();
        assertThat(states.denied(43, StateTable.ACCESS_READ)).isTrue();
        assertThat(states.denied(44, StateTable.ACCESS_BOTH)).isFalse();
        assertThat(states.opens(42)).hasSize(2);
        assertThat(states.opens(43)).hasSize(1);
        assertThat(states.open(7, "a".getBytes(), 42, StateTable.ACCESS_WRITE, 0, 1, status)).as("its own deny holds against its upgrade").isNull();
        assertThat(status[0]).isEqualTo(Nfs4Status.SHARE_DENIED);
    }

    /** Each OPEN of an owner's file moves its stateid on; every open gets a key of its own. */
    @Test void openStateidsAreDistinctAndMoveOnWithEachOpen() {
        StateTable.Open a = openOf(7, "o", 42, StateTable.ACCESS_READ, 0, 1);
        StateTable.Open b = openOf(7, "o", 43, StateTable.ACCESS_READ, 0, 1);
        StateTable.Open c = openOf(7, "p", 42, StateTable.ACCESS_READ, 0, 1);
        assertThat(java.util.Set.of(java.util.HexFormat.of().formatHex(states.stateId(a).other()),
                java.util.HexFormat.of().formatHex(states.stateId(b).other()),
                java.util.HexFormat.of().formatHex(states.stateId(c).other()))).hasSize(3);
        assertThat(states.stateId(a).seqid()).isEqualTo(1);
        assertThat(openOf(7, "o", 42, StateTable.ACCESS_WRITE, 0, 1)).isSameAs(a);
        assertThat(states.stateId(a).seqid()).isEqualTo(2);
        assertThat(states.find(states.stateId(b), 1, 7, status)).isSameAs(b);
        assertThat(states.find(states.stateId(a), 1, 7, status)).isSameAs(a);
    }

    /** 4.0: a new owner's open serves only OPEN_CONFIRM until confirmed; confirming confirms the owner's other opens and later ones. */
    @Test void openConfirmConfirmsTheOwnerOnce() {
        StateTable.Open a = openOf(7, "o", 42, StateTable.ACCESS_READ, 0, 0);
        StateTable.Open b = openOf(7, "o", 43, StateTable.ACCESS_READ, 0, 0);
        StateTable.Open other = openOf(7, "p", 44, StateTable.ACCESS_READ, 0, 0);
        StateId sid = states.stateId(a);
        assertThat(states.find(sid, 0, StateTable.ANY_CLIENT, status)).isNull();
        assertThat(status[0]).isEqualTo(Nfs4Status.BAD_STATEID);
        assertThat(states.resolve(sid, 0, StateTable.ANY_CLIENT, status)).as("READ/WRITE cannot use it either").isNull();
        assertThat(states.findAny(sid, 0, StateTable.ANY_CLIENT, status)).isSameAs(a);
        assertThat(states.confirm(a)).isEqualTo(Nfs4Status.NFS4_OK);
        assertThat(states.stateId(a).seqid()).isEqualTo(2);
        assertThat(states.confirm(a)).as("a second OPEN_CONFIRM").isEqualTo(Nfs4Status.BAD_STATEID);
        assertThat(b.confirmed).isTrue();
        assertThat(other.confirmed).as("another owner").isFalse();
        assertThat(states.find(states.stateId(b), 0, StateTable.ANY_CLIENT, status)).isSameAs(b);
        assertThat(openOf(7, "o", 45, StateTable.ACCESS_READ, 0, 0).confirmed).as("a later open of the owner").isTrue();
        assertThat(openOf(7, "p", 46, StateTable.ACCESS_READ, 0, 0).confirmed).isFalse();
        assertThat(openOf(7, "q", 46, StateTable.ACCESS_READ, 0, 1).confirmed).as("4.1 has no OPEN_CONFIRM").isTrue();
    }

    /** A lock stateid: found by its own seqid, resolving to its open for READ/WRITE, never another client's. */
    @Test void lockStateidsAreCheckedLikeOpens() {
        StateTable.Open o = openOf(7, "o", 42, StateTable.ACCESS_BOTH, 0, 1);
        StateTable.LockState l = locked(o, "lo", 0, 9);
        StateId lsid = states.stateId(l);
        assertThat(lsid.other()).isNotEqualTo(states.stateId(o).other());
        assertThat(states.findLock(lsid, 1, 7, status)).isSameAs(l);
        assertThat(states.resolve(lsid, 1, 7, status)).isSameAs(o);
        assertThat(states.resolve(lsid, 1, 8, status)).isNull();
        assertThat(status[0]).isEqualTo(Nfs4Status.BAD_STATEID);
        assertThat(states.findLock(states.stateId(o), 1, 7, status)).as("an open's stateid is no lock stateid").isNull();
        assertThat(status[0]).isEqualTo(Nfs4Status.BAD_STATEID);
        assertThat(states.lockState(o, l.owner, status)).as("one lock state per open and lock owner").isSameAs(l);
        l.seqid++;
        assertThat(states.findLock(lsid, 1, 7, status)).isNull();
        assertThat(status[0]).isEqualTo(Nfs4Status.OLD_STATEID);
        assertThat(states.sequenceOwner(states.stateId(l))).isEqualTo(OwnerSequences.lockOwner(l.owner));
        assertThat(states.sequenceOwner(states.stateId(o))).isEqualTo(o.sequenceOwner);
    }

    /** A lock owner is established by its first granted LOCK (seqid above 0), per owner. */
    @Test void aLockOwnerIsEstablishedByItsFirstGrantedLock() {
        StateTable.Open o = openOf(7, "o", 42, StateTable.ACCESS_BOTH, 0, 0);
        ByteRangeLocks.Owner lo = new ByteRangeLocks.Owner(7, "lo");
        StateTable.LockState l = states.lockState(o, lo, status);
        assertThat(states.lockOwnerEstablished(lo)).isFalse();
        l.seqid++;
        assertThat(states.lockOwnerEstablished(lo)).isTrue();
        assertThat(states.lockOwnerEstablished(new ByteRangeLocks.Owner(7, "other"))).isFalse();
        assertThat(states.lockOwnerEstablished(new ByteRangeLocks.Owner(8, "lo"))).isFalse();
    }

    /** CLOSE ends the lock states made from the open (and only those); FREE_STATEID and RELEASE_LOCKOWNER wait for the locks to go. */
    @Test void lockStatesEndWithTheirOpenOrWhenFreedOrReleasedWithoutLocks() {
        StateTable.Open o = openOf(7, "o", 42, StateTable.ACCESS_BOTH, 0, 1);
        StateTable.Open p = openOf(7, "p", 43, StateTable.ACCESS_BOTH, 0, 1);
        StateTable.LockState l = locked(o, "lo", 0, 9);
        StateTable.LockState m = locked(p, "lo", 0, 9);
        assertThat(states.locksHeld(o)).isTrue();
        assertThat(states.freeLock(l)).isEqualTo(Nfs4Status.LOCKS_HELD);
        assertThat(states.releaseLockOwner(l.owner)).isEqualTo(Nfs4Status.LOCKS_HELD);
        states.ranges().unlock(42, l.owner, 0, ByteRangeLocks.LAST_BYTE);
        assertThat(states.locksHeld(o)).isFalse();
        assertThat(states.releaseLockOwner(l.owner)).as("still holds on the other file").isEqualTo(Nfs4Status.LOCKS_HELD);
        StateId lsid = states.stateId(l), msid = states.stateId(m);
        states.close(o);
        assertThat(states.findLock(lsid, 1, 7, status)).isNull();
        assertThat(status[0]).isEqualTo(Nfs4Status.BAD_STATEID);
        assertThat(states.findLock(msid, 1, 7, status)).as("another open's").isSameAs(m);
        StateTable.Open o2 = openOf(7, "o", 42, StateTable.ACCESS_BOTH, 0, 1);
        assertThat(states.lockState(o2, l.owner, status)).as("a new open gets a new lock state").isNotSameAs(l);
        assertThat(states.freeLock(m)).isEqualTo(Nfs4Status.LOCKS_HELD);
        states.ranges().unlock(43, m.owner, 0, ByteRangeLocks.LAST_BYTE);
        assertThat(states.freeLock(m)).isEqualTo(Nfs4Status.NFS4_OK);
        assertThat(states.findLock(msid, 1, 7, status)).isNull();
        assertThat(status[0]).isEqualTo(Nfs4Status.BAD_STATEID);
        assertThat(states.lockState(p, m.owner, status)).as("freed: the next LOCK makes a new one").isNotSameAs(m);
        StateTable.LockState l2 = states.lockState(o2, l.owner, status);
        l2.seqid++; // granted once, no lock held any more
        StateId l2sid = states.stateId(l2);
        assertThat(states.lockOwnerEstablished(l.owner)).isTrue();
        assertThat(states.releaseLockOwner(l.owner)).isEqualTo(Nfs4Status.NFS4_OK);
        assertThat(states.lockOwnerEstablished(l.owner)).isFalse();
        assertThat(states.findLock(l2sid, 1, 7, status)).isNull();
        assertThat(status[0]).isEqualTo(Nfs4Status.BAD_STATEID);
        assertThat(states.lockState(o2, l.owner, status)).as("released: made afresh").isNotSameAs(l2);
    }

    /** A client's lease ended: its opens and locks go (its stateids are EXPIRED), others' stay, and its files are free. */
    @Test void aDroppedClientsStateIsExpiredAndHoldsNothingOff() {
        StateTable.Open mine = openOf(7, "o", 42, StateTable.ACCESS_BOTH, StateTable.ACCESS_BOTH, 1);
        StateTable.Open mine2 = openOf(7, "o", 43, StateTable.ACCESS_READ, 0, 1);
        StateTable.LockState lock = locked(mine, "lo", 0, 99);
        StateTable.Open theirs = openOf(8, "o", 44, StateTable.ACCESS_READ, StateTable.ACCESS_WRITE, 1);
        StateTable.LockState theirLock = locked(theirs, "lo", 0, 99);
        StateId a = states.stateId(mine), b = states.stateId(mine2), l = states.stateId(lock);
        // the clients' 4.0 open-owners: sequences started and confirmed, one open of each closed since
        StateTable.Open mine40 = openOf(7, "o40", 45, StateTable.ACCESS_READ, 0, 0);
        StateTable.Open theirs40 = openOf(8, "o40", 45, StateTable.ACCESS_READ, 0, 0);
        for (StateTable.Open o : new StateTable.Open[] {mine40, theirs40}) {
            OwnerSequences.Verdict v = states.sequences().check(o.sequenceOwner, 3, 1);
            states.sequences().settle(((OwnerSequences.Proceed) v).ticket(), Nfs4Status.NFS4_OK, new byte[0], null, null);
            states.confirm(o);
        }
        StateId closed40 = states.stateId(mine40), theirClosed40 = states.stateId(theirs40);
        states.close(mine40);
        states.close(theirs40);
        assertThat(states.sequences().size()).isEqualTo(2);
        assertThat(states.holds(7)).isTrue();
        assertThat(states.dropClient(7)).as("opens dropped").isEqualTo(2);
        assertThat(states.holds(7)).isFalse();
        assertThat(states.holds(8)).isTrue();
        for (StateId sid : new StateId[] {a, b}) {
            assertThat(states.find(sid, 1, 7, status)).isNull();
            assertThat(status[0]).isEqualTo(Nfs4Status.EXPIRED);
        }
        assertThat(states.findLock(l, 1, 7, status)).isNull();
        assertThat(status[0]).isEqualTo(Nfs4Status.EXPIRED);
        assertThat(states.denied(42, StateTable.ACCESS_BOTH)).isFalse();
        assertThat(states.ranges().ranges(42)).isEmpty();
        openOf(9, "o", 42, StateTable.ACCESS_BOTH, StateTable.ACCESS_BOTH, 1);
        assertThat(states.find(states.stateId(theirs), 1, 8, status)).isSameAs(theirs);
        assertThat(states.findLock(states.stateId(theirLock), 1, 8, status)).isSameAs(theirLock);
        assertThat(states.ranges().ranges(44)).hasSize(1);
        assertThat(states.denied(44, StateTable.ACCESS_WRITE)).isTrue();
        assertThat(states.dropClient(7)).isZero();
        assertThat(states.sequences().size()).as("its owners' sequences start afresh, the other's stay").isEqualTo(1);
        assertThat(states.sequenceOwner(closed40)).as("its closed opens' owners are forgotten").isNull();
        assertThat(states.sequenceOwner(theirClosed40)).isEqualTo(theirs40.sequenceOwner);
        assertThat(openOf(7, "o40", 46, StateTable.ACCESS_READ, 0, 0).confirmed).as("its owner confirms afresh").isFalse();
        assertThat(openOf(8, "o40", 46, StateTable.ACCESS_READ, 0, 0).confirmed).isTrue();
    }

    /** Only the most recent {@link StateTable#MAX_EXPIRED_KEYS} dropped states are remembered as EXPIRED; older ones are BAD. */
    @Test void expiredKeysAreBounded() {
        int n = StateTable.MAX_EXPIRED_KEYS + 1;
        StateId first = null, second = null, last = null;
        for (int i = 0; i < n; i++) {
            StateId sid = states.stateId(openOf(7, "o", 1000 + i, StateTable.ACCESS_READ, 0, 1));
            if (i == 0) first = sid;
            if (i == 1) second = sid;
            last = sid;
        }
        assertThat(states.dropClient(7)).isEqualTo(n);
        assertThat(states.size()).isZero();
        assertThat(states.find(first, 1, 7, status)).isNull();
        assertThat(status[0]).as("the oldest, forgotten").isEqualTo(Nfs4Status.BAD_STATEID);
        assertThat(states.find(last, 1, 7, status)).isNull();
        assertThat(status[0]).isEqualTo(Nfs4Status.EXPIRED);
        assertThat(states.find(second, 1, 7, status)).isNull();
        assertThat(status[0]).as("the oldest kept").isEqualTo(Nfs4Status.EXPIRED);
    }

    /** Past {@link StateTable#MAX_OPENS} an OPEN is DELAY, never an unbounded table; a close makes room. */
    @Test void opensAreBounded() {
        StateTable.Open firstOpen = null;
        for (int i = 0; i < StateTable.MAX_OPENS; i++) {
            StateTable.Open o = openOf(7, "o", i, StateTable.ACCESS_READ, 0, 1);
            if (i == 0) firstOpen = o;
        }
        assertThat(states.open(7, "o".getBytes(), -5, StateTable.ACCESS_READ, 0, 1, status)).isNull();
        assertThat(status[0]).isEqualTo(Nfs4Status.DELAY);
        assertThat(openOf(7, "o", 3, StateTable.ACCESS_WRITE, 0, 1)).as("an upgrade needs no room").isNotNull();
        states.close(firstOpen);
        openOf(7, "o", -5, StateTable.ACCESS_READ, 0, 1);
    }

    /** OPEN_DOWNGRADE against a model: allowed exactly to the union of a subset of the OPENs, keeping those within it. */
    @Test void downgradesMatchAModelOfTheOpensMade() {
        java.util.Random random = new java.util.Random(11);
        for (int round = 0; round < 300; round++) {
            StateTable t = new StateTable(BOOT);
            java.util.Set<Integer> model = new java.util.HashSet<>(); // pairs access*4+deny
            StateTable.Open o = null;
            for (int step = 0; step < 12; step++) {
                int access = 1 + random.nextInt(3), deny = random.nextInt(4);
                if (o == null || random.nextInt(3) > 0) {
                    StateTable.Open got = t.open(7, "o".getBytes(), 42, access, deny, 1, status);
                    if (got == null) continue; // its own deny: SHARE_DENIED, nothing changed
                    o = got;
                    model.add(access * 4 + deny);
                } else {
                    boolean allowed = false;
                    for (int subset = 1; subset < 1 << 16 && !allowed; subset++) {
                        if ((subset & ~bits(model)) != 0) continue;
                        int a = 0, d = 0;
                        for (int p = 0; p < 16; p++) if ((subset & 1 << p) != 0) { a |= p >> 2; d |= p & 3; }
                        allowed = a == access && d == deny;
                    }
                    int seqid = o.seqid;
                    assertThat(t.downgrade(o, access, deny)).as("round %d: %d/%d from %s", round, access, deny, model)
                            .isEqualTo(allowed ? Nfs4Status.NFS4_OK : Nfs4Status.INVAL);
                    if (allowed) {
                        model.removeIf(p -> ((p >> 2) & ~access) != 0 || ((p & 3) & ~deny) != 0);
                        assertThat(o.seqid).isEqualTo(seqid + 1);
                    } else {
                        assertThat(o.seqid).isEqualTo(seqid);
                    }
                }
                int a = 0, d = 0;
                for (int p : model) { a |= p >> 2; d |= p & 3; }
                assertThat(o.access).isEqualTo(a);
                assertThat(o.deny).isEqualTo(d);
            }
        }
    }

    private static int bits(java.util.Set<Integer> pairs) {
        int b = 0;
        for (int p : pairs) b |= 1 << p;
        return b;
    }

    /** RFC 7530 §9.6: a 4.0 stateid naming a client's live state renews that client's lease (4.1 renews by SEQUENCE). */
    @Test void a40StateidInUseRenewsItsClient() {
        java.util.List<Long> renewed = new java.util.ArrayList<>();
        states.onUse40(renewed::add);
        StateTable.Open o = openOf(7, "o", 42, StateTable.ACCESS_BOTH, 0, 0);
        states.confirm(o);
        StateTable.LockState l = locked(o, "lo", 0, 9);
        StateTable.Open p = openOf(8, "p", 43, StateTable.ACCESS_BOTH, 0, 1);
        assertThat(states.resolve(states.stateId(o), 0, StateTable.ANY_CLIENT, status)).isSameAs(o);
        assertThat(states.findLock(states.stateId(l), 0, StateTable.ANY_CLIENT, status)).isSameAs(l);
        assertThat(renewed).containsExactly(7L, 7L);
        assertThat(states.find(states.stateId(p), 1, 8, status)).isSameAs(p);
        assertThat(states.find(new StateId(0, new byte[12]), 0, StateTable.ANY_CLIENT, status)).isNull();
        assertThat(renewed).as("4.1 and special stateids renew nothing here").containsExactly(7L, 7L);
    }
}
