package dev.cairn.nfs.v4.state;

import static org.assertj.core.api.Assertions.assertThat;

import dev.cairn.nfs.v4.FileHandle;
import dev.cairn.nfs.v4.Nfs4Status;
import dev.cairn.nfs.v4.Op;
import dev.cairn.nfs.v4.state.OwnerSequences.Owner;
import dev.cairn.nfs.v4.state.OwnerSequences.Proceed;
import dev.cairn.nfs.v4.state.OwnerSequences.Refuse;
import dev.cairn.nfs.v4.state.OwnerSequences.Replay;
import dev.cairn.nfs.v4.state.OwnerSequences.Verdict;
import java.util.SplittableRandom;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.junit.jupiter.api.Test;

/** NFSv4.0 owner sequencing: next number runs, last number replays, anything else is BAD_SEQID. */
class OwnerSequencesTest {
    final OwnerSequences seqs = new OwnerSequences();
    final Owner alice = OwnerSequences.openOwner(7, new byte[] {1, 2});
    final Owner bob = OwnerSequences.lockOwner(new ByteRangeLocks.Owner(7, "bob"));

    Proceed run(Owner o, int op, int seqid) {
        Verdict v = seqs.check(o, op, seqid);
        assertThat(v).isInstanceOf(Proceed.class);
        return (Proceed) v;
    }

    int refused(Owner o, int op, int seqid) {
        Verdict v = seqs.check(o, op, seqid);
        assertThat(v).isInstanceOf(Refuse.class);
        return ((Refuse) v).status();
    }

    @Test void theFirstRequestStartsTheSequenceThenEachMustBeTheNext() {
        Proceed p = run(alice, Op.OPEN, 41); // a new owner may start anywhere
        seqs.settle(p.ticket(), Nfs4Status.NFS4_OK, new byte[] {0, 0, 0, 9}, new FileHandle(1, 2, 0), null);
        assertThat(refused(alice, Op.OPEN, 43)).isEqualTo(Nfs4Status.BAD_SEQID);
        assertThat(refused(alice, Op.OPEN, 40)).isEqualTo(Nfs4Status.BAD_SEQID);
        Verdict again = seqs.check(alice, Op.OPEN, 41);
        assertThat(again).isInstanceOf(Replay.class);
        assertThat(((Replay) again).body()).containsExactly(0, 0, 0, 9);
        assertThat(((Replay) again).current()).isEqualTo(new FileHandle(1, 2, 0));
        assertThat(refused(alice, Op.CLOSE, 41)).as("the last number, but another operation").isEqualTo(Nfs4Status.BAD_SEQID);
        seqs.settle(run(alice, Op.CLOSE, 42).ticket(), Nfs4Status.NFS4_OK, new byte[4], null, null);
        assertThat(seqs.check(bob, Op.LOCK, 0)).as("owners are independent").isInstanceOf(Proceed.class);
    }

    @Test void aCopyOfARunningRequestWaitsAndOtherNumbersAreRefused() {
        Proceed p = run(alice, Op.OPEN, 1);
        assertThat(refused(alice, Op.OPEN, 1)).isEqualTo(Nfs4Status.DELAY);
        assertThat(refused(alice, Op.OPEN, 2)).isEqualTo(Nfs4Status.BAD_SEQID);
        seqs.settle(p.ticket(), Nfs4Status.NFS4_OK, new byte[0], null, null);
        assertThat(seqs.check(alice, Op.OPEN, 1)).isInstanceOf(Replay.class);
    }

