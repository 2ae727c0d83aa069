package dev.cairn.core.ec;

import dev.cairn.core.chunk.ChunkFormat;
import java.nio.ByteBuffer;

/**
 * The layout of an erasure-coded chunk (part of the on-disk format): the chunk is cut into stripes of k
 * cells of {@link #CELL} bytes (the last stripe zero-padded), each stripe gets m parity cells, and part i
 * holds cell i of every stripe in order, so part offset s·CELL is stripe s. Writers (the client, and a
 * chunkserver converting a file to an archive class) and the master's length checks share it.
 */
public final class Stripes {
    /** Bytes per cell: one checksum block, so a cell is verified on its own. */
    public static final int CELL = ChunkFormat.BLOCK_SIZE;

    private Stripes() {}

    /** Bytes each part holds for a chunk of {@code chunkBytes}. */
    public static long partLength(long chunkBytes, int k) {
        long stripe = (long) k * CELL;
        return (chunkBytes + stripe - 1) / stripe * CELL;
    }

    /** The k+m parts of {@code chunk}. */
    public static byte[][] encode(ErasureCodec codec, byte[] chunk) {
        int k = codec.k(), m = codec.m();
        int stripeBytes = k * CELL;
        int stripes = (chunk.length + stripeBytes - 1) / stripeBytes;
        int partLen = stripes * CELL;
        boolean direct = codec.engine().needsDirectBuffers();
        ByteBuffer[] dataCells = new ByteBuffer[k], parity = new ByteBuffer[m];
        for (int d = 0; d < k; d++) {
            dataCells[d] = direct ? ByteBuffer.allocateDirect(partLen) : ByteBuffer.allocate(partLen);
            for (int s = 0; s < stripes; s++) {
                int from = s * stripeBytes + d * CELL;
                if (from < chunk.length) dataCells[d].put(s * CELL, chunk, from, Math.min(CELL, chunk.length - from));
            }
        }
        for (int p = 0; p < m; p++) parity[p] = direct ? ByteBuffer.allocateDirect(partLen) : ByteBuffer.allocate(partLen);
        codec.encode(dataCells, parity);
        byte[][] parts = new byte[k + m][partLen];
        for (int d = 0; d < k; d++) dataCells[d].get(0, parts[d]);
        for (int p = 0; p < m; p++) parity[p].get(0, parts[k + p]);
        return parts;
    }
}
