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
 * What the cluster acknowledged, kept outside the system under test: each file's {@link FileModel} (what
 * was acknowledged, what may have landed), and which files exist. The durability checks read them back.
 */
public final class Oracle {
    /** What is known of one path: one hashed lookup per operation (a map per fact made it four to six). */
    private static final class File {
        final String path;
        /** Its content as acknowledged so far; replaced when the path is made anew. */
        FileModel model = new FileModel();
        /** The chunk size it was created with (the ack-time witness maps offsets to chunks with it). */
        int chunkSize = Workload.CHUNK_SIZE;
        /** Removed (or its remove's outcome unknown): no longer checked either way. */
        boolean gone;
        /** Being written or removed: not picked until that is over. */
        boolean busy;
        /** Index in {@link #pickable}, or -1. */
        int pickAt = -1;

        File(String path) { this.path = path; }

        boolean committed() { return !gone && model.everAcked(); }
    }

    // a hash map; whatever is listed is sorted first, so no order depends on it
    private final HashMap<String, File> files = new HashMap<>();
    private final TreeSet<String> removed = new TreeSet<>();

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

    /** {@code length} bytes of stream {@code seed} from file position {@code offset} (what a write there puts). */
    public static byte[] content(long seed, long offset, int length) {
        byte[] b = new byte[length];
        fill(seed, offset, b, 0, length);
        return b;
    }

    /** The byte of stream {@code seed} at file position {@code x} ({@link FileModel#ZEROS}: zero). */
    static byte valueAt(long seed, long x) {
        if (seed == FileModel.ZEROS) return 0;
        return (byte) (mix(mix(seed) + ((x >>> 3) + 1) * GAMMA) >>> (8 * (int) (x & 7)));
    }

    /** Stream {@code seed}'s bytes at file positions {@code [pos, pos + n)} into {@code out[at..]}. */
    static void fill(long seed, long pos, byte[] out, int at, int n) {
        if (seed == FileModel.ZEROS) { java.util.Arrays.fill(out, at, at + n, (byte) 0); return; }
        int i = 0;
        for (; i < n && ((pos + i) & 7) != 0; i++) out[at + i] = valueAt(seed, pos + i);
        // word w is mix(mix(seed) + (w + 1) * GAMMA): the argument kept by adding, one multiply a word fewer
        for (long x = mix(seed) + ((pos + i) >>> 3) * GAMMA; i + 8 <= n; i += 8) WORD.set(out, at + i, mix(x += GAMMA));
        for (; i < n; i++) out[at + i] = valueAt(seed, pos + i);
    }

    /**
     * Where {@code got[at, at + n)} first differs from stream {@code seed} at file positions {@code [pos, pos + n)}:
     * the index from {@code at}, or -1 if nowhere.
     */
    static int mismatchAt(long seed, long pos, byte[] got, int at, int n) {
        if (seed == FileModel.ZEROS) {
            for (int i = 0; i < n; i++) if (got[at + i] != 0) return i;
            return -1;
        }
        int i = 0;
        for (; i < n && ((pos + i) & 7) != 0; i++) if (got[at + i] != valueAt(seed, pos + i)) return i;
        for (long x = mix(seed) + ((pos + i) >>> 3) * GAMMA; i + 8 <= n; i += 8) {
            long want = mix(x += GAMMA), have = (long) WORD.get(got, at + i);
            if (have != want) return i + Long.numberOfTrailingZeros(have ^ want) / Byte.SIZE;
        }
        for (; i < n; i++) if (got[at + i] != valueAt(seed, pos + i)) return i;
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

    /** The path is created anew (a fresh, empty file) with the workload's chunk size: its model starts over. */
    public FileModel created(String path) { return created(path, Workload.CHUNK_SIZE); }

    /** ... with chunks of {@code chunkSize} bytes. */
    public FileModel created(String path, int chunkSize) {
        File f = file(path);
        f.model = new FileModel();
        f.chunkSize = chunkSize;
        f.gone = false;
        removed.remove(path);
        refresh(f);
        return f.model;
    }

    /** The chunk size the path was created with. */
    public int chunkSize(String path) { return file(path).chunkSize; }

    /** The path's content model (null if the path was never created). */
    public FileModel model(String path) {
        File f = files.get(path);
        return f == null ? null : f.model;
    }

    /** The path's model if it has acknowledged content and was not removed, else null. */
    public FileModel acknowledgedModel(String path) {
        File f = files.get(path);
        return f == null || !f.committed() ? null : f.model;
    }

    /** The model's state changed (an acknowledgement): the file may become pickable. */
    public void changed(String path) { refresh(file(path)); }

    /** A file being written is not picked for reads or removes until its writer is done. */
    public void writing(String path) { setBusy(file(path), true); }

    public void written(String path) { setBusy(file(path), false); }

    /** A committed file not being written or removed, chosen by {@code pick} (an index draw). */
    public String pick(int draw) {
        return pickable.isEmpty() ? null : pickable.get(Math.floorMod(draw, pickable.size())).path;
    }

    /** Whether {@link #pick} could choose {@code path} now (committed, not being written or removed). */
    public boolean pickable(String path) {
        File f = files.get(path);
        return f != null && f.pickAt >= 0;
    }

    public void removing(String path) { setBusy(file(path), true); }

    public void removed(String path) {
        File f = file(path);
        f.busy = false;
        f.gone = true;
        removed.add(path);
        refresh(f);
    }

    /** A remove whose outcome is unknown (timeout): the path is no longer checked either way. */
    public void uncertain(String path) {
        File f = file(path);
        f.busy = false;
        f.gone = true;
        refresh(f);
    }

    private File file(String path) { return files.computeIfAbsent(path, File::new); }

    private void setBusy(File f, boolean busy) {
        f.busy = busy;
        refresh(f);
    }

    /** Puts {@code f} in or takes it out of the pickable list (swap-remove) as its state says. */
    private void refresh(File f) {
        boolean should = f.committed() && !f.busy;
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

    /** Acknowledged, not removed, and not being written or removed now. */
    public boolean isCommitted(String path) {
        File f = files.get(path);
        return f != null && f.committed() && !f.busy;
    }

    /** Every path with acknowledged content that was not removed, sorted. */
    public List<String> committedPaths() {
        List<String> out = new ArrayList<>();
        for (File f : files.values()) if (f.committed()) out.add(f.path);
        out.sort(null);
        return out;
    }

    public List<String> removedPaths() { return new ArrayList<>(removed); }
}
