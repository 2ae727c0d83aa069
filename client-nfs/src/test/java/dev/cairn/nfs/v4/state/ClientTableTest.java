package dev.cairn.nfs.v4.state;

import static org.assertj.core.api.Assertions.assertThat;

import dev.cairn.nfs.v4.Nfs4Status;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;

/** Client records, their leases on the monotonic clock, and the sessions' share of the reply-cache budget. */
class ClientTableTest {
    static final int BOOT = 0x5eed;
    final ClientTable clients = new ClientTable(BOOT, new Random(3));
    final List<Long> removed = new ArrayList<>();

    { clients.onRemove(removed::add); }

    Client confirmed(String owner, long now) {
        Client c = clients.create(owner.getBytes(), new byte[8], 1, 0, now);
        clients.confirm(c);
        return c;
    }

    static ChannelAttrs fore(int slots, int cached) { return new ChannelAttrs(0, 1 << 20, 1 << 20, cached, 16, slots); }

    @Test void idsCarryTheBootAndAnOwnerHasOneRecordOfEachKind() {
        Client a = clients.create("a".getBytes(), new byte[8], 1, 0, 0);
        assertThat(clients.fromEarlierBoot(a.id())).isFalse();
        assertThat(clients.fromEarlierBoot(a.id() ^ (1L << 40))).isTrue();
        assertThat(clients.fromEarlierBoot(a.id() + 1)).as("same boot, never issued: not stale").isFalse();
        assertThat(clients.unconfirmedByOwner("a".getBytes())).isSameAs(a);
        Client again = clients.create("a".getBytes(), new byte[8], 1, 0, 0);
        assertThat(again.id()).isNotEqualTo(a.id());
        assertThat(clients.client(a.id())).as("the earlier unconfirmed record is replaced").isNull();
        assertThat(removed).containsExactly(a.id());
        assertThat(clients.clientCount()).isEqualTo(1);
        clients.confirm(again);
        assertThat(clients.confirmedByOwner("a".getBytes())).isSameAs(again);
        assertThat(clients.unconfirmedByOwner("a".getBytes())).isNull();
        Client reboot = clients.create("a".getBytes(), new byte[8], 1, 0, 0);
        assertThat(clients.confirmedByOwner("a".getBytes())).as("stays until the new one is confirmed").isSameAs(again);
        clients.confirm(reboot);
        assertThat(clients.client(again.id())).isNull();
        assertThat(removed).containsExactly(a.id(), again.id());
        assertThat(clients.clientCount()).isEqualTo(1);
    }

    @Test void theTableIsBounded() {
        for (int i = 0; i < ClientTable.MAX_CLIENTS; i++) assertThat(clients.create(("c" + i).getBytes(), new byte[8], 1, 0, 0)).isNotNull();
        assertThat(clients.create("one more".getBytes(), new byte[8], 1, 0, 0)).isNull();
        assertThat(clients.create("c7".getBytes(), new byte[8], 1, 0, 0)).as("replacing its own record takes no room").isNotNull();
        assertThat(clients.clientCount()).isEqualTo(ClientTable.MAX_CLIENTS);
    }

    /** A lease runs LEASE_NANOS from the last renewal: at its last nanosecond the client stays, one later it goes. */
    @Test void leasesEndOnTheMonotonicClockAndOnlyConfirmedClientsAreRememberedAsExpired() {
        long t0 = 1_000;
        Client c = confirmed("a", t0);
        Client u = clients.create("u".getBytes(), new byte[8], 1, 0, t0);
        assertThat(clients.expire(t0 + ClientTable.LEASE_NANOS)).as("the lease's last nanosecond").isZero();
        clients.renew(c, t0 + 10);
        assertThat(clients.expire(t0 + 1 + ClientTable.LEASE_NANOS)).isEqualTo(1);
        assertThat(clients.client(u.id())).isNull();
        assertThat(clients.expired(u.id())).as("never confirmed: simply unknown").isFalse();
        assertThat(clients.client(c.id())).isSameAs(c);
        assertThat(clients.expire(t0 + 11 + ClientTable.LEASE_NANOS)).isEqualTo(1);
        assertThat(clients.client(c.id())).isNull();
        assertThat(clients.expired(c.id())).isTrue();
        assertThat(clients.confirmedByOwner("a".getBytes())).isNull();
        assertThat(clients.unconfirmedByOwner("u".getBytes())).isNull();
        assertThat(removed).containsExactlyInAnyOrder(u.id(), c.id());
        assertThat(clients.expire(Long.MAX_VALUE)).isZero();
    }