    @Test void onlyTheListedErrorsLeaveTheNumberWhereItWas() {
        seqs.settle(run(bob, Op.LOCK, 5).ticket(), Nfs4Status.NFS4_OK, new byte[0], null, null);
        for (int status : new int[] {Nfs4Status.BAD_STATEID, Nfs4Status.STALE_STATEID, Nfs4Status.STALE_CLIENTID, Nfs4Status.BADXDR,
                Nfs4Status.RESOURCE, Nfs4Status.NOFILEHANDLE, Nfs4Status.BAD_SEQID, Nfs4Status.MOVED}) {
            seqs.settle(run(bob, Op.LOCK, 6).ticket(), status, new byte[0], null, null);
        }
        // a DENIED lock is a real answer: the number moves on and the denial is what a retransmission gets
        seqs.settle(run(bob, Op.LOCK, 6).ticket(), Nfs4Status.DENIED, new byte[] {0, 0, 0, 1}, null, null);
        Verdict again = seqs.check(bob, Op.LOCK, 6);
        assertThat(((Replay) again).status()).isEqualTo(Nfs4Status.DENIED);
        run(bob, Op.LOCK, 7);
    }

    @Test void numbersWrapAroundAndClientsAreForgottenWithTheirLease() {
        seqs.settle(run(alice, Op.OPEN, -1).ticket(), Nfs4Status.NFS4_OK, new byte[0], null, null); // 0xffffffff
        seqs.settle(run(alice, Op.OPEN, 0).ticket(), Nfs4Status.NFS4_OK, new byte[0], null, null);
        Proceed running = run(alice, Op.CLOSE, 1);
        seqs.dropClient(7);
        assertThat(seqs.size()).isZero();
        seqs.settle(running.ticket(), Nfs4Status.NFS4_OK, new byte[0], null, null); // settling a forgotten owner is harmless
        assertThat(seqs.check(alice, Op.OPEN, 77)).as("starts afresh").isInstanceOf(Proceed.class);
    }

    @Test void ownersAreBounded() {
        for (int i = 0; i < OwnerSequences.MAX_OWNERS; i++) run(OwnerSequences.lockOwner(new ByteRangeLocks.Owner(1, "o" + i)), Op.LOCK, 1);
        assertThat(refused(alice, Op.OPEN, 1)).isEqualTo(Nfs4Status.RESOURCE);
    }

    /**
     * A client that sometimes resends its last request (a reconnect) and sometimes sends a wrong number (a
     * bug): each resend gets the reply of the first, each wrong number BAD_SEQID, and every distinct request
     * runs exactly once.
     */
    @ParameterizedTest
    @ValueSource(longs = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10})
    void resendsAreAnsweredFromTheCacheAndNothingRunsTwice(long seed) {
        SplittableRandom rnd = new SplittableRandom(seed);
        int next = rnd.nextInt();
        java.util.Map<Integer, Integer> completed = new java.util.HashMap<>();
        byte[] lastReply = null;
        for (int i = 0; i < 500; i++) {
            int roll = rnd.nextInt(10);
            if (roll == 0 && lastReply != null) {
                Verdict v = seqs.check(alice, Op.OPEN_DOWNGRADE, next - 1);
                assertThat(v).isInstanceOf(Replay.class);
                assertThat(((Replay) v).body()).isEqualTo(lastReply);
            } else if (roll == 1 && lastReply != null) {
                int wrong = next + 1 + rnd.nextInt(1000);
                assertThat(refused(alice, Op.OPEN_DOWNGRADE, wrong)).isEqualTo(Nfs4Status.BAD_SEQID);
            } else {
                Proceed p = run(alice, Op.OPEN_DOWNGRADE, next);
                boolean stays = rnd.nextInt(8) == 0; // e.g. BAD_STATEID: the client must resend with the same number
                byte[] reply = new byte[] {0, 0, 0, (byte) i};
                seqs.settle(p.ticket(), stays ? Nfs4Status.BAD_STATEID : Nfs4Status.NFS4_OK, reply, null, null);
                if (!stays) {
                    completed.merge(next, 1, Integer::sum);
                    lastReply = reply;
                    next++;
                }
            }
        }
        assertThat(completed.values()).as("each number completes once").allMatch(n -> n == 1);
        assertThat(completed).hasSizeGreaterThan(250);
    }
}
