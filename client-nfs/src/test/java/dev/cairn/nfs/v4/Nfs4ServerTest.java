package dev.cairn.nfs.v4;

import static dev.cairn.nfs.NfsTestCalls.createSession;
import static dev.cairn.nfs.NfsTestCalls.exchangeId;
import static dev.cairn.nfs.NfsTestCalls.reclaimComplete;
import static dev.cairn.nfs.NfsTestCalls.sequence;
import static org.assertj.core.api.Assertions.assertThat;

import dev.cairn.nfs.NfsTestCalls;
import dev.cairn.nfs.NfsTestCalls.OpCall;
import dev.cairn.nfs.NfsTestCalls.Reply;
import dev.cairn.nfs.rpc.NfsService;
import dev.cairn.nfs.rpc.RpcReply;
import dev.cairn.nfs.v4.state.ClientTable;
import dev.cairn.nfs.xdr.XdrEncoder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** COMPOUND rules, 4.1 sessions and their reply cache, 4.0 client ids, against the gateway's NFS service. */
class Nfs4ServerTest {
    final NfsTestCalls nfs = new NfsTestCalls(1);

    /** EXCHANGE_ID then CREATE_SESSION; returns the session id. */
    byte[] session(String owner) {
        Reply x = nfs.compound(1, exchangeId(owner.getBytes(StandardCharsets.UTF_8), 42));
        assertThat(x.status()).isEqualTo(Nfs4Status.NFS4_OK);
        long clientId = x.rest().readLong();
        int seq = x.rest().readInt();
        Reply c = nfs.compound(1, createSession(clientId, seq));
        assertThat(c.status()).isEqualTo(Nfs4Status.NFS4_OK);
        return c.rest().readFixedOpaque(16);
    }

    @Test void aRetransmittedSequenceIsAnsweredFromTheSlotWithItsOwnXidAndTheSameCompound() {
        byte[] s = session("retransmit");
        List<OpCall> ops = List.of(sequence(s, 1, 0), OpCall.of(Op.PUTROOTFH), OpCall.of(Op.GETFH));
        byte[] first = nfs.run(NfsTestCalls.compoundRecord(700, 1, ops));
        // the same slot and sequence id again, under another xid (a retransmission on a new connection)
        byte[] again = nfs.run(NfsTestCalls.compoundRecord(701, 1, ops));
        assertThat(NfsTestCalls.parse(first).status()).isEqualTo(Nfs4Status.NFS4_OK);
        assertThat(NfsTestCalls.parse(again).xid()).isEqualTo(701);
        int header = RpcReply.ACCEPTED_HEADER_BYTES;
        assertThat(again).hasSize(first.length);
        assertThat(java.util.Arrays.copyOfRange(again, header, again.length))
                .as("the cached COMPOUND reply, after this call's own RPC header").isEqualTo(java.util.Arrays.copyOfRange(first, header, first.length));
        assertThat(NfsTestCalls.parse(first).xid()).as("the first reply's array is not the cache's").isEqualTo(700);
    }

