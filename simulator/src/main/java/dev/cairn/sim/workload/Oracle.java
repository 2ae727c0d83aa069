package dev.cairn.sim.workload;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.SplittableRandom;
import java.util.TreeSet;

/**
 * What the cluster acknowledged, kept outside the system under test: every file whose close (sync) was
 * acknowledged, with the seed that generates its bytes. The durability check reads them all back.
 */
public final class Oracle {
    /**
     * A file's acknowledged content: the first {@code length} bytes of the content its seed generates
     * ({@code length} grows with each acknowledged sync of a file still being written).
     */
    public record Expected(long contentSeed, int length, int intended) {
        public byte[] bytes() { return content(contentSeed, length); }
    }

    // hash maps (looked up on every operation); whatever is listed is sorted first, so no order depends on them
    private final HashMap<String, Expected> committed = new HashMap<>();
    /** Bytes each writer meant to write: a commit the client saw fail may still have reached the master. */
    private final HashMap<String, Integer> intended = new HashMap<>();
    private final TreeSet<String> removed = new TreeSet<>();
    private final HashSet<String> busy = new HashSet<>();
    /**
     * Committed and not busy, in no particular (but deterministic) order, with each path's index: a
     * uniform draw in O(1). Walking the committed map per draw made the workload quadratic in its files.
     */
    private final List<String> pickable = new ArrayList<>();
    private final HashMap<String, Integer> pickableIndex = new HashMap<>();

    /**
     * A file's bytes: word {@code i} (8 bytes, little-endian; the last one cut short) is
     * {@code mix(mix(seed) + (i + 1) * GAMMA)}. A counter through a one-multiply mixer: any two files, and
     * any two offsets of one file, differ (a misdirected write shows), and making and checking the bytes
     * costs half what {@link SplittableRandom}'s two-multiply mixer did, which was a tenth of a steady run.
     */
    public static byte[] content(long seed, int size) {
        byte[] b = new byte[size];
        long s = mix(seed);
        int i = 0;
        for (int words = size >> 3; words-- > 0; i += 8) WORD.set(b, i, mix(s += GAMMA));
        if (i < size) for (long word = mix(s + GAMMA); i < size; word >>>= Byte.SIZE) b[i++] = (byte) word;
        return b;
    }

    /**
     * Offset of the first byte where {@code got} differs from {@code content(seed, got.length)}, or -1 if
     * none: the check of every read, without making the expected bytes.
     */
    public static int mismatch(long seed, byte[] got) {
        long s = mix(seed);
        int i = 0;
        for (int words = got.length >> 3; words-- > 0; i += 8) {
            long want = mix(s += GAMMA), have = (long) WORD.get(got, i);
            if (have != want) return i + Long.numberOfTrailingZeros(have ^ want) / Byte.SIZE;
        }
        if (i < got.length) for (long word = mix(s + GAMMA); i < got.length; word >>>= Byte.SIZE, i++) if (got[i] != (byte) word) return i;
        return -1;
    }

    /** The golden ratio's odd 64-bit integer (as in SplitMix64): successive counters differ in many bits. */
    static final long GAMMA = 0x9e3779b97f4a7c15L;

    /** Murmur3-style xor-shift, multiply, xor-shift. */
    static long mix(long z) {
        z = (z ^ (z >>> 32)) * 0xd6e8feb86659fd93L;
        return z ^ (z >>> 32);
    }

    private static final VarHandle WORD = MethodHandles.byteArrayViewVarHandle(long[].class, ByteOrder.LITTLE_ENDIAN);

    /** A sync or close acknowledged {@code length} bytes of {@code path}. */
    public void committed(String path, long seed, int length) {
        Expected before = committed.get(path);
        assert before == null || before.length() <= length : "acknowledged length went backwards";
        committed.put(path, new Expected(seed, length, intended.getOrDefault(path, length)));
        refresh(path);
    }

    /** A writer starts writing {@code size} bytes to {@code path}. */
    public void intends(String path, int size) { intended.put(path, size); }

    /** A file being written is not picked for reads or removes until its writer is done. */
    public void writing(String path) {
        busy.add(path);
        refresh(path);
    }

    public void written(String path) {
        busy.remove(path);
        refresh(path);
    }

    public Expected expected(String path) { return committed.get(path); }

    /** A committed file not being removed, chosen by {@code pick} (an index draw). */
    public String pick(int draw) {
        return pickable.isEmpty() ? null : pickable.get(Math.floorMod(draw, pickable.size()));
    }

    public void removing(String path) {
        busy.add(path);
        refresh(path);
    }

    public void removed(String path) {
        busy.remove(path);
        committed.remove(path);
        removed.add(path);
        refresh(path);
    }

    /** A remove whose outcome is unknown (timeout): the path is no longer checked either way. */
    public void uncertain(String path) {
        busy.remove(path);
        committed.remove(path);
        refresh(path);
    }

    /** Puts {@code path} in or takes it out of the pickable list (swap-remove) as its state says. */
    private void refresh(String path) {
        boolean should = committed.containsKey(path) && !busy.contains(path);
        Integer at = pickableIndex.get(path);
        if (should && at == null) {
            pickableIndex.put(path, pickable.size());
            pickable.add(path);
        } else if (!should && at != null) {
            String last = pickable.remove(pickable.size() - 1);
            if (!last.equals(path)) {
                pickable.set(at, last);
                pickableIndex.put(last, at);
            }
            pickableIndex.remove(path);
        }
        assert pickable.size() == pickableIndex.size();
    }

    public boolean isCommitted(String path) { return committed.containsKey(path) && !busy.contains(path); }

    /** Every committed path, sorted. */
    public List<String> committedPaths() { return new ArrayList<>(new TreeSet<>(committed.keySet())); }

    public List<String> removedPaths() { return new ArrayList<>(removed); }

    public int committedCount() { return committed.size(); }
}
