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
}