    @Test void nullAndRpcLevelErrors() {
        byte[] nul = NfsTestCalls.callHeader(9, NfsService.NFS_PROGRAM, 4, NfsService.PROC_NULL, 0).toByteArray();
        assertThat(NfsTestCalls.parse(nfs.run(nul)).acceptStat()).isEqualTo(RpcReply.SUCCESS);
        byte[] mount = NfsTestCalls.callHeader(9, 100005, 3, 0, 0).toByteArray();
        assertThat(NfsTestCalls.parse(nfs.run(mount)).acceptStat()).isEqualTo(RpcReply.PROG_UNAVAIL);
        byte[] v3 = NfsTestCalls.callHeader(9, NfsService.NFS_PROGRAM, 3, 0, 0).toByteArray();
        Reply r = NfsTestCalls.parse(nfs.run(v3));
        assertThat(r.acceptStat()).isEqualTo(RpcReply.PROG_MISMATCH);
        assertThat(r.rest().readInt()).isEqualTo(4);
        byte[] proc7 = NfsTestCalls.callHeader(9, NfsService.NFS_PROGRAM, 4, 7, 0).toByteArray();
        assertThat(NfsTestCalls.parse(nfs.run(proc7)).acceptStat()).isEqualTo(RpcReply.PROC_UNAVAIL);
        byte[] truncated = NfsTestCalls.callHeader(9, NfsService.NFS_PROGRAM, 4, NfsService.PROC_COMPOUND, 0).writeInt(5).toByteArray();
        assertThat(NfsTestCalls.parse(nfs.run(truncated)).acceptStat()).isEqualTo(RpcReply.GARBAGE_ARGS);
        byte[] rpc3 = NfsTestCalls.callHeader(9, NfsService.NFS_PROGRAM, 4, 0, 0).toByteArray();
        rpc3[11] = 3; // RPC version 3
        assertThat(NfsTestCalls.parse(nfs.run(rpc3)).acceptStat()).isEqualTo(-1); // MSG_DENIED
        assertThat(nfs.run(new byte[] {1, 2, 3})).isNull(); // no xid: nothing to answer
    }

    /** RFC 7530 §16.22.4: with no public file handle configured, PUTPUBFH puts the root's, in either minor version. */
    @Test void thePublicHandleIsTheRoot() {
        Reply root = nfs.compound(0, OpCall.of(Op.PUTROOTFH), OpCall.of(Op.GETFH));
        Reply pub = nfs.compound(0, OpCall.of(Op.PUTPUBFH), OpCall.of(Op.GETFH));
        assertThat(pub.status()).isEqualTo(Nfs4Status.NFS4_OK);
        for (Reply r : new Reply[] {root, pub}) {
            assertThat(r.rest().readInt()).isEqualTo(Op.GETFH);
            assertThat(r.rest().readInt()).isEqualTo(Nfs4Status.NFS4_OK);
        }
        assertThat(pub.rest().readOpaque(128)).isEqualTo(root.rest().readOpaque(128));
    }

    @Test void minorVersionThreeIsRefusedSoClientsFallBack() {
        Reply r = nfs.compound(3, OpCall.of(Op.PUTROOTFH));
        assertThat(r.status()).isEqualTo(Nfs4Status.MINOR_VERS_MISMATCH);
        assertThat(r.results()).isEmpty();
    }

    @Test void minorVersionTwoIsServedWithItsOptionalOperationsNotSupported() {
        Reply x = nfs.compound(2, exchangeId("v42".getBytes(StandardCharsets.UTF_8), 42));
        assertThat(x.status()).isEqualTo(Nfs4Status.NFS4_OK);
        long clientId = x.rest().readLong();
        int seq = x.rest().readInt();
        Reply c = nfs.compound(2, createSession(clientId, seq));
        assertThat(c.status()).isEqualTo(Nfs4Status.NFS4_OK);
        byte[] s = c.rest().readFixedOpaque(16);
        Reply copy = nfs.compound(2, sequence(s, 1, 0), OpCall.of(Op.PUTROOTFH), OpCall.of(Op.COPY));
        assertThat(copy.status()).isEqualTo(Nfs4Status.NOTSUPP);
        // the same operation number is no operation at all in 4.1
        byte[] s41 = session("v41");
        assertThat(nfs.compound(1, sequence(s41, 1, 0), OpCall.of(Op.SEEK)).status()).isEqualTo(Nfs4Status.OP_ILLEGAL);
    }

