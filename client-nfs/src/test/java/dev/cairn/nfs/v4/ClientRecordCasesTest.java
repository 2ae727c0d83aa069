package dev.cairn.nfs.v4;

import static dev.cairn.nfs.NfsTestCalls.createSession;
import static dev.cairn.nfs.NfsTestCalls.sequence;
import static org.assertj.core.api.Assertions.assertThat;

import dev.cairn.nfs.NfsTestCalls;
import dev.cairn.nfs.NfsTestCalls.OpCall;
import dev.cairn.nfs.NfsTestCalls.Reply;
import dev.cairn.nfs.xdr.XdrEncoder;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

/**
 * The cases of EXCHANGE_ID (RFC 8881 §18.35.4) and SETCLIENTID (RFC 7530 §16.33.5): one owner, a confirmed
 * and an unconfirmed record, verifiers that change when a client reboots, principals that differ.
 */
class ClientRecordCasesTest {
    final NfsTestCalls nfs = new NfsTestCalls(4);
    static final int ALICE = 1000, BOB = 1001;
    final CompoundState.Connection conn = new CompoundState.Connection(1, "127.0.0.1");

    record Exchanged(int status, long id, int seq) {}

    Exchanged exchange(String owner, long verifier, int uid, int flags) {
        XdrEncoder a = new XdrEncoder().writeLong(verifier).writeOpaque(owner.getBytes(StandardCharsets.UTF_8)).writeInt(flags).writeInt(0).writeInt(0);
        Reply r = nfs.compoundOn(conn, uid, 1, new OpCall(Op.EXCHANGE_ID, a));
        if (r.status() != Nfs4Status.NFS4_OK) return new Exchanged(r.status(), 0, 0);
        return new Exchanged(r.status(), r.rest().readLong(), r.rest().readInt());
    }

    byte[] session(Exchanged x, int uid) {
        Reply c = nfs.compoundOn(conn, uid, 1, createSession(x.id(), x.seq()));
        assertThat(c.status()).isEqualTo(Nfs4Status.NFS4_OK);
        return c.rest().readFixedOpaque(16);
    }

    @Test void aRebootedClientKeepsItsOldSessionUntilTheNewRecordIsConfirmed() {
        Exchanged first = exchange("host-a", 1, ALICE, 0);
        byte[] old = session(first, ALICE);
        Exchanged rebooted = exchange("host-a", 2, ALICE, 0); // case 5
        assertThat(rebooted.id()).isNotEqualTo(first.id());
        assertThat(nfs.compoundOn(conn, ALICE, 1, sequence(old, 1, 0)).status()).as("still there").isEqualTo(Nfs4Status.NFS4_OK);
        session(rebooted, ALICE);
        assertThat(nfs.compoundOn(conn, ALICE, 1, sequence(old, 2, 0)).status()).as("gone with its record").isEqualTo(Nfs4Status.BADSESSION);
        assertThat(exchange("host-a", 2, ALICE, 0).id()).as("case 2: the same client again").isEqualTo(rebooted.id());
    }

    @Test void anotherPrincipalTakesAnOwnerOnlyWhenItHoldsNothing() {
        Exchanged alice = exchange("shared", 1, ALICE, 0);
        byte[] s = session(alice, ALICE);
        assertThat(exchange("shared", 1, BOB, 0).status()).as("case 3 with a session").isEqualTo(Nfs4Status.CLID_INUSE);
        assertThat(nfs.compoundOn(conn, ALICE, 1, new OpCall(Op.DESTROY_SESSION, new XdrEncoder().writeFixedOpaque(s))).status()).isEqualTo(Nfs4Status.NFS4_OK);
        Exchanged bob = exchange("shared", 1, BOB, 0);
        assertThat(bob.status()).isEqualTo(Nfs4Status.NFS4_OK);
        assertThat(bob.id()).isNotEqualTo(alice.id());
        assertThat(nfs.compoundOn(conn, ALICE, 1, createSession(alice.id(), alice.seq() + 1)).status()).as("alice's record went")
                .isEqualTo(Nfs4Status.STALE_CLIENTID);
        assertThat(nfs.compoundOn(conn, ALICE, 1, createSession(bob.id(), bob.seq())).status()).as("unconfirmed: only its principal confirms it")
                .isEqualTo(Nfs4Status.CLID_INUSE);
    }

