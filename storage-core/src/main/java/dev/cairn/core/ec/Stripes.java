package dev.cairn.core.ec;

import dev.cairn.core.chunk.ChunkFormat;
import java.nio.ByteBuffer;

/**
 * The layout of an erasure-coded chunk (part of the on-disk format): the chunk is cut into stripes of k
 * cells of {@link #CELL} bytes, each stripe gets m parity cells, and part i holds cell i of every stripe
 * in order, so part offset s·CELL is stripe s. Writers (the client, and a chunkserver converting a file
 * to an archive class), readers, rebuilders and the master's length checks share it.
 *
 * <p>The last stripe is coded as if zero-padded to k whole cells, but each part stores only what its cell
 * of that stripe holds: a data cell its bytes of the chunk (none past the end), a parity cell as many as
 * the stripe's first, longest, data cell (past that every data cell is zeros, and so is the parity). A
 * 10 KB file in {@code ec(4,2)} stores 10 KB in part 0 and in each parity part and nothing in parts 1–3,
 * not six 64 KiB cells, as HDFS stores a partial last stripe. A reader or rebuilder zero-pads the cells
 * back. Parts written padded (before this layout) hold more than that and read the same.
 */
public final class Stripes {
    /** Bytes per cell: one checksum block, so a cell is verified on its own. */
    public static final int CELL = ChunkFormat.BLOCK_SIZE;

    private Stripes() {}

    /** Bytes part {@code part} (data parts 0..k-1, then parity) holds for a chunk of {@code chunkBytes}. */
    public static long partLength(long chunkBytes, int k, int part) {
        long stripe = (long) k * CELL;
        long full = chunkBytes / stripe;
        return full * CELL + cellLength(chunkBytes, k, part, full);
    }

    /**
     * The fewest chunk bytes that give part {@code part} (of k data parts; a parity part counts as the first)
     * at least {@code partBytes} bytes: the inverse of {@link #partLength}, as a lower bound.
     */
    public static long minChunkBytes(long partBytes, int k, int part) {
        if (partBytes <= 0) return 0;
        int dataCell = part < k ? part : 0;
        long last = partBytes - 1; // the part's last byte: in stripe last / CELL, at last % CELL of its cell
        return (last / CELL) * k * CELL + (long) dataCell * CELL + last % CELL + 1;
    }

    /** Bytes of part {@code part}'s cell in stripe {@code stripe} (0 past the chunk's end). */
    public static int cellLength(long chunkBytes, int k, int part, long stripe) {
        assert part >= 0 && k > 0 && stripe >= 0;
        long inStripe = Math.max(0, Math.min((long) k * CELL, chunkBytes - stripe * k * CELL));
        int dataCell = part < k ? part : 0; // a parity cell is as long as the stripe's first data cell
        return (int) Math.max(0, Math.min(CELL, inStripe - (long) dataCell * CELL));
    }

    /**
     * The k+m parts of {@code chunk}, each {@link #partLength} long. Coded a stripe at a time in the codec's
     * own cells ({@link ErasureCodec#stripeCells}), over only as many bytes as the stripe's parity holds: a
     * chunk costs no buffer of its size (a direct one, for a native engine, is zeroed and then freed only by
     * a later GC), and a small file codes its bytes, not whole padded cells.
     */
    public static byte[][] encode(ErasureCodec codec, byte[] chunk) {
        long stripeBytes = (long) codec.k() * CELL;
        return encode(codec, chunk, 0, (chunk.length + stripeBytes - 1) / stripeBytes);
    }

    /**
     * The k+m parts' bytes for stripes {@code first} to {@code first + count - 1} of {@code chunk}: part p's
     * bytes from part offset {@code first·CELL}, as long as {@link #partLength} leaves them in that range (empty past
     * the part's end). Concatenated over consecutive ranges they are {@link #encode}'s parts, so an upload can
     * code and send a chunk a range at a time and never hold its parts whole.
     */
    public static byte[][] encode(ErasureCodec codec, byte[] chunk, long first, long count) {
        int k = codec.k(), m = codec.m();
        long stripeBytes = (long) k * CELL;
        long stripes = Math.min(first + count, (chunk.length + stripeBytes - 1) / stripeBytes);
        byte[][] parts = new byte[k + m][];
        for (int p = 0; p < k + m; p++) {
            long from = Math.min(first * CELL, partLength(chunk.length, k, p));
            long to = Math.min((first + count) * CELL, partLength(chunk.length, k, p));
            parts[p] = new byte[(int) (to - from)];
        }
        ByteBuffer[] cells = codec.stripeCells();
        ByteBuffer[] data = java.util.Arrays.copyOfRange(cells, 0, k), parity = java.util.Arrays.copyOfRange(cells, k, k + m);
        for (long s = first; s < stripes; s++) {
            int at = (int) ((s - first) * CELL);
            int len = cellLength(chunk.length, k, 0, s); // the stripe's first, longest data cell; parity is as long
            for (int d = 0; d < k; d++) {
                int n = cellLength(chunk.length, k, d, s);
                data[d].clear();
                if (n > 0) {
                    int from = (int) (s * stripeBytes + (long) d * CELL);
                    System.arraycopy(chunk, from, parts[d], at, n);
                    data[d].put(0, chunk, from, n);
                }
                data[d].put(n, ZEROS, 0, len - n).limit(len); // a short cell codes as zero-padded
            }
            for (ByteBuffer b : parity) b.clear().limit(len);
            codec.encode(data, parity);
            for (int p = 0; p < m; p++) parity[p].get(0, parts[k + p], at, len);
        }
        return parts;
    }

    private static final byte[] ZEROS = new byte[CELL];
}