    /**
     * RFC 8276's operations extend 4.2; a 4.1 COMPOUND may carry them too (known operations there),
     * a 4.0 one may not (OP_ILLEGAL), and xattr_support is an attribute of 4.1 and 4.2 only.
     */
    @Test void theXattrOperationsAreServedFromMinorVersionOne() {
        byte[] s = session("xattr");
        for (int op : new int[] {Op.GETXATTR, Op.SETXATTR, Op.LISTXATTRS, Op.REMOVEXATTR}) {
            Reply r = nfs.compound(1, sequence(s, 1 + op - Op.GETXATTR, 0), OpCall.of(op));
            // this server has no files: a known operation it cannot serve is NOTSUPP, an unknown one would be OP_ILLEGAL
            assertThat(r.status()).as(Op.name(op)).isEqualTo(Nfs4Status.NOTSUPP);
            assertThat(nfs.compound(0, OpCall.of(op)).status()).as(Op.name(op) + " in 4.0").isEqualTo(Nfs4Status.OP_ILLEGAL);
        }
        assertThat(Fattr.isSet(Fattr.supported(0), Fattr.XATTR_SUPPORT)).isFalse();
        assertThat(Fattr.isSet(Fattr.supported(1), Fattr.XATTR_SUPPORT)).isTrue();
        assertThat(Fattr.isSet(Fattr.supported(2), Fattr.XATTR_SUPPORT)).isTrue();
    }

    @Test void sessionRulesOfMinorVersionOne() {
        assertThat(nfs.compound(1, OpCall.of(Op.PUTROOTFH)).status()).isEqualTo(Nfs4Status.OP_NOT_IN_SESSION);
        assertThat(nfs.compound(1, exchangeId(new byte[] {1}, 1), OpCall.of(Op.PUTROOTFH)).status()).isEqualTo(Nfs4Status.NOT_ONLY_OP);
        byte[] s = session("a");
        assertThat(nfs.compound(1, sequence(s, 1, 0), sequence(s, 2, 0)).status()).isEqualTo(Nfs4Status.SEQUENCE_POS);
        assertThat(nfs.compound(1, sequence(new byte[16], 1, 0)).status()).isEqualTo(Nfs4Status.BADSESSION);
        assertThat(nfs.compound(1, sequence(s, 2, 0), OpCall.of(Op.RENEW)).status()).isEqualTo(Nfs4Status.NOTSUPP);
        Reply ok = nfs.compound(1, sequence(s, 3, 0), OpCall.of(Op.PUTROOTFH), OpCall.of(Op.GETFH));
        assertThat(ok.status()).isEqualTo(Nfs4Status.NFS4_OK);
        assertThat(nfs.compound(1, sequence(s, 9, 0)).status()).isEqualTo(Nfs4Status.SEQ_MISORDERED);
        assertThat(nfs.compound(1, sequence(s, 1, 99)).status()).isIn(Nfs4Status.BADSLOT, Nfs4Status.BAD_HIGH_SLOT);
        assertThat(nfs.compound(1, sequence(s, 4, 0), OpCall.of(9999)).status()).isEqualTo(Nfs4Status.OP_ILLEGAL);
        assertThat(nfs.compound(1, sequence(s, 5, 0), OpCall.of(Op.GETFH)).status()).isEqualTo(Nfs4Status.NOFILEHANDLE);
        assertThat(nfs.compound(1, sequence(s, 6, 0), OpCall.of(Op.LAYOUTGET)).status()).isEqualTo(Nfs4Status.NOTSUPP);
    }

    @Test void aRetransmissionIsAnsweredFromTheSlotCacheNotRunAgain() {
        byte[] s = session("b");
        Reply first = nfs.compoundAs(500, 1, sequence(s, 1, 0), reclaimComplete(false));
        assertThat(first.status()).isEqualTo(Nfs4Status.NFS4_OK);
        // running RECLAIM_COMPLETE again would be COMPLETE_ALREADY; the retransmission gets the first answer
        byte[] again = nfs.run(NfsTestCalls.compoundRecord(500, 1, List.of(sequence(s, 1, 0), reclaimComplete(false))));
        assertThat(NfsTestCalls.parse(again).status()).isEqualTo(Nfs4Status.NFS4_OK);
        assertThat(nfs.compound(1, sequence(s, 2, 0), reclaimComplete(false)).status()).isEqualTo(Nfs4Status.COMPLETE_ALREADY);
        // each slot has its own sequence
        assertThat(nfs.compound(1, sequence(s, 1, 1), OpCall.of(Op.PUTROOTFH)).status()).isEqualTo(Nfs4Status.NFS4_OK);
    }

