package dev.cairn.nfs.v4;

import static dev.cairn.nfs.NfsTestCalls.createSession;
import static dev.cairn.nfs.NfsTestCalls.exchangeId;
import static dev.cairn.nfs.NfsTestCalls.sequence;
import static org.assertj.core.api.Assertions.assertThat;

import dev.cairn.nfs.NfsTestCalls;
import dev.cairn.nfs.NfsTestCalls.OpCall;
import dev.cairn.nfs.NfsTestCalls.Reply;
import dev.cairn.nfs.v4.state.ChannelAttrs;
import dev.cairn.nfs.xdr.XdrEncoder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * What a 4.1 session negotiates and then holds the client to (RFC 8881 §18.36, §18.46, §18.37): channel
 * sizes, operation counts, reply sizes and the reply cache's size, and which connections may destroy it.
 */
class SessionLimitsTest {
    final NfsTestCalls nfs = new NfsTestCalls(3);
    static final int[] ROOMY = {8192, 8192, 8192, 128, 8};

    long clientId;
    int seq;

    void exchange(String owner) {
        Reply x = nfs.compound(1, exchangeId(owner.getBytes(StandardCharsets.UTF_8), 42));
        assertThat(x.status()).isEqualTo(Nfs4Status.NFS4_OK);
        clientId = x.rest().readLong();
        seq = x.rest().readInt();
    }

    /** The granted fore channel {maxRequestSize, maxResponseSize, maxResponseSizeCached, maxOperations, maxRequests} after the session id. */
    static int[] foreGranted(Reply created) {
        created.rest().readFixedOpaque(16 + 8); // session id, sequence, flags
        created.rest().readInt(); // header pad
        int[] out = new int[5];
        for (int i = 0; i < 5; i++) out[i] = created.rest().readInt();
        return out;
    }

    byte[] sessionWith(String owner, int[] fore) {
        exchange(owner);
        Reply c = nfs.compound(1, createSession(clientId, seq, 0, fore, ROOMY));
        assertThat(c.status()).isEqualTo(Nfs4Status.NFS4_OK);
        return c.rest().readFixedOpaque(16);
    }

    @Test void createSessionRefusesChannelsThatCouldCarryNothingAndNeverRaisesWhatWasAsked() {
        exchange("sizes");
        assertThat(nfs.compound(1, createSession(clientId, seq, 0xf, ROOMY, ROOMY)).status()).as("an undefined flag").isEqualTo(Nfs4Status.INVAL);
        assertThat(nfs.compound(1, createSession(clientId, seq, 0, new int[] {8192, 0, 8192, 128, 8}, ROOMY)).status())
                .as("no room for any reply").isEqualTo(Nfs4Status.TOOSMALL);
        assertThat(nfs.compound(1, createSession(clientId, seq, 0, new int[] {20, 8192, 8192, 128, 8}, ROOMY)).status())
                .as("no room for any request").isEqualTo(Nfs4Status.TOOSMALL);
        assertThat(nfs.compound(1, createSession(clientId, seq, 0, ROOMY, new int[] {10, 8192, 8192, 128, 1})).status())
                .as("a back channel that could carry nothing").isEqualTo(Nfs4Status.TOOSMALL);
        // none of those refusals used the sequence id up
        Reply ok = nfs.compound(1, createSession(clientId, seq, 0, new int[] {400, 400, 10, 4, 500}, ROOMY));
        assertThat(ok.status()).isEqualTo(Nfs4Status.NFS4_OK);
        int[] granted = foreGranted(ok);
        assertThat(granted[0]).as("request size as asked").isEqualTo(400);
        assertThat(granted[1]).as("reply size as asked, not raised").isEqualTo(400);
        assertThat(granted[2]).isEqualTo(10);
        assertThat(granted[3]).isEqualTo(4);
        assertThat(granted[4]).as("slots lowered to the server's limit").isLessThan(500).isPositive();
        assertThat(ChannelAttrs.MIN_REQUEST).isLessThan(400);
    }

    @Test void sequenceHoldsTheClientToItsOperationCountAndRequestSize() {
        byte[] s = sessionWith("ops", new int[] {512, 8192, 8192, 4, 8});
        Reply four = nfs.compound(1, sequence(s, 1, 0), OpCall.of(Op.PUTROOTFH), OpCall.of(Op.GETFH), OpCall.of(Op.SAVEFH));
        assertThat(four.status()).isEqualTo(Nfs4Status.NFS4_OK);
        Reply five = nfs.compound(1, sequence(s, 2, 0), OpCall.of(Op.PUTROOTFH), OpCall.of(Op.GETFH), OpCall.of(Op.SAVEFH), OpCall.of(Op.RESTOREFH));
        assertThat(five.status()).isEqualTo(Nfs4Status.TOO_MANY_OPS);
        OpCall longLookup = new OpCall(Op.LOOKUP, new XdrEncoder().writeString("12345".repeat(100)));
        assertThat(nfs.compound(1, sequence(s, 2, 0), OpCall.of(Op.PUTROOTFH), longLookup).status()).isEqualTo(Nfs4Status.REQ_TOO_BIG);
        // neither refusal took the slot's sequence id
        assertThat(nfs.compound(1, sequence(s, 2, 0)).status()).isEqualTo(Nfs4Status.NFS4_OK);
    }

