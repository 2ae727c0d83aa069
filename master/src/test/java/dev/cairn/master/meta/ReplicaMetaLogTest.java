package dev.cairn.master.meta;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.cairn.core.async.Promise;
import dev.cairn.core.env.Address;
import dev.cairn.core.env.Clock;
import dev.cairn.core.env.Env;
import dev.cairn.core.env.KvBatch;
import dev.cairn.core.env.KvStore;
import dev.cairn.core.env.Log;
import dev.cairn.core.env.Scheduler;
import dev.cairn.core.env.Transport;
import dev.cairn.core.env.Volume;
import dev.cairn.core.proto.CodecException;
import dev.cairn.core.proto.Types.FileAttr;
import dev.cairn.core.testing.MemKv;
import dev.cairn.master.namespace.Namespace;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.SplittableRandom;
import java.util.random.RandomGenerator;
import org.junit.jupiter.api.Test;

/**
 * A replica's metadata log over a hand-driven log: commands submitted while entries are on their way are batched
 * into one entry, each gets its own result, and an entry whose apply a power loss cut short is not applied twice.
 */
class ReplicaMetaLogTest {
    /** A log that records proposals; the test commits them (delivers them to the replica) when it likes. */
    static final class HandLog implements ReplicatedLog {
        final List<byte[]> proposed = new ArrayList<>();
        final List<Promise<Void>> answers = new ArrayList<>();
        Listener listener;

        @Override public void start(long appliedTerm, long appliedIndex, Listener l) { listener = l; }

        @Override public Promise<Void> propose(byte[] entry) {
            proposed.add(entry);
            Promise<Void> p = new Promise<>();
            answers.add(p);
            return p;
        }

        /** Commits and applies proposal {@code i} at {@code index}, then answers its proposer. */
        void commit(int i, long index) {
            listener.apply(1, index, proposed.get(i));
            answers.get(i).complete(null);
        }

        @Override public Promise<Void> confirmLeadership() { return Promise.completed(null); }
        @Override public void stop() {}
        @Override public List<Address> members() { return List.of(); }
        @Override public Promise<List<Address>> changeMembers(Address client, boolean add) { throw new UnsupportedOperationException(); }
    }

    /** An environment holding only a store (what the replica's log touches). */
    static Env env(KvStore kv) {
        return new Env() {
            final SplittableRandom random = new SplittableRandom(1);
            @Override public String hostId() { return "m0"; }
            @Override public Clock clock() { throw new UnsupportedOperationException(); }
            @Override public Scheduler scheduler() { throw new UnsupportedOperationException(); }
            @Override public RandomGenerator random() { return random; }
            @Override public Transport transport() { throw new UnsupportedOperationException(); }
            @Override public Volume volume(String name) { throw new UnsupportedOperationException(); }
            @Override public KvStore kv() { return kv; }
            @Override public Log log(Class<?> owner) {
                return new Log() {
                    @Override public void info(String fmt, Object... args) {}
                    @Override public void warn(String fmt, Object... args) {}
                    @Override public void debug(String fmt, Object... args) {}
                };
            }
        };
    }

    /** A store whose writes after the first {@code allowed} are lost, as a power loss would lose them. */
    static final class PowerCut implements KvStore {
        final MemKv kv;
        int allowed;
        PowerCut(MemKv kv, int allowed) { this.kv = kv; this.allowed = allowed; }
        @Override public byte[] get(byte[] key) { return kv.get(key); }
        @Override public void scanFrom(byte[] prefix, byte[] from, java.util.function.BiPredicate<byte[], byte[]> visitor) { kv.scanFrom(prefix, from, visitor); }
        @Override public Promise<Void> write(KvBatch batch, boolean sync) {
            if (allowed-- > 0) return kv.write(batch, sync);
            throw new UncheckedIOException(new IOException("the power went"));
        }
    }

    static ReplicaMetaLog replica(KvStore kv, HandLog log) {
        Namespace ns = new Namespace(kv, 3);
        if (ns.isEmpty()) kv.write(ns.formatBatch(0), true);
        ReplicaMetaLog r = new ReplicaMetaLog(env(kv), ns, log, role -> {});
        log.start(r.appliedTerm(), r.appliedIndex(), r);
        return r;
    }

