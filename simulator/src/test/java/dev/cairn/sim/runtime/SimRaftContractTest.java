package dev.cairn.sim.runtime;

import static org.assertj.core.api.Assertions.assertThat;

import dev.cairn.core.env.Address;
import dev.cairn.core.env.Node;
import dev.cairn.master.meta.ReplicatedLog;
import dev.cairn.master.meta.ReplicatedLogContract;
import java.util.function.BooleanSupplier;

/** The replicated-log contract on the simulator's model of Raft: three master hosts on one simulated network. */
class SimRaftContractTest extends ReplicatedLogContract {
    /** Simulated time a wait may take before the test fails. */
    static final long AWAIT_NANOS = 60_000_000_000L;

    @Override protected Harness harness() {
        Simulation sim = new Simulation(7);
        SimWorld world = new SimWorld(sim, false);
        SimRaft raft = new SimRaft(sim, world.network());
        Recorder[] recorders = {new Recorder(), new Recorder(), new Recorder()};
        ReplicatedLog[] members = new ReplicatedLog[3];
        SimHost[] hosts = new SimHost[3];
        for (int i = 0; i < 3; i++) {
            int n = i;
            String name = "master" + (i + 1);
            hosts[i] = world.addHost(name, new Address(name, 7100), 0, env -> new Node() {
                @Override public void start() {
                    members[n] = raft.member(name);
                    members[n].start(recorders[n].appliedTerm(), recorders[n].appliedIndex(), recorders[n]);
                }
            });
            raft.add(hosts[i]);
        }
        return new Harness() {
            @Override public void start(int i) { hosts[i].start(); }

            @Override public void crash(int i) { hosts[i].crash(); }

            @Override public void wipe(int i) {
                hosts[i].wipeStore();
                recorders[i].wipe();
                raft.storeWiped(hosts[i].name());
            }

            @Override public int entriesToPurge() { return (int) SimRaft.PURGE_GAP * 4; }

            @Override public Outcome propose(int i, byte[] entry) {
                Outcome o = new Outcome();
                sim.at(0, hosts[i], Simulation.Kind.TASK, 1, () -> members[i].propose(entry).onComplete((v, e) -> o.set(e)));
                return o;
            }

            @Override public Outcome confirm(int i) {
                Outcome o = new Outcome();
                Recorder r = recorders[i];
                sim.at(0, hosts[i], Simulation.Kind.TASK, 1, () -> members[i].confirmLeadership().onComplete((v, e) -> o.set(e, r)));
                return o;
            }

            @Override public Recorder recorder(int i) { return recorders[i]; }

            @Override public void await(String what, BooleanSupplier done) {
                long deadline = sim.now() + AWAIT_NANOS;
                while (!done.getAsBoolean()) {
                    assertThat(sim.now()).as("waited %d s of simulated time for %s", AWAIT_NANOS / 1_000_000_000L, what).isLessThan(deadline);
                    sim.runUntil(sim.now() + 10_000_000L);
                }
            }

            @Override public void close() {
                assertThat(sim.violations()).isEmpty();
            }
        };
    }
}
