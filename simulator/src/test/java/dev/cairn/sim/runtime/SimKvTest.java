package dev.cairn.sim.runtime;

import static org.assertj.core.api.Assertions.assertThat;

import dev.cairn.core.env.Address;
import dev.cairn.core.env.KvBatch;
import dev.cairn.core.env.KvStore;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;

/**
 * The simulated store against a model that replays batches: reads and scans see every batch at once, and
 * a power loss leaves exactly the batches up to the last completed sync (the store keeps one copy and
 * undoes the rest; the model keeps them all).
 */
class SimKvTest {
    static byte[] b(String s) { return s.getBytes(StandardCharsets.UTF_8); }

    static TreeMap<String, String> replay(List<List<String[]>> batches, int upTo) {
        TreeMap<String, String> m = new TreeMap<>();
        for (int i = 0; i < upTo; i++) for (String[] op : batches.get(i)) if (op[1] == null) m.remove(op[0]); else m.put(op[0], op[1]);
        return m;
    }

    static TreeMap<String, String> scan(KvStore kv) {
        TreeMap<String, String> out = new TreeMap<>();
        kv.scan(new byte[0], (k, v) -> {
            out.put(new String(k, StandardCharsets.UTF_8), new String(v, StandardCharsets.UTF_8));
            return true;
        });
        return out;
    }

    /** The tree's key order is the byte arrays' unsigned order, over short keys rich in zeros and shared prefixes. */
    @Test void keysSortAsUnsignedByteArrays() {
        SplittableRandom r = new SplittableRandom(20261123);
        byte[] alphabet = {0, 0, 1, 'C', 'c', (byte) 0x7f, (byte) 0x80, (byte) 0xff};
        for (int trial = 0; trial < 200_000; trial++) {
            byte[] a = new byte[r.nextInt(0, 21)], b;
            for (int i = 0; i < a.length; i++) a[i] = alphabet[r.nextInt(alphabet.length)];
            int shared = r.nextInt(0, a.length + 1); // b starts as a's prefix, then goes its own way
            b = java.util.Arrays.copyOf(a, r.nextInt(shared, 21));
            for (int i = shared; i < b.length; i++) b[i] = alphabet[r.nextInt(alphabet.length)];
            int want = Integer.signum(java.util.Arrays.compareUnsigned(a, b));
            assertThat(Integer.signum(new SimKv.Key(a).compareTo(new SimKv.Key(b))))
                    .as("%s vs %s", java.util.HexFormat.of().formatHex(a), java.util.HexFormat.of().formatHex(b)).isEqualTo(want);
            assertThat(new SimKv.Key(a).equals(new SimKv.Key(b))).isEqualTo(want == 0);
        }
    }

    @Test void aPowerLossKeepsTheSyncedPrefixAndMaybeSomeBatchesAfterIt() {
        int keptMore = 0, keptExactly = 0;
        for (int seed = 0; seed < 200; seed++) {
            Simulation sim = new Simulation(seed);
            SimHost h = new SimWorld(sim, false).addHost("kv", new Address("kv", 1), 0, env -> () -> { });
            h.start();
            SimKv kv = h.kvStore();
            SplittableRandom r = new SplittableRandom(seed);
            List<List<String[]>> batches = new ArrayList<>(); // every batch the store holds, in order
            int[] durable = {0}; // how many of them a completed sync made durable
            for (int step = 0; step < 120; step++) {
                int dice = r.nextInt(20);
                if (dice == 0) {
                    h.powerLoss();
                    // the durable prefix and maybe some of the batches after it, in order (as a write-ahead log keeps them)
                    TreeMap<String, String> left = scan(kv);
                    int kept = -1;
                    for (int k = durable[0]; k <= batches.size() && kept < 0; k++) if (replay(batches, k).equals(left)) kept = k;
                    assertThat(kept).as("seed %d step %d: a power loss leaves a prefix at least as long as the durable one", seed, step).isNotNegative();
                    if (kept > durable[0]) keptMore++;
                    else if (kept < batches.size()) keptExactly++;
                    batches.subList(kept, batches.size()).clear();
                    durable[0] = kept;
                    h.start();
                } else if (dice < 4) {
                    sim.runUntil(sim.now() + r.nextLong(3_000_000)); // some syncs complete
                } else {
                    KvBatch batch = new KvBatch();
                    List<String[]> ops = new ArrayList<>();
                    for (int i = 0, n = 1 + r.nextInt(4); i < n; i++) {
                        String key = "k" + r.nextInt(12); // a key may repeat within a batch
                        String value = r.nextInt(4) == 0 ? null : "v" + step + "." + i;
                        if (value == null) batch.delete(b(key)); else batch.put(b(key), b(value));
                        ops.add(new String[] {key, value});
                    }
                    batches.add(ops);
                    int count = batches.size();
                    if (r.nextBoolean()) kv.write(batch, true).onComplete((v, e) -> durable[0] = Math.max(durable[0], count));
                    else kv.write(batch, false);
                }
                TreeMap<String, String> want = replay(batches, batches.size());
                assertThat(scan(kv)).as("seed %d step %d: scan", seed, step).isEqualTo(want);
                for (int k = 0; k < 12; k++) {
                    byte[] got = kv.get(b("k" + k));
                    assertThat(got == null ? null : new String(got, StandardCharsets.UTF_8)).as("seed %d step %d: get k%d", seed, step, k).isEqualTo(want.get("k" + k));
                }
                // the checkers' durable view is what a power loss now would leave at least
                TreeMap<String, String> durableWant = replay(batches, durable[0]);
                KvStore view = h.durableKv();
                assertThat(scan(view)).as("seed %d step %d: durable scan", seed, step).isEqualTo(durableWant);
                for (int k = 0; k < 12; k++) {
                    byte[] got = view.get(b("k" + k));
                    assertThat(got == null ? null : new String(got, StandardCharsets.UTF_8)).as("seed %d step %d: durable get k%d", seed, step, k)
                            .isEqualTo(durableWant.get("k" + k));
                }
            }
        }
        assertThat(keptMore).as("power losses that kept unsynced batches").isPositive();
        assertThat(keptExactly).as("power losses that lost unsynced batches").isPositive();
    }
}