    @Test void aReplyLargerThanTheSessionTakesGetsRepTooBigInPlaceOfTheOperation() {
        byte[] s = sessionWith("replies", new int[] {8192, 300, 8192, 64, 8});
        List<OpCall> ops = new ArrayList<>(List.of(sequence(s, 1, 0, false), OpCall.of(Op.PUTROOTFH)));
        for (int i = 0; i < 12; i++) ops.add(OpCall.of(Op.GETFH));
        byte[] reply = nfs.run(NfsTestCalls.compoundRecord(77, 1, ops));
        Reply r = NfsTestCalls.parse(reply);
        assertThat(r.status()).isEqualTo(Nfs4Status.REP_TOO_BIG);
        assertThat(reply.length).isLessThanOrEqualTo(300);
    }

    @Test void aReplyTheClientAskedToCacheMustFitTheCache() {
        byte[] s = sessionWith("cache", new int[] {8192, 8192, 10, 64, 8});
        assertThat(nfs.compound(1, sequence(s, 1, 0, true)).status()).isEqualTo(Nfs4Status.REP_TOO_BIG_TO_CACHE);
        // not asking for the cache is fine, and the refusal above left the slot where it was
        assertThat(nfs.compound(1, sequence(s, 1, 0, false)).status()).isEqualTo(Nfs4Status.NFS4_OK);
    }

    @Test void destroySessionComesLastOrAloneFromABoundConnection() {
        byte[] s = sessionWith("destroy", ROOMY);
        OpCall destroy = new OpCall(Op.DESTROY_SESSION, new XdrEncoder().writeFixedOpaque(s));
        assertThat(nfs.compound(1, destroy, OpCall.of(Op.PUTROOTFH)).status()).isEqualTo(Nfs4Status.NOT_ONLY_OP);
        assertThat(nfs.compound(1, sequence(s, 1, 0), destroy, OpCall.of(Op.PUTROOTFH)).status()).isEqualTo(Nfs4Status.NOT_ONLY_OP);
        var rogue = new CompoundState.Connection(99, "127.0.0.1");
        assertThat(nfs.compoundOn(rogue, 0, 1, destroy).status()).isEqualTo(Nfs4Status.CONN_NOT_BOUND_TO_SESSION);
        assertThat(nfs.compoundOn(rogue, 0, 1, sequence(s, 2, 0)).status()).as("binds the connection").isEqualTo(Nfs4Status.NFS4_OK);
        assertThat(nfs.compoundOn(rogue, 0, 1, destroy).status()).isEqualTo(Nfs4Status.NFS4_OK);
        assertThat(nfs.compound(1, sequence(s, 3, 0)).status()).isEqualTo(Nfs4Status.BADSESSION);
    }

    @Test void theReplyCachesOfAllSessionsShareOneBudgetSlotsShrinkThenNospc() {
        long budget = dev.cairn.nfs.v4.state.ClientTable.MAX_REPLY_CACHE_BYTES;
        int cached = ClientTableLimits.CACHED, slots = ClientTableLimits.SLOTS;
        int[] full = {1 << 20, 1 << 20, cached, 16, slots};
        long perSession = (long) cached * slots;
        int fit = (int) (budget / perSession);
        List<byte[]> made = new ArrayList<>();
        for (int i = 0; i < fit - 1; i++) made.add(sessionWith("budget-" + i, full));
        // one asking for half the slots, then one asking for all of them gets what is left: half
        made.add(sessionWith("half", new int[] {1 << 20, 1 << 20, cached, 16, slots / 2}));
        exchange("squeezed");
        Reply squeezed = nfs.compound(1, createSession(clientId, seq, 0, full, ROOMY));
        assertThat(squeezed.status()).isEqualTo(Nfs4Status.NFS4_OK);
        assertThat(foreGranted(squeezed)[4]).as("slots lowered to what the budget holds").isEqualTo(slots / 2);
        assertThat(nfs.service.nfs4().clients().replyCacheReserved()).isEqualTo(budget);
        exchange("refused");
        assertThat(nfs.compound(1, createSession(clientId, seq, 0, full, ROOMY)).status()).isEqualTo(Nfs4Status.NOSPC);
        // a smaller cached reply still fits nowhere: the budget is spent
        assertThat(nfs.compound(1, createSession(clientId, seq, 0, new int[] {1 << 20, 1 << 20, 512, 16, 1}, ROOMY)).status())
                .isEqualTo(Nfs4Status.NOSPC);
        // a session destroyed gives its share back
        OpCall destroy = new OpCall(Op.DESTROY_SESSION, new XdrEncoder().writeFixedOpaque(made.get(0)));
        assertThat(nfs.compound(1, destroy).status()).isEqualTo(Nfs4Status.NFS4_OK);
        Reply again = nfs.compound(1, createSession(clientId, seq, 0, full, ROOMY));
        assertThat(again.status()).isEqualTo(Nfs4Status.NFS4_OK);
        assertThat(foreGranted(again)[4]).isEqualTo(slots);
    }

    /** The per-session caps the gateway negotiates down to. */
    static final class ClientTableLimits {
        static final int CACHED = dev.cairn.nfs.v4.state.ClientTable.LIMITS.maxResponseSizeCached();
        static final int SLOTS = dev.cairn.nfs.v4.state.ClientTable.LIMITS.maxRequests();
    }
}
