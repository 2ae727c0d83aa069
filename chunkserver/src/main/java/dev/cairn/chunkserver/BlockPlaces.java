package dev.cairn.chunkserver;

import dev.cairn.core.chunk.ChunkFormat;
import java.util.Arrays;

/**
 * Where each block of one chunk copy is: its place or its shadow place ({@link ChunkFormat}), as this server
 * has it now (writes included) and as the newest durable header records it. The one rule: a write never lands
 * on a block the newest durable header names, so a power loss mid-overwrite leaves every byte that header
 * vouches for as it was.
 */
final class BlockPlaces {
    /** Blocks the copy may hold (where the shadow places begin). */
    final int capacity;
    /** Bit b: block b is now at its shadow place (writes included). */
    private final byte[] now;
    /** Bit b: the newest durable header has block b at its shadow place (meaningful below {@link #durableBlocks}). */
    private final byte[] durable;
    /** Blocks the newest durable header covers (0 while none is durable). */
    private int durableBlocks;

    BlockPlaces(int capacity) {
        if (capacity < 1 || capacity > ChunkFormat.MAX_BLOCKS) throw new IllegalArgumentException("capacity " + capacity);
        this.capacity = capacity;
        this.now = new byte[ChunkFormat.shadowBytes(capacity)];
        this.durable = new byte[now.length];
    }

    /** The places a durable header records (a copy recovered at start-up): now and durable alike. */
    static BlockPlaces recovered(ChunkFormat.Header h) {
        BlockPlaces p = new BlockPlaces(h.capacity());
        System.arraycopy(h.shadow(), 0, p.now, 0, h.shadow().length);
        System.arraycopy(h.shadow(), 0, p.durable, 0, h.shadow().length);
        p.durableBlocks = h.crcs().length;
        return p;
    }

    boolean shadowed(int block) { return bit(now, block); }

    /** Where block {@code block} starts in the file now. */
    long offset(int block) { return ChunkFormat.blockOffset(capacity, block, shadowed(block)); }

    /**
     * The place a write into {@code block} goes, which it is from then on: if the newest durable header names
     * the block where it is now, the other place; else where it is (a block no durable header covers, or one
     * already moved since the last header). Returns true for the shadow place.
     */
    boolean placeForWrite(int block) {
        checkBlock(block);
        boolean at = bit(now, block);
        if (block < durableBlocks && at == bit(durable, block)) {
            set(now, block, !at);
            return !at;
        }
        return at;
    }

    /** Puts block {@code block} back where it was before a write that failed chose its other place. */
    void restore(int block, boolean shadow) {
        checkBlock(block);
        set(now, block, shadow);
    }

    /** The shadow bits of blocks {@code [0, blocks)} as a header records them. */
    byte[] bits(int blocks) {
        assert blocks <= capacity;
        byte[] out = Arrays.copyOf(now, ChunkFormat.shadowBytes(blocks));
        if (blocks % 8 != 0 && out.length > 0) out[out.length - 1] &= (byte) ((1 << (blocks % 8)) - 1);
        return out;
    }

    /** A header recording {@code shadow} for blocks {@code [0, blocks)} is now the newest durable one. */
    void durable(byte[] shadow, int blocks) {
        assert blocks <= capacity && shadow.length == ChunkFormat.shadowBytes(blocks);
        Arrays.fill(durable, (byte) 0);
        System.arraycopy(shadow, 0, durable, 0, shadow.length);
        durableBlocks = blocks;
    }

    int durableBlocks() { return durableBlocks; }

    /** Blocks now at their shadow place among the first {@code blocks} (the extra space the copy takes). */
    int shadowCount(int blocks) {
        int n = 0;
        for (int b = 0; b < blocks; b++) if (bit(now, b)) n++;
        return n;
    }

    private void checkBlock(int block) {
        if (block < 0 || block >= capacity) throw new IllegalArgumentException("block " + block + " past the capacity of " + capacity);
    }

    private static boolean bit(byte[] bits, int b) { return (bits[b >>> 3] & (1 << (b & 7))) != 0; }

    private static void set(byte[] bits, int b, boolean on) {
        if (on) bits[b >>> 3] |= (byte) (1 << (b & 7));
        else bits[b >>> 3] &= (byte) ~(1 << (b & 7));
    }
}
