package dev.cairn.chaos;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.cairn.core.env.Address;
import dev.cairn.core.proto.CairnException;
import dev.cairn.core.proto.Status;
import dev.cairn.core.proto.Types.DirEntry;
import dev.cairn.core.real.RealRuntime;
import dev.cairn.master.MasterConfig;
import dev.cairn.master.MasterReplica;
import dev.cairn.master.ratis.RatisLog;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code cairn masters add|remove} end to end on the real runtime: a client given one master asks the group (RPC,
 * leader, Ratis's joint consensus) to take a fourth master, which catches up and then holds the namespace, and
 * then to drop the leader itself; another is elected and clients go on.
 */
class MasterMembershipTest {
    @TempDir Path dir;

    @Test void aMasterIsAddedThenTheLeaderIsRemovedAndTheGroupGoesOn() throws Exception {
        List<Address> all = RatisLog.freeLoopbackGroup(4);
        List<Address> first = all.subList(0, 3);
        try (RealRuntime rt = new RealRuntime()) {
            List<RealRuntime.Handle<MasterReplica>> m = new ArrayList<>();
            for (int i = 0; i < 3; i++) m.add(start(rt, first, all.get(i), i));
            try (RealClient c = RealClient.on(rt, all.get(0))) {
                for (int n = 0; n < 50; n++) c.mkdir("/before" + n);

                // the new master starts with the group and itself as its peers, and counts only once it is added
                m.add(start(rt, all, all.get(3), 3));
                List<String> members = c.await(x -> x.changeMasters(all.get(3), true));
                assertThat(members).containsExactlyInAnyOrderElementsOf(names(all));
                await("every master knows the group of four", () -> {
                    for (Address a : all) if (!status(c, a).members().containsAll(names(all))) return false;
                    return true;
                });
                c.mkdir("/after-add");
                RealRuntime.Handle<MasterReplica> added = m.get(3);
                int leader = leader(m, -1);
                long applied = m.get(leader).call(MasterReplica::appliedIndex);
                await("the added master catches up", () -> added.call(MasterReplica::appliedIndex) >= applied);
                assertThat(names(added)).isEqualTo(names(m.get(leader))).contains("before0", "before49", "after-add");
                // adding it again changes nothing
                List<String> again = c.await(x -> x.changeMasters(all.get(3), true));
                assertThat(again).containsExactlyInAnyOrderElementsOf(names(all));

                // the leader removes itself: the group of three left elects one of its own and serves
                Address gone = all.get(leader);
                members = c.await(x -> x.changeMasters(gone, false));
                assertThat(members).hasSize(3).doesNotContain(gone.toString());
                c.mkdir("/after-remove");
                int next = leader(m, leader);
                assertThat(status(c, all.get(next)).members()).containsExactlyInAnyOrderElementsOf(members);
                await("the removed master leads no more", () -> !m.get(leader).call(MasterReplica::serving));
                assertThat(names(m.get(next))).contains("after-add", "after-remove");

                // the group's last masters cannot all go: removing down to one is allowed, to none refused
                List<Address> rest = new ArrayList<>();
                for (String s : members) rest.add(Address.parse(s));
                c.await(x -> x.changeMasters(rest.get(0), false));
                c.await(x -> x.changeMasters(rest.get(1), false));
                List<String> last = c.await(x -> x.changeMasters(rest.get(1), false));
                assertThat(last).containsExactly(rest.get(2).toString());
                assertThatThrownBy(() -> c.await(x -> x.changeMasters(rest.get(2), false)))
                        .isInstanceOfSatisfying(CairnException.class, e -> assertThat(e.status()).isEqualTo(Status.BAD_REQUEST));
                c.mkdir("/alone");
                assertThat(names(m.get(all.indexOf(rest.get(2))))).contains("alone", "after-remove");
            }
        }
    }

    private RealRuntime.Handle<MasterReplica> start(RealRuntime rt, List<Address> peers, Address a, int i) {
        Path d = dir.resolve("m" + i);
        MasterConfig config = MasterConfig.defaults(a);
        return rt.start("m" + i, d, a, List.of(), env -> new MasterReplica(env, config, new RatisLog(RatisLog.Peer.of(peers), a, d.resolve("raft"),
                env.scheduler())));
    }

    private static dev.cairn.core.proto.MasterProtocol.ReplicaStatusReply status(RealClient c, Address a) {
        return c.await(x -> x.replicaStatus(a));
    }

    /** The master serving as leader, other than {@code skip}. */
    private static int leader(List<RealRuntime.Handle<MasterReplica>> m, int skip) {
        int[] found = {-1};
        await("a serving leader", () -> {
            for (int i = 0; i < m.size(); i++) if (i != skip && m.get(i).call(MasterReplica::serving)) { found[0] = i; return true; }
            return false;
        });
        return found[0];
    }

    private static List<String> names(List<Address> as) { return as.stream().map(Address::toString).toList(); }

    private static List<String> names(RealRuntime.Handle<MasterReplica> h) {
        return h.call(r -> r.namespace().list("/").stream().map(DirEntry::name).sorted().toList());
    }

    /** Waits up to 60 s for {@code done} (real elections and catch-up take seconds on a loaded machine). */
    private static void await(String what, BooleanSupplier done) {
        long deadline = System.nanoTime() + 60_000_000_000L;
        while (!done.getAsBoolean()) {
            if (System.nanoTime() - deadline > 0) throw new AssertionError("timed out waiting: " + what);
            try {
                Thread.sleep(50);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new AssertionError(e);
            }
        }
    }
}
