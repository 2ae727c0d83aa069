package dev.cairn.sim.workload;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.HashMap;
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

    /** What is known of one path: one hashed lookup per operation (a map per fact made it four to six). */
    private static final class File {
        final String path;
        /** Acknowledged content, or null (never committed, removed, or its remove's outcome unknown). */
        Expected committed;
        /** Bytes its writer meant to write, or -1: a commit the client saw fail may still have reached the master. */
        int intended = -1;
        /** Being written or removed: not picked until that is over. */
        boolean busy;
        /** Index in {@link #pickable}, or -1. */
        int pickAt = -1;

        File(String path) { this.path = path; }
    }

    // a hash map; whatever is listed is sorted first, so no order depends on it
    private final HashMap<String, File> files = new HashMap<>();
    private final TreeSet<String> removed = new TreeSet<>();
    private int committedCount;
    /**
     * Committed and not busy, in no particular (but deterministic) order, each knowing its index: a uniform
     * draw in O(1). Walking the committed files per draw made the workload quadratic in its files.
     */
    private final List<File> pickable = new ArrayList<>();

    /**
     * A file's bytes: word {@code i} (8 bytes, little-endian; the last one cut short) is
     * {@code mix(mix(seed) + (i + 1) * GAMMA)}. A counter through a one-multiply mixer: any two files, and
     * any two offsets of one file, differ (a misdirected write shows), and making and checking the bytes
     * takes about two thirds of the time {@link SplittableRandom}'s two-multiply mixer did (the workload makes
     * and checks every file's bytes, often more than once).
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
        File f = file(path);
        assert f.committed == null || f.committed.length() <= length : "acknowledged length went backwards";
        setCommitted(f, new Expected(seed, length, f.intended >= 0 ? f.intended : length));
        refresh(f);
    }

    /** A writer starts writing {@code size} bytes to {@code path}. */
    public void intends(String path, int size) { file(path).intended = size; }

    /** A file being written is not picked for reads or removes until its writer is done. */
    public void writing(String path) { setBusy(file(path), true); }

    public void written(String path) { setBusy(file(path), false); }

    public Expected expected(String path) {
        File f = files.get(path);
        return f == null ? null : f.committed;
    }

    /** A committed file not being removed, chosen by {@code pick} (an index draw). */
    public String pick(int draw) {
        return pickable.isEmpty() ? null : pickable.get(Math.floorMod(draw, pickable.size())).path;
    }

    public void removing(String path) { setBusy(file(path), true); }

    public void removed(String path) {
        File f = file(path);
        f.busy = false;
        setCommitted(f, null);
        removed.add(path);
        refresh(f);
    }

    /** A remove whose outcome is unknown (timeout): the path is no longer checked either way. */
    public void uncertain(String path) {
        File f = file(path);
        f.busy = false;
        setCommitted(f, null);
        refresh(f);
    }

    private File file(String path) { return files.computeIfAbsent(path, File::new); }

    private void setBusy(File f, boolean busy) {
        f.busy = busy;
        refresh(f);
    }

    private void setCommitted(File f, Expected e) {
        committedCount += (e != null ? 1 : 0) - (f.committed != null ? 1 : 0);
        f.committed = e;
    }

    /** Puts {@code f} in or takes it out of the pickable list (swap-remove) as its state says. */
    private void refresh(File f) {
        boolean should = f.committed != null && !f.busy;
        if (should && f.pickAt < 0) {
            f.pickAt = pickable.size();
            pickable.add(f);
        } else if (!should && f.pickAt >= 0) {
            File last = pickable.remove(pickable.size() - 1);
            if (last != f) {
                pickable.set(f.pickAt, last);
                last.pickAt = f.pickAt;
            }
            f.pickAt = -1;
        }
        assert f.pickAt < 0 || pickable.get(f.pickAt) == f;
    }

    public boolean isCommitted(String path) {
        File f = files.get(path);
        return f != null && f.committed != null && !f.busy;
    }

    /** Every committed path, sorted. */
    public List<String> committedPaths() {
        List<String> out = new ArrayList<>(committedCount);
        for (File f : files.values()) if (f.committed != null) out.add(f.path);
        out.sort(null);
        return out;
    }

    public List<String> removedPaths() { return new ArrayList<>(removed); }

    public int committedCount() { return committedCount; }
}