    @Test void createSessionReplaysAndClientIdsGoStaleAcrossRestarts() {
        Reply x = nfs.compound(1, exchangeId("c".getBytes(StandardCharsets.UTF_8), 1));
        long id = x.rest().readLong();
        int seq = x.rest().readInt();
        Reply a = nfs.compound(1, createSession(id, seq));
        Reply b = nfs.compound(1, createSession(id, seq)); // the reply was lost: the same session comes back
        assertThat(b.rest().readFixedOpaque(16)).isEqualTo(a.rest().readFixedOpaque(16));
        assertThat(nfs.compound(1, createSession(id, seq + 5)).status()).isEqualTo(Nfs4Status.SEQ_MISORDERED);
        NfsTestCalls restarted = new NfsTestCalls(2);
        assertThat(restarted.compound(1, createSession(id, seq + 1)).status()).isEqualTo(Nfs4Status.STALE_CLIENTID);
        // the same client asking again keeps its id, now confirmed
        Reply again = nfs.compound(1, exchangeId("c".getBytes(StandardCharsets.UTF_8), 1));
        assertThat(again.rest().readLong()).isEqualTo(id);
    }

    /**
     * RFC 8881 §8.3: every SEQUENCE renews its client's lease (a 4.1 client sends nothing else to keep it), as do
     * EXCHANGE_ID and CREATE_SESSION; a client that goes quiet for a lease is forgotten with its sessions.
     */
    @Test void sequenceRenewsTheLeaseAndSilenceEndsIt() {
        long step = ClientTable.LEASE_NANOS * 6 / 10;
        Reply x = nfs.compound(1, exchangeId("renewing".getBytes(StandardCharsets.UTF_8), 7));
        long id = x.rest().readLong();
        int seq = x.rest().readInt();
        nfs.clock.nanos += step;
        assertThat(nfs.service.nfs4().expireClients()).isZero();
        Reply c = nfs.compound(1, createSession(id, seq));
        assertThat(c.status()).isEqualTo(Nfs4Status.NFS4_OK);
        byte[] s = c.rest().readFixedOpaque(16);
        nfs.clock.nanos += step;
        assertThat(nfs.service.nfs4().expireClients()).as("CREATE_SESSION renewed the lease").isZero();
        // the same client asking again (case 2 of §18.35.4) renews too
        assertThat(nfs.compound(1, exchangeId("renewing".getBytes(StandardCharsets.UTF_8), 7)).status()).isEqualTo(Nfs4Status.NFS4_OK);
        nfs.clock.nanos += step;
        assertThat(nfs.service.nfs4().expireClients()).as("EXCHANGE_ID renewed the lease").isZero();
        for (int i = 1; i <= 5; i++) {
            assertThat(nfs.compound(1, sequence(s, i, 0)).status()).isEqualTo(Nfs4Status.NFS4_OK);
            nfs.clock.nanos += step;
            assertThat(nfs.service.nfs4().expireClients()).as("SEQUENCE %d renewed the lease", i).isZero();
        }
        nfs.clock.nanos += ClientTable.LEASE_NANOS;
        assertThat(nfs.service.nfs4().expireClients()).isEqualTo(1);
        assertThat(nfs.compound(1, sequence(s, 6, 0)).status()).isEqualTo(Nfs4Status.BADSESSION);
    }