    @Test void updatesNeedAConfirmedRecordWithTheSameVerifierAndPrincipal() {
        int upd = 0x40000000;
        assertThat(exchange("upd", 1, ALICE, upd).status()).isEqualTo(Nfs4Status.NOENT);
        Exchanged x = exchange("upd", 1, ALICE, 0);
        assertThat(exchange("upd", 1, ALICE, upd).status()).as("unconfirmed").isEqualTo(Nfs4Status.NOENT);
        session(x, ALICE);
        assertThat(exchange("upd", 2, ALICE, upd).status()).isEqualTo(Nfs4Status.NOT_SAME);
        assertThat(exchange("upd", 1, BOB, upd).status()).isEqualTo(Nfs4Status.PERM);
        assertThat(exchange("upd", 1, ALICE, upd).id()).isEqualTo(x.id());
        assertThat(exchange("upd", 1, ALICE, 0x4).status()).as("an undefined flag").isEqualTo(Nfs4Status.INVAL);
        assertThat(exchange("upd", 1, ALICE, 0x80000000).status()).as("a flag only a server sets").isEqualTo(Nfs4Status.INVAL);
    }

    record Set(int status, long id, byte[] confirm) {}

    Set setClientId(String owner, long verifier, int uid) {
        XdrEncoder a = new XdrEncoder().writeLong(verifier).writeString(owner).writeInt(0x40000000).writeString("tcp").writeString("127.0.0.1.3.4").writeInt(1);
        Reply r = nfs.compoundOn(conn, uid, 0, new OpCall(Op.SETCLIENTID, a));
        if (r.status() != Nfs4Status.NFS4_OK) return new Set(r.status(), 0, null);
        return new Set(r.status(), r.rest().readLong(), r.rest().readFixedOpaque(8));
    }

    int confirm(long id, byte[] verifier, int uid) {
        return nfs.compoundOn(conn, uid, 0, new OpCall(Op.SETCLIENTID_CONFIRM, new XdrEncoder().writeLong(id).writeFixedOpaque(verifier))).status();
    }

    @Test void setClientIdCasesOfMinorVersionZero() {
        Set first = setClientId("v40", 1, ALICE);
        Set replaced = setClientId("v40", 1, ALICE); // an unconfirmed record is replaced, whatever its verifier
        assertThat(replaced.id()).isNotEqualTo(first.id());
        assertThat(confirm(first.id(), first.confirm(), ALICE)).isEqualTo(Nfs4Status.STALE_CLIENTID);
        assertThat(confirm(replaced.id(), replaced.confirm(), ALICE)).isEqualTo(Nfs4Status.NFS4_OK);
        assertThat(confirm(replaced.id(), replaced.confirm(), ALICE)).as("a retransmitted confirm").isEqualTo(Nfs4Status.NFS4_OK);

        // the confirmed client again with its verifier: a callback update, same id, a new confirm verifier
        Set update = setClientId("v40", 1, ALICE);
        assertThat(update.id()).isEqualTo(replaced.id());
        assertThat(update.confirm()).isNotEqualTo(replaced.confirm());
        assertThat(confirm(update.id(), update.confirm(), ALICE)).isEqualTo(Nfs4Status.NFS4_OK);

        // rebooted: a new id; the old one works until the new one is confirmed
        Set rebooted = setClientId("v40", 2, ALICE);
        assertThat(rebooted.id()).isNotEqualTo(replaced.id());
        assertThat(nfs.compoundOn(conn, ALICE, 0, new OpCall(Op.RENEW, new XdrEncoder().writeLong(replaced.id()))).status()).isEqualTo(Nfs4Status.NFS4_OK);
        assertThat(confirm(rebooted.id(), rebooted.confirm(), ALICE)).isEqualTo(Nfs4Status.NFS4_OK);
        assertThat(nfs.compoundOn(conn, ALICE, 0, new OpCall(Op.RENEW, new XdrEncoder().writeLong(replaced.id()))).status()).isEqualTo(Nfs4Status.STALE_CLIENTID);

        // another principal may take an owner that holds no state
        assertThat(setClientId("v40", 2, BOB).status()).isEqualTo(Nfs4Status.NFS4_OK);
    }
}
