package dev.cairn.master.ratis;

import static org.assertj.core.api.Assertions.assertThat;

import dev.cairn.core.env.Address;
import dev.cairn.core.real.RealRuntime;
import dev.cairn.master.MasterConfig;
import dev.cairn.master.MasterReplica;
import dev.cairn.master.MasterReplicaAccess;
import dev.cairn.master.meta.MetaCommand;
import dev.cairn.core.proto.Types.DirEntry;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Three master replicas on the real runtime (RocksDB stores, Ratis over loopback sockets) with snapshots every
 * few entries: the log is purged behind them, and a master whose disk was replaced (store and log gone) comes back
 * by installing a snapshot written from another master's store, then follows the log. Its namespace must then be
 * the others', and its log on disk must not hold the purged entries.
 */
class RatisMasterGroupTest {
    static final RatisLog.Tuning TUNING = new RatisLog.Tuning(40, 4096);

    @TempDir Path dir;

    @Test void aMasterWithAReplacedDiskRejoinsFromASnapshotAndHoldsTheSameNamespace() throws Exception {
        List<Address> group = RatisLog.freeLoopbackGroup(3);
        List<RatisLog.Peer> peers = RatisLog.Peer.of(group);
        try (RealRuntime rt = new RealRuntime()) {
            @SuppressWarnings("unchecked")
            RealRuntime.Handle<MasterReplica>[] m = new RealRuntime.Handle[3];
            for (int i = 0; i < 3; i++) m[i] = start(rt, peers, group.get(i), i);
            int leader = awaitLeader(m, -1);
            for (int n = 0; n < 150; n++) mkdir(m[leader], "/old" + n);
            int wiped = (leader + 1) % 3;
            rt.stop(m[wiped]);
            RealWaits.deleteTree(dir.resolve("m" + wiped));
            leader = awaitLeader(m, wiped);
            for (int n = 0; n < 150; n++) mkdir(m[leader], "/new" + n);
            m[wiped] = start(rt, peers, group.get(wiped), wiped);
            long want = m[leader].call(MasterReplica::appliedIndex);
            RealRuntime.Handle<MasterReplica> back = m[wiped];
            RealWaits.await("the replaced master catches up", () -> back.call(MasterReplica::appliedIndex) >= want);
            List<String> expected = names(m[leader]);
            assertThat(expected).hasSize(300);
            assertThat(names(back)).isEqualTo(expected);
            // the log behind the snapshots was purged, so a snapshot did the catching up
            assertThat((int) back.<Integer>call(r -> MasterReplicaAccess.metaLog(r).installs())).as("snapshots installed on the replaced master").isEqualTo(1);
            // and it follows the log after it
            mkdir(m[leader], "/last");
            long last = m[leader].call(MasterReplica::appliedIndex);
            RealWaits.await("the replaced master applies new entries", () -> back.call(MasterReplica::appliedIndex) >= last);
            assertThat(names(back)).contains("last");
            // a plain restart of a master whose store is ahead of its latest snapshot: Ratis replays from the snapshot,
            // the entries the store holds are skipped, not delivered again
            int other = 3 - leader - wiped;
            rt.stop(m[other]);
            m[other] = start(rt, peers, group.get(other), other);
            mkdir(m[leader], "/after-restart");
            long end = m[leader].call(MasterReplica::appliedIndex);
            RealRuntime.Handle<MasterReplica> restarted = m[other];
            RealWaits.await("the restarted master catches up", () -> restarted.call(MasterReplica::appliedIndex) >= end);
            assertThat(names(restarted)).isEqualTo(names(m[leader]));
            assertThat(restarted.<String>call(r -> MasterReplicaAccess.metaLog(r).broken())).isNull();
            assertThat((long) restarted.<Long>call(r -> MasterReplicaAccess.metaLog(r).redelivered())).as("entries delivered twice").isZero();
        }
    }

    private RealRuntime.Handle<MasterReplica> start(RealRuntime rt, List<RatisLog.Peer> peers, Address a, int i) {
        Path d = dir.resolve("m" + i);
        MasterConfig config = MasterConfig.defaults(a);
        return rt.start("m" + i, d, a, List.of(), env -> new MasterReplica(env, config, new RatisLog(peers, a, d.resolve("raft"), env.scheduler(), TUNING)));
    }

    private static int awaitLeader(RealRuntime.Handle<MasterReplica>[] m, int skip) {
        int[] found = {-1};
        RealWaits.await("a serving leader", () -> {
            for (int i = 0; i < m.length; i++) {
                if (i != skip && m[i].call(MasterReplica::serving)) { found[0] = i; return true; }
            }
            return false;
        });
        return found[0];
    }

    private static void mkdir(RealRuntime.Handle<MasterReplica> leader, String path) throws Exception {
        var done = new java.util.concurrent.CompletableFuture<Object>();
        leader.run(r -> MasterReplicaAccess.metaLog(r).submit(new MetaCommand.Mkdir(path, 1, 0)).onComplete((v, e) -> {
            if (e != null) done.completeExceptionally(e); else done.complete(v);
        }));
        done.get(30, TimeUnit.SECONDS);
    }

    private static List<String> names(RealRuntime.Handle<MasterReplica> h) {
        return h.call(r -> r.namespace().list("/").stream().map(DirEntry::name).sorted().toList());
    }
}