    /**
     * RFC 8881 §18.35.4/§18.36.4: an EXCHANGE_ID reply says whether the client id is confirmed, and CREATE_SESSION is
     * what confirms it; its reply carries the negotiated fore and back channel attributes, whole.
     */
    @Test void createSessionConfirmsTheClientIdAndItsReplyIsWhole() {
        Reply x = nfs.compound(1, exchangeId("confirming".getBytes(StandardCharsets.UTF_8), 3));
        long id = x.rest().readLong();
        int seq = x.rest().readInt();
        int flags = x.rest().readInt();
        assertThat(flags & 0x80000000).as("EXCHGID4_FLAG_CONFIRMED_R before CREATE_SESSION").isZero();
        assertThat(flags & 0x10000).as("EXCHGID4_FLAG_USE_NON_PNFS").isNotZero();
        Reply c = nfs.compound(1, createSession(id, seq));
        assertThat(c.status()).isEqualTo(Nfs4Status.NFS4_OK);
        c.rest().readFixedOpaque(16); // session id
        assertThat(c.rest().readInt()).isEqualTo(seq);
        assertThat(c.rest().readInt()).as("csr_flags: no back channel offered").isZero();
        for (String channel : new String[] {"fore", "back"}) {
            assertThat(c.rest().readInt()).as(channel + " header padding").isZero();
            for (String limit : new String[] {"max request", "max response", "max response cached", "max operations", "max requests"}) {
                assertThat(c.rest().readInt()).as(channel + " " + limit).isPositive();
            }
            assertThat(c.rest().readInt()).as(channel + " RDMA attributes").isZero();
        }
        assertThat(c.rest().remaining()).as("nothing after the back channel's attributes").isZero();
        Reply again = nfs.compound(1, exchangeId("confirming".getBytes(StandardCharsets.UTF_8), 3));
        assertThat(again.rest().readLong()).isEqualTo(id);
        again.rest().readInt();
        assertThat(again.rest().readInt() & 0x80000000).as("EXCHGID4_FLAG_CONFIRMED_R after CREATE_SESSION").isNotZero();
    }

    @Test void destroySessionAndClientId() {
        Reply x = nfs.compound(1, exchangeId("d".getBytes(StandardCharsets.UTF_8), 1));
        long id = x.rest().readLong();
        int seq = x.rest().readInt();
        byte[] s = nfs.compound(1, createSession(id, seq)).rest().readFixedOpaque(16);
        assertThat(nfs.compound(1, new OpCall(Op.DESTROY_CLIENTID, new XdrEncoder().writeLong(id))).status()).isEqualTo(Nfs4Status.CLIENTID_BUSY);
        assertThat(nfs.compound(1, new OpCall(Op.DESTROY_SESSION, new XdrEncoder().writeFixedOpaque(s))).status()).isEqualTo(Nfs4Status.NFS4_OK);
        assertThat(nfs.compound(1, sequence(s, 1, 0)).status()).isEqualTo(Nfs4Status.BADSESSION);
        assertThat(nfs.compound(1, new OpCall(Op.DESTROY_CLIENTID, new XdrEncoder().writeLong(id))).status()).isEqualTo(Nfs4Status.NFS4_OK);
    }

