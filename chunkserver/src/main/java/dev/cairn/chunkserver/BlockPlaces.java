package dev.cairn.chunkserver;

import dev.cairn.core.chunk.ChunkFormat;
import java.util.Arrays;

/**
 * Where each page of one chunk copy is: its place or its shadow place ({@link ChunkFormat}), as this server
 * has it now (writes included) and as the newest durable header records it. The one rule: a write never lands
 * on a page the newest durable header names, so a power loss mid-overwrite leaves every byte that header
 * vouches for as it was.
 */
final class BlockPlaces {
    /** Blocks the copy may hold (where the shadow places begin). */
    final int capacity;
    /** Bit p: page p is now at its shadow place (writes included). */
    private final byte[] now;
    /** Bit p: the newest durable header has page p at its shadow place (meaningful below {@link #durablePages}). */
    private final byte[] durable;
    /** Pages the newest durable header covers (0 while none is durable). */
    private int durablePages;

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
        p.durablePages = h.crcs().length * ChunkFormat.PAGES_PER_BLOCK;
        return p;
    }

    boolean shadowed(int page) { return bit(now, page); }

    /** Whether any page of block {@code block} is now at its shadow place. */
    boolean anyShadowed(int block) {
        for (int i = 0; i < ChunkFormat.PAGES_PER_BLOCK / 8; i++) if (now[block * (ChunkFormat.PAGES_PER_BLOCK / 8) + i] != 0) return true;
        return false;
    }

    /** Where page {@code page} starts in the file now. */
    long offset(int page) { return ChunkFormat.pageOffset(capacity, page, shadowed(page)); }

    /**
     * The place a write into {@code page} goes, which it is from then on: if the newest durable header names
     * the page where it is now, the other place; else where it is (a page no durable header covers, or one
     * already moved since the last header). Returns true for the shadow place.
     */
    boolean placeForWrite(int page) {
        checkPage(page);
        boolean at = bit(now, page);
        if (page < durablePages && at == bit(durable, page)) {
            set(now, page, !at);
            return !at;
        }
        return at;
    }

    /** Puts page {@code page} back where it was before a write that failed chose its other place. */
    void restore(int page, boolean shadow) {
        checkPage(page);
        set(now, page, shadow);
    }

    /** The shadow bits of the pages of blocks {@code [0, blocks)} as a header records them. */
    byte[] bits(int blocks) {
        assert blocks <= capacity;
        return Arrays.copyOf(now, ChunkFormat.shadowBytes(blocks));
    }

    /** A header recording {@code shadow} for the pages of blocks {@code [0, blocks)} is now the newest durable one. */
    void durable(byte[] shadow, int blocks) {
        assert blocks <= capacity && shadow.length == ChunkFormat.shadowBytes(blocks);
        Arrays.fill(durable, (byte) 0);
        System.arraycopy(shadow, 0, durable, 0, shadow.length);
        durablePages = blocks * ChunkFormat.PAGES_PER_BLOCK;
    }

    private void checkPage(int page) {
        if (page < 0 || page >= capacity * ChunkFormat.PAGES_PER_BLOCK) {
            throw new IllegalArgumentException("page " + page + " past the capacity of " + capacity + " blocks");
        }
    }

    private static boolean bit(byte[] bits, int p) { return (bits[p >>> 3] & (1 << (p & 7))) != 0; }

    private static void set(byte[] bits, int p, boolean on) {
        if (on) bits[p >>> 3] |= (byte) (1 << (p & 7));
        else bits[p >>> 3] &= (byte) ~(1 << (p & 7));
    }
}