    @Test void expiredIdsAreBounded() {
        List<Long> ids = new ArrayList<>();
        for (int round = 0; round <= ClientTable.MAX_EXPIRED_CLIENTS / 1000; round++) {
            for (int i = 0; i < 1000; i++) ids.add(confirmed("c" + round + "/" + i, 0).id());
            clients.expire(ClientTable.LEASE_NANOS + 1);
        }
        assertThat(ids.size()).isGreaterThan(ClientTable.MAX_EXPIRED_CLIENTS);
        assertThat(clients.expired(ids.get(0))).as("the oldest, forgotten").isFalse();
        assertThat(clients.expired(ids.get(ids.size() - 1))).isTrue();
        assertThat(clients.expired(ids.get(ids.size() - ClientTable.MAX_EXPIRED_CLIENTS))).isTrue();
        assertThat(clients.expired(ids.get(ids.size() - ClientTable.MAX_EXPIRED_CLIENTS - 1))).isFalse();
    }

    /** Each session reserves slots × cached reply size of a gateway-wide budget, given back when it or its client goes. */
    @Test void sessionsShareTheReplyCacheBudget() {
        Client c = confirmed("a", 0), d = confirmed("b", 0);
        int cached = 16 << 10, slots = 64;
        long each = (long) cached * slots;
        List<Session> made = new ArrayList<>();
        for (int i = 0; i < ClientTable.MAX_SESSIONS_PER_CLIENT; i++) made.add(clients.createSession(c, fore(slots, cached), i));
        assertThat(made).doesNotContainNull();
        assertThat(clients.createSession(c, fore(1, 1), 99)).as("sessions per client").isNull();
        assertThat(clients.replyCacheReserved()).isEqualTo(ClientTable.MAX_SESSIONS_PER_CLIENT * each);
        long room = ClientTable.MAX_REPLY_CACHE_BYTES - clients.replyCacheReserved();
        ChannelAttrs asked = fore(slots, cached);
        ChannelAttrs granted = clients.withinReplyCacheBudget(asked);
        assertThat(granted.maxRequests()).isEqualTo((int) Math.min(slots, room / cached));
        ChannelAttrs exact = fore((int) (room / cached), cached);
        assertThat(clients.withinReplyCacheBudget(exact)).as("fits exactly: unchanged").isSameAs(exact);
        Session big = clients.createSession(d, exact, 100);
        assertThat(big).isNotNull();
        assertThat(clients.replyCacheReserved()).isEqualTo(ClientTable.MAX_REPLY_CACHE_BYTES);
        clients.destroySession(big);
        Session upTo = clients.createSession(d, fore((int) (room / cached) - 1, cached), 100);
        assertThat(clients.withinReplyCacheBudget(fore(4, cached)).maxRequests()).as("room for exactly one slot").isEqualTo(1);
        assertThat(clients.withinReplyCacheBudget(fore(4, cached + 1))).isNull();
        clients.destroySession(upTo);
        big = clients.createSession(d, exact, 100);
        assertThat(clients.withinReplyCacheBudget(fore(1, 1))).as("not one slot left").isNull();
        assertThat(clients.createSession(d, fore(1, 1), 101)).isNull();
        clients.destroySession(made.get(0));
        assertThat(clients.session(made.get(0).id())).isNull();
        assertThat(clients.replyCacheReserved()).isEqualTo(ClientTable.MAX_REPLY_CACHE_BYTES - each);
        clients.destroySession(made.get(0));
        assertThat(clients.replyCacheReserved()).as("destroyed once only").isEqualTo(ClientTable.MAX_REPLY_CACHE_BYTES - each);
        clients.remove(c);
        assertThat(c.sessions()).isEmpty();
        assertThat(clients.replyCacheReserved()).isEqualTo((long) exact.maxRequests() * cached);
        assertThat(clients.session(made.get(1).id())).isNull();
        assertThat(clients.session(big.id())).isSameAs(big);
        assertThat(big.slotCount()).isEqualTo(exact.maxRequests());
        assertThat(big.isBound(100)).isTrue();
        assertThat(big.isBound(101)).isFalse();
        assertThat(big.hasId(big.id())).isTrue();
        assertThat(big.hasId(made.get(1).id())).isFalse();
    }