    @Test void minorVersionZeroClientIds() {
        XdrEncoder a = new XdrEncoder().writeLong(7).writeString("linux-0").writeInt(0x40000000).writeString("tcp").writeString("127.0.0.1.3.4").writeInt(1);
        Reply r = nfs.compound(0, new OpCall(Op.SETCLIENTID, a));
        assertThat(r.status()).isEqualTo(Nfs4Status.NFS4_OK);
        long id = r.rest().readLong();
        byte[] confirm = r.rest().readFixedOpaque(8);
        assertThat(nfs.compound(0, new OpCall(Op.RENEW, new XdrEncoder().writeLong(id))).status()).isEqualTo(Nfs4Status.STALE_CLIENTID);
        assertThat(nfs.compound(0, new OpCall(Op.SETCLIENTID_CONFIRM, new XdrEncoder().writeLong(id).writeFixedOpaque(new byte[8])))
                .status()).isEqualTo(Nfs4Status.STALE_CLIENTID);
        assertThat(nfs.compound(0, new OpCall(Op.SETCLIENTID_CONFIRM, new XdrEncoder().writeLong(id).writeFixedOpaque(confirm)))
                .status()).isEqualTo(Nfs4Status.NFS4_OK);
        assertThat(nfs.compound(0, new OpCall(Op.RENEW, new XdrEncoder().writeLong(id))).status()).isEqualTo(Nfs4Status.NFS4_OK);
        assertThat(nfs.compound(0, OpCall.of(Op.SEQUENCE)).status()).isEqualTo(Nfs4Status.OP_ILLEGAL);
        assertThat(nfs.compound(0, OpCall.of(Op.PUTROOTFH), OpCall.of(Op.SAVEFH), OpCall.of(Op.RESTOREFH), OpCall.of(Op.GETFH)).status())
                .isEqualTo(Nfs4Status.NFS4_OK);
        // leases run on the monotonic clock: a client that stops renewing is forgotten, and its RENEW is EXPIRED
        // (RFC 7530 §16.29.5: its state is gone), where an id never issued is STALE_CLIENTID
        nfs.clock.nanos += ClientTable.LEASE_NANOS + 1;
        assertThat(nfs.service.nfs4().expireClients()).isEqualTo(1);
        assertThat(nfs.compound(0, new OpCall(Op.RENEW, new XdrEncoder().writeLong(id))).status()).isEqualTo(Nfs4Status.EXPIRED);
        assertThat(nfs.compound(0, new OpCall(Op.RENEW, new XdrEncoder().writeLong(id + 1))).status()).isEqualTo(Nfs4Status.STALE_CLIENTID);
    }

    @Test void limitsAndBadArguments() {
        List<OpCall> many = new ArrayList<>();
        for (int i = 0; i < Nfs4Server.MAX_OPS + 1; i++) many.add(OpCall.of(Op.PUTROOTFH));
        Reply over = NfsTestCalls.parse(nfs.run(NfsTestCalls.compoundRecord(3, 0, many)));
        assertThat(over.status()).isEqualTo(Nfs4Status.RESOURCE);
        Reply over41 = NfsTestCalls.parse(nfs.run(NfsTestCalls.compoundRecord(3, 1, many)));
        assertThat(over41.status()).isEqualTo(Nfs4Status.TOO_MANY_OPS);
        // a PUTFH whose length runs past the record, and one that is not our handle
        assertThat(nfs.compound(0, new OpCall(Op.PUTFH, new XdrEncoder().writeInt(100))).status()).isEqualTo(Nfs4Status.BADXDR);
        assertThat(nfs.compound(0, new OpCall(Op.PUTFH, new XdrEncoder().writeOpaque(new byte[20]))).status()).isEqualTo(Nfs4Status.BADHANDLE);
        assertThat(nfs.compound(0, new OpCall(Op.PUTFH, new XdrEncoder().writeInt(129).writeFixedOpaque(new byte[129]))).status())
                .isEqualTo(Nfs4Status.BADXDR);
        FileHandle other = new FileHandle(99, 1, 0);
        assertThat(nfs.compound(0, new OpCall(Op.PUTFH, new XdrEncoder().writeOpaque(other.encode()))).status()).isEqualTo(Nfs4Status.STALE);
        // a numops that claims more than is there
        byte[] lying = NfsTestCalls.compoundRecord(4, 0, List.of(OpCall.of(Op.PUTROOTFH)));
        lying[lying.length - 5] = 9; // numops 9, one op present
        assertThat(NfsTestCalls.parse(nfs.run(lying)).status()).isEqualTo(Nfs4Status.BADXDR);
    }
}
