package dev.cairn.core.ec;

import java.nio.ByteBuffer;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * Reed-Solomon k+m over GF(2^8) with jerasure's Vandermonde coding matrix: encode k data cells into m
 * parity cells, and rebuild any missing cells from any k present ones. Cells are the bytes between a
 * buffer's position and limit (positions are not moved). Instances are not thread-safe (each node has
 * its own thread anyway); prepared decode matrices are cached per erasure pattern.
 */
public final class ErasureCodec {
    /** Decode matrices kept per codec (one per distinct pattern of missing cells). */
    static final int DECODE_CACHE = 64;

    private final int k, m;
    private final CodingEngine engine;
    private final int[] coding;
    private final CodingEngine.Prepared encoder;
    private final Map<Long, Decoder> decoders = new LinkedHashMap<>(16, 0.75f, true) {
        @Override protected boolean removeEldestEntry(Map.Entry<Long, Decoder> e) { return size() > DECODE_CACHE; }
    };

    private record Decoder(int[] survivors, int[] missing, CodingEngine.Prepared prepared) {}

    /** k data then m parity cells of {@link Stripes#CELL} bytes that {@link Stripes#encode} codes each stripe in; made on first use. */
    private ByteBuffer[] stripeCells;

    public ErasureCodec(int k, int m, CodingEngine engine) {
        Vandermonde.check(k, m);
        this.k = k;
        this.m = m;
        this.engine = engine;
        this.coding = Vandermonde.codingMatrix(k, m);
        this.encoder = engine.prepare(coding, m, k);
    }

    public int k() { return k; }

    public int m() { return m; }

    public CodingEngine engine() { return engine; }

    /** The m×k coding matrix (row-major), part of the on-disk format. */
    public int[] codingMatrix() { return coding.clone(); }

    /**
     * The codec's own k+m cells of {@link Stripes#CELL} bytes (direct if the engine needs it), reused by every
     * encode: (k+m)·64 KiB per codec, however big the chunks. Their contents are whatever the last user left.
     */
    ByteBuffer[] stripeCells() {
        if (stripeCells == null) {
            stripeCells = new ByteBuffer[k + m];
            for (int i = 0; i < k + m; i++) {
                stripeCells[i] = engine.needsDirectBuffers() ? ByteBuffer.allocateDirect(Stripes.CELL) : ByteBuffer.allocate(Stripes.CELL);
            }
        }
        return stripeCells;
    }

    /** Computes m parity cells from k data cells. */
    public void encode(ByteBuffer[] data, ByteBuffer[] parity) {
        int len = checkCells(data, k, "data");
        if (checkCells(parity, m, "parity") != len) throw new IllegalArgumentException("parity cells differ in length from data cells");
        encoder.apply(data, parity, len);
    }

    /**
     * Rebuilds the cells not marked present. {@code parts} holds the k data cells then the m parity cells,
     * every one a buffer of the cell length (the missing ones are overwritten).
     *
     * @throws IllegalArgumentException if fewer than k cells are present (never returns wrong data)
     */
    public void decode(ByteBuffer[] parts, boolean[] present) {
        int len = checkCells(parts, k + m, "parts");
        if (present.length != k + m) throw new IllegalArgumentException("present[] must have " + (k + m) + " entries");
        long mask = 0;
        int have = 0;
        for (int i = 0; i < k + m; i++) if (present[i]) { mask |= 1L << i; have++; }
        if (have < k) throw new IllegalArgumentException("cannot decode " + k + "+" + m + ": only " + have + " of " + (k + m) + " cells present, need " + k);
        if (have == k + m) return;
        Decoder d = decoders.computeIfAbsent(mask, this::decoder);
        ByteBuffer[] in = new ByteBuffer[k];
        for (int i = 0; i < k; i++) in[i] = parts[d.survivors[i]];
        ByteBuffer[] out = new ByteBuffer[d.missing.length];
        for (int i = 0; i < out.length; i++) out[i] = parts[d.missing[i]];
        d.prepared.apply(in, out, len);
    }

    /**
     * For a pattern of present cells: take the first k present as survivors, invert their rows of the
     * generator [I; C], and give each missing cell its row — a data cell's row of the inverse, a parity
     * cell's coding row times the inverse.
     */
    private Decoder decoder(long mask) {
        int[] survivors = new int[k];
        int[] missing = new int[k + m - Long.bitCount(mask)];
        for (int i = 0, s = 0, x = 0; i < k + m; i++) {
            if ((mask & (1L << i)) != 0) { if (s < k) survivors[s++] = i; }
            else missing[x++] = i;
        }
        int[] sub = new int[k * k];
        for (int r = 0; r < k; r++) {
            int row = survivors[r];
            for (int j = 0; j < k; j++) sub[r * k + j] = row < k ? (row == j ? 1 : 0) : coding[(row - k) * k + j];
        }
        int[] inv = Gf256.invert(sub, k);
        int[] rows = new int[missing.length * k];
        for (int x = 0; x < missing.length; x++) {
            int cell = missing[x];
            for (int j = 0; j < k; j++) {
                int v;
                if (cell < k) {
                    v = inv[cell * k + j];
                } else {
                    v = 0;
                    for (int t = 0; t < k; t++) v ^= Gf256.mul(coding[(cell - k) * k + t], inv[t * k + j]);
                }
                rows[x * k + j] = v;
            }
        }
        return new Decoder(survivors, missing, engine.prepare(rows, missing.length, k));
    }

    private int checkCells(ByteBuffer[] cells, int n, String what) {
        if (cells == null || cells.length != n) {
            throw new IllegalArgumentException("expected " + n + " " + what + " cells, got " + (cells == null ? "none" : cells.length));
        }
        int len = -1;
        for (int i = 0; i < n; i++) {
            ByteBuffer b = cells[i];
            if (b == null) throw new IllegalArgumentException(what + " cell " + i + " is missing");
            if (engine.needsDirectBuffers() && !b.isDirect()) {
                throw new IllegalArgumentException(engine.name() + " needs direct buffers; " + what + " cell " + i + " is on the heap");
            }
            if (b.isReadOnly() && what.equals("parity")) throw new IllegalArgumentException("parity cell " + i + " is read-only");
            if (len < 0) len = b.remaining();
            else if (b.remaining() != len) throw new IllegalArgumentException(what + " cells differ in length: " + len + " and " + b.remaining());
        }
        return len;
    }
}