    @Test void commandsSubmittedWhileEntriesAreOnTheirWayGoTogetherAndEachGetsItsOwnResult() {
        MemKv kv = new MemKv();
        HandLog log = new HandLog();
        ReplicaMetaLog r = replica(kv, log);
        List<Promise<FileAttr>> made = new ArrayList<>();
        for (int i = 0; i < 2 * ReplicaMetaLog.MAX_ENTRIES_IN_FLIGHT + 5; i++) made.add(r.submit(new MetaCommand.Mkdir("/d" + i, 1, 0)));
        // idle group: the first commands go alone, at once; the rest wait for an entry to be answered
        assertThat(log.proposed).hasSize(ReplicaMetaLog.MAX_ENTRIES_IN_FLIGHT);
        Promise<FileAttr> twice = r.submit(new MetaCommand.Mkdir("/d0", 2, 0)); // refused when applied: EXISTS
        log.commit(0, 1);
        assertThat(made.get(0).isDone()).isTrue();
        assertThat(log.proposed).as("the waiting commands in one entry").hasSize(ReplicaMetaLog.MAX_ENTRIES_IN_FLIGHT + 1);
        for (int i = 1; i < log.proposed.size(); i++) log.commit(i, i + 1);
        long inodes = made.stream().map(p -> p.value().inode()).distinct().count();
        assertThat(inodes).isEqualTo(made.size());
        assertThat(twice.isFailed()).isTrue();
        assertThat(r.appliedIndex()).isEqualTo(log.proposed.size());
    }

    /**
     * A power loss in the middle of an entry's commands: the store holds the first ones and says so; the entry,
     * delivered again after the restart, applies only the rest. Applied again, commands that are not idempotent
     * (reserving chunk ids, here) would leave this replica's state different from the others'.
     */
    @Test void anEntryWhoseApplyWasCutShortIsNotAppliedTwice() throws CodecException {
        List<MetaCommand<?>> commands = List.of(new MetaCommand.ReserveChunkIds(5), new MetaCommand.ReserveChunkIds(7),
                new MetaCommand.ReserveChunkIds(3), new MetaCommand.Mkdir("/after", 1, 0));
        List<byte[]> encoded = commands.stream().map(MetaCodec::encode).toList();
        byte[] entry = LogEntry.encode(42, encoded);
        assertThat(LogEntry.decode(entry)).isEqualTo(new LogEntry(42, commands));

        MemKv whole = new MemKv();
        HandLog one = new HandLog();
        replica(whole, one);
        one.listener.apply(1, 1, entry);

        for (int cut = 0; cut <= commands.size(); cut++) {
            MemKv kv = new MemKv();
            HandLog log = new HandLog();
            PowerCut store = new PowerCut(kv, Integer.MAX_VALUE);
            replica(store, log);
            store.allowed = cut;
            try {
                log.listener.apply(1, 1, entry);
            } catch (UncheckedIOException lost) {
                // the power went after `cut` of the commands were written
            }
            HandLog again = new HandLog();
            ReplicaMetaLog restarted = replica(kv, again);
            if (restarted.appliedIndex() == 0) again.listener.apply(1, 1, entry);
            assertThat(restarted.appliedIndex()).isEqualTo(1);
            assertThat(entries(kv)).as("cut after %d commands", cut).isEqualTo(entries(whole));
        }
    }

    @Test void aBatchEntryCutShortOrPaddedDoesNotDecode() {
        byte[] entry = LogEntry.encode(7, List.of(MetaCodec.encode(new MetaCommand.ReserveChunkIds(1)), MetaCodec.encode(new MetaCommand.ReserveChunkIds(2))));
        for (int n = 0; n < entry.length; n++) {
            byte[] cut = Arrays.copyOf(entry, n);
            assertThatThrownBy(() -> LogEntry.decode(cut)).as("%d of %d bytes", n, entry.length).isInstanceOf(CodecException.class);
        }
        assertThatThrownBy(() -> LogEntry.decode(Arrays.copyOf(entry, entry.length + 1))).isInstanceOf(CodecException.class);
        byte[] huge = entry.clone();
        ByteBuffer.wrap(huge).putInt(9, Integer.MAX_VALUE);
        assertThatThrownBy(() -> LogEntry.decode(huge)).isInstanceOf(CodecException.class);
    }

    static List<String> entries(MemKv kv) {
        List<String> out = new ArrayList<>();
        kv.scan(new byte[0], (k, v) -> out.add(Arrays.toString(k) + "=" + Arrays.toString(v)));
        return out;
    }
}
