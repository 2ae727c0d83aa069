package dev.cairn.sim;

import dev.cairn.core.env.KvBatch;
import dev.cairn.core.proto.CodecException;
import dev.cairn.core.testing.MemKv;
import dev.cairn.master.MasterConfig;
import dev.cairn.master.meta.MetaCodec;
import dev.cairn.master.meta.MetaCommand;
import dev.cairn.master.namespace.Namespace;
import dev.cairn.sim.runtime.SimRaft;
import dev.cairn.sim.runtime.Simulation;
import java.util.Arrays;

/**
 * The checkers' own replica of a master group's metadata: every entry the group commits, applied in order to
 * a namespace of its own, as a master that replays the log would. With a group, this (not any master's store)
 * is "the metadata as a power loss would leave it": what a majority's logs hold survives anything the fault
 * catalog does to masters, and a master's store may lag its log (it replays the rest at restart).
 */
final class CommittedState {
    private final MemKv kv = new MemKv();
    private final Namespace namespace = Namespace.uncached(kv, MasterConfig.DEFAULT_GOAL);

    CommittedState(SimRaft raft, Simulation sim) {
        raft.onCommit((index, e) -> {
            MetaCommand<?> command;
            try {
                command = MetaCodec.decode(Arrays.copyOfRange(e.bytes(), 8, e.bytes().length)); // after the proposer's nonce
            } catch (CodecException x) {
                sim.violation("raft", "committed entry " + index + " does not decode: " + x.getMessage());
                return;
            }
            KvBatch batch = new KvBatch();
            try {
                namespace.apply(command, batch);
            } catch (RuntimeException refused) {
                return; // refused on every replica alike: it writes nothing
            }
            kv.write(batch, true);
        });
    }

    Namespace namespace() { return namespace; }
}