    /** RFC 8881 §18.36.4: the next CREATE_SESSION sequence runs, the last one is answered again, others are misordered. */
    @Test void createSessionSequencing() {
        Client c = confirmed("a", 0);
        clients.setCreateSessionSeq(c, 7);
        assertThat(clients.admitCreateSession(c, 7).status()).isEqualTo(Nfs4Status.NFS4_OK);
        assertThat(clients.admitCreateSession(c, 7).replay()).isNull();
        assertThat(clients.admitCreateSession(c, 8).status()).isEqualTo(Nfs4Status.SEQ_MISORDERED);
        clients.recordCreateSession(c, 7, new byte[] {1});
        assertThat(clients.admitCreateSession(c, 7).replay()).containsExactly(1);
        assertThat(clients.admitCreateSession(c, 8).status()).isEqualTo(Nfs4Status.NFS4_OK);
        assertThat(clients.admitCreateSession(c, 8).replay()).isNull();
        assertThat(clients.admitCreateSession(c, 9).status()).isEqualTo(Nfs4Status.SEQ_MISORDERED);
        assertThat(clients.admitCreateSession(c, 6).status()).isEqualTo(Nfs4Status.SEQ_MISORDERED);
    }

    /** RFC 8881 §2.10.6.1: each slot runs sequence ids in order; its last reply answers a retry, once kept. */
    @Test void slotsRunInOrderAndAnswerRetriesFromTheirCache() {
        Client c = confirmed("a", 0);
        Session s = clients.createSession(c, fore(2, 100), 1);
        assertThat(s.admit(2, 1)).isEqualTo(new Session.Refuse(Nfs4Status.BADSLOT));
        assertThat(s.admit(-1, 1)).isEqualTo(new Session.Refuse(Nfs4Status.BADSLOT));
        assertThat(s.admit(0, 0)).as("a slot never used").isEqualTo(new Session.Refuse(Nfs4Status.SEQ_MISORDERED));
        assertThat(s.admit(0, 2)).isEqualTo(new Session.Refuse(Nfs4Status.SEQ_MISORDERED));
        Session.Admission first = s.admit(0, 1);
        assertThat(first).isInstanceOf(Session.Execute.class);
        assertThat(s.admit(0, 1)).as("still running").isEqualTo(new Session.Refuse(Nfs4Status.DELAY));
        byte[] reply = new byte[104];
        reply[4] = 9;
        s.finish(((Session.Execute) first).slot(), reply, 4);
        assertThat(s.cachedBytes()).isEqualTo(100);
        assertThat(((Session.Replay) s.admit(0, 1)).reply()).hasSize(100).startsWith(9);
        Session.Admission second = s.admit(0, 2);
        assertThat(s.cachedBytes()).as("the slot's reply is let go when its next request runs").isZero();
        s.finish(((Session.Execute) second).slot(), new byte[105], 4);
        assertThat(s.cachedBytes()).as("101 bytes: larger than the cached size").isZero();
        assertThat(s.admit(0, 2)).isEqualTo(new Session.Refuse(Nfs4Status.RETRY_UNCACHED_REP));
        assertThat(s.admit(1, 1)).as("slots are independent").isInstanceOf(Session.Execute.class);
    }

    /** A session keeps its MAX_CONNECTIONS most recently bound connections. */
    @Test void aSessionKeepsItsMostRecentConnections() {
        Session s = clients.createSession(confirmed("a", 0), fore(1, 100), 0);
        for (long conn = 1; conn <= Session.MAX_CONNECTIONS; conn++) s.bind(conn);
        assertThat(s.isBound(0)).as("the oldest unbound").isFalse();
        assertThat(s.isBound(1)).isTrue();
        s.bind(1); // now the most recent
        s.bind(Session.MAX_CONNECTIONS + 1);
        assertThat(s.isBound(1)).isTrue();
        assertThat(s.isBound(2)).isFalse();
        assertThat(s.isBound(Session.MAX_CONNECTIONS + 1)).isTrue();
    }
}
