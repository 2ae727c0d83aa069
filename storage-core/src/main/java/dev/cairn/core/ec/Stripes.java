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

    /** Bytes of part {@code part}'s cell in stripe {@code stripe} (0 past the chunk's end). */
    public static int cellLength(long chunkBytes, int k, int part, long stripe) {
        assert part >= 0 && k > 0 && stripe >= 0;
        long inStripe = Math.max(0, Math.min((long) k * CELL, chunkBytes - stripe * k * CELL));
        int dataCell = part < k ? part : 0; // a parity cell is as long as the stripe's first data cell
        return (int) Math.max(0, Math.min(CELL, inStripe - (long) dataCell * CELL));
    }

    /** The k+m parts of {@code chunk}, each {@link #partLength} long. */
    public static byte[][] encode(ErasureCodec codec, byte[] chunk) {
        int k = codec.k(), m = codec.m();
        int stripeBytes = k * CELL;
        int stripes = (chunk.length + stripeBytes - 1) / stripeBytes;
        int paddedLen = stripes * CELL;
        boolean direct = codec.engine().needsDirectBuffers();
        ByteBuffer[] dataCells = new ByteBuffer[k], parity = new ByteBuffer[m];
        for (int d = 0; d < k; d++) {
            dataCells[d] = direct ? ByteBuffer.allocateDirect(paddedLen) : ByteBuffer.allocate(paddedLen);
            for (int s = 0; s < stripes; s++) {
                int from = s * stripeBytes + d * CELL;
                if (from < chunk.length) dataCells[d].put(s * CELL, chunk, from, Math.min(CELL, chunk.length - from));
            }
        }
        for (int p = 0; p < m; p++) parity[p] = direct ? ByteBuffer.allocateDirect(paddedLen) : ByteBuffer.allocate(paddedLen);
        codec.encode(dataCells, parity);
        byte[][] parts = new byte[k + m][];
        for (int p = 0; p < k + m; p++) {
            parts[p] = new byte[(int) partLength(chunk.length, k, p)];
            (p < k ? dataCells[p] : parity[p - k]).get(0, parts[p]);
        }
        return parts;
    }
}
