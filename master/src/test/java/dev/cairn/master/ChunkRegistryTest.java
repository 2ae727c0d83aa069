package dev.cairn.master;

import static org.assertj.core.api.Assertions.assertThat;

import dev.cairn.core.env.Address;
import dev.cairn.master.ChunkRegistry.Server;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The registry tells the planner of exactly the chunks whose copies changed (repeated reports are not changes). */
class ChunkRegistryTest {
    final List<Long> changed = new ArrayList<>();
    final ChunkRegistry registry = new ChunkRegistry(changed::add);

    Server register(String id) { return registry.register(id, new Address("127.0.0.1", 1), 1, 0); }

    @Test void onlyChangesToACopyAreReported() {
        Server a = register("a");
        registry.addLocation(1, a, 0, 2);
        assertThat(changed).containsExactly(1L);
        changed.clear();
        registry.addLocation(1, a, 0, 2); // an inventory repeating what is known
        assertThat(changed).isEmpty();
        registry.addLocation(1, a, 0, 3); // the copy moved on a version
        assertThat(changed).containsExactly(1L);
        changed.clear();
        registry.addStale(1, a, 3);
        registry.addStale(1, a, 3);
        assertThat(changed).containsExactly(1L);
        changed.clear();
        registry.removeStale(1, a);
        registry.removeStale(1, a);
        registry.removeLocation(1, "a"); // nothing there any more
        assertThat(changed).containsExactly(1L);
    }

    @Test void aServerGoingAwayOrChangingTouchesEveryChunkItHeld() {
        Server a = register("a");
        registry.addLocation(1, a, 0, 2);
        registry.addLocation(2, a, 0, 2);
        registry.addStale(3, a, 1);
        changed.clear();
        registry.touch(a);
        assertThat(changed).containsExactlyInAnyOrder(1L, 2L, 3L);
        changed.clear();
        assertThat(registry.expire(1)).containsExactly(a);
        assertThat(changed).containsExactlyInAnyOrder(1L, 2L, 3L);
        assertThat(registry.holders(1)).isEmpty();
        assertThat(registry.staleHolders(3)).isEmpty();
    }

    /**
     * Forgetting a removed file's chunk names every server to delete it from (current copies and live stale ones, each
     * once), a broken connection takes the servers behind it down at once (by either of their addresses), and only a
     * server's report gives a copy a length (paths the mutation run found without a unit test).
     */
    @Test void forgettingAChunkNamesItsHoldersAndABrokenConnectionTakesItsServerDown() {
        Server a = register("a"), b = register("b"), c = register("c");
        registry.addLocation(7, a, 0, 2, 4096);
        registry.addLocation(7, b, 0, 2);
        registry.addStale(7, c, 1);
        registry.addStale(8, a, 1);
        assertThat(registry.reportedLength(7, "a")).isEqualTo(4096);
        assertThat(registry.reportedLength(7, "b")).as("a copy the master made itself").isEqualTo(ChunkRegistry.UNREPORTED);
        assertThat(registry.reportedLength(7, "c")).as("a stale copy has no current length").isEqualTo(ChunkRegistry.UNREPORTED);
        changed.clear();
        assertThat(registry.forget(7)).extracting(s -> s.id).containsExactlyInAnyOrder("a", "b", "c");
        assertThat(changed).containsExactly(7L);
        assertThat(registry.holders(7)).isEmpty();
        assertThat(registry.staleHolders(7)).isEmpty();
        assertThat(a.chunks).doesNotContain(7L);
        assertThat(registry.staleHolders(8)).as("another chunk's stale copy stays").containsExactly(a);
        assertThat(registry.forget(99)).as("a chunk nobody held").isEmpty();

        registry.addLocation(9, b, 0, 1);
        Address control = new Address("127.0.0.1", 2);
        c.controlAddress = control;
        assertThat(registry.liveCount()).isEqualTo(3);
        changed.clear();
        assertThat(registry.disconnected(new Address("127.0.0.1", 3))).as("nobody behind that address").isEmpty();
        assertThat(registry.disconnected(control)).containsExactly(c);
        assertThat(registry.liveCount()).isEqualTo(2);
        assertThat(registry.live()).containsExactly(a, b);
        // a, b share the test's address: both go, and b's chunk has no live holder left
        assertThat(registry.disconnected(new Address("127.0.0.1", 1))).containsExactly(a, b);
        assertThat(registry.holders(9)).isEmpty();
        assertThat(changed).contains(9L);
        assertThat(registry.disconnected(new Address("127.0.0.1", 1))).as("already down").isEmpty();
        assertThat(registry.liveCount()).isZero();
    }

    @Test void aServerExpiresOnlyWhenLastHeardBeforeTheDeadline() {
        Server a = registry.register("a", new Address("127.0.0.1", 1), 1, 1_000);
        assertThat(registry.expire(1_000)).as("heard at the deadline itself").isEmpty();
        assertThat(registry.expire(1_001)).containsExactly(a);
        assertThat(registry.expire(5_000)).as("expired once").isEmpty();
        assertThat(registry.all()).containsExactly(a);
    }

    /**
     * The holders of each chunk against a model (server id -> part and version, sorted by id) through random
     * adds, re-adds, removals, stale marks and re-registrations, over 100 seeds: same holders, same order,
     * and a change is reported exactly when the model changed.
     */
    @Test void holdersFollowAModelInServerIdOrder() {
        for (long seed = 1; seed <= 100; seed++) {
            java.util.SplittableRandom rnd = new java.util.SplittableRandom(seed);
            List<Long> seen = new ArrayList<>();
            ChunkRegistry r = new ChunkRegistry(seen::add);
            java.util.Map<Long, java.util.TreeMap<String, long[]>> model = new java.util.HashMap<>();
            List<Server> servers = new ArrayList<>();
            for (int i = 0; i < 7; i++) servers.add(r.register("s" + (char) ('a' + rnd.nextInt(26)) + i, new Address("127.0.0.1", i), 1, 0));
            for (int step = 0; step < 2000; step++) {
                long chunk = rnd.nextLong(5);
                Server s = servers.get(rnd.nextInt(servers.size()));
                java.util.TreeMap<String, long[]> m = model.computeIfAbsent(chunk, k -> new java.util.TreeMap<>());
                seen.clear();
                switch (rnd.nextInt(4)) {
                    case 0, 1 -> {
                        int part = rnd.nextInt(3);
                        long version = 1 + rnd.nextInt(3);
                        long[] before = m.put(s.id, new long[] {part, version});
                        boolean wasStale = s.staleChunks.containsKey(chunk);
                        r.addLocation(chunk, s, part, version);
                        boolean changed = wasStale || before == null || before[0] != part || before[1] != version;
                        assertThat(seen).as("seed %d step %d", seed, step).isEqualTo(changed ? List.of(chunk) : List.of());
                    }
                    case 2 -> {
                        boolean had = m.remove(s.id) != null;
                        r.removeLocation(chunk, s.id);
                        assertThat(seen).as("seed %d step %d", seed, step).isEqualTo(had ? List.of(chunk) : List.of());
                    }
                    default -> {
                        long epoch = s.epoch;
                        r.register(s.id, s.address, 1, 0); // forgets everything it was thought to hold
                        assertThat(s.epoch).isGreaterThan(epoch);
                        for (java.util.TreeMap<String, long[]> held : model.values()) held.remove(s.id);
                    }
                }
                for (long c = 0; c < 5; c++) {
                    List<String> want = new ArrayList<>(), got = new ArrayList<>();
                    java.util.TreeMap<String, long[]> held = model.getOrDefault(c, new java.util.TreeMap<>());
                    for (var e : held.entrySet()) want.add(e.getKey() + ":" + e.getValue()[0] + ":" + e.getValue()[1]);
                    for (ChunkRegistry.Holder h : r.holders(c)) got.add(h.server().id + ":" + h.part() + ":" + h.version());
                    assertThat(got).as("seed %d step %d chunk %d", seed, step, c).isEqualTo(want);
                }
            }
        }
    }
}
