package dev.cairn.core.chunk;

/**
 * CRC32C arithmetic the JDK does not offer: the checksum of a concatenation from the checksums of its parts
 * (zlib's {@code crc32_combine}, over the Castagnoli polynomial). A chunk block whose pages lie in both of their
 * places ({@link ChunkFormat}) is checksummed a run of pages at a time and the pieces combined; a simulated file
 * answers a checksum over many pages from checksums it remembers per page, without reading the bytes again.
 */
public final class Crc32c {
    /** The Castagnoli polynomial, bit-reflected (as CRC32C computes it). */
    private static final int POLY = 0x82F63B78;
    /**
     * {@code X2N[k]} is x^(2^k) mod the polynomial (bit 31 is x^0, reflected), for every bit of a length in
     * bits. zlib wraps its table at 32 entries, which holds for CRC-32's polynomial but not for Castagnoli's
     * (it has the factor x + 1, so x^(2^32) is not x).
     */
    private static final int[] X2N = new int[64 + 3];

    static {
        int p = 1 << 30; // x^1
        X2N[0] = p;
        for (int k = 1; k < X2N.length; k++) X2N[k] = p = multiply(p, p);
    }

    /**
     * {@link #shift} of lengths under this, computed on first use (0: not yet; no shift is 0). A file's last
     * page is partial in nearly every checksum of a chunk, and its shift cost a dozen multiplications.
     */
    private static final int[] SHORT_SHIFTS = new int[ChunkFormat.PAGE_SIZE + 1];

    private Crc32c() {}

    /** The checksum of {@code a ‖ b}, given the checksum of {@code a}, that of {@code b}, and {@code b}'s length. */
    public static int combine(int crcA, int crcB, long lengthB) {
        if (crcA == 0) return crcB; // anything times 0 is 0 (as for an empty a)
        int s;
        if (lengthB < SHORT_SHIFTS.length && lengthB >= 0) {
            s = SHORT_SHIFTS[(int) lengthB];
            if (s == 0) s = SHORT_SHIFTS[(int) lengthB] = shift(lengthB);
        } else {
            s = shift(lengthB);
        }
        return multiply(s, crcA) ^ crcB;
    }

    /** The operator that appends {@code bytes} zero bytes to a checksum (x^(8·bytes) mod the polynomial): precompute it for a fixed length. */
    public static int shift(long bytes) {
        if (bytes < 0) throw new IllegalArgumentException("negative length " + bytes);
        int p = 1 << 31; // x^0
        int k = 3; // 8 bits a byte: x^(bytes · 2^3)
        for (long n = bytes; n != 0; n >>>= 1, k++) {
            if ((n & 1) != 0) p = multiply(X2N[k], p);
        }
        return p;
    }

    /** {@link #combine} with a precomputed {@link #shift} of {@code b}'s length. */
    public static int combineShifted(int crcA, int crcB, int shiftB) {
        return multiply(shiftB, crcA) ^ crcB;
    }

    /** a·b modulo the polynomial, both reflected. */
    private static int multiply(int a, int b) {
        if (a == 0) return 0;
        int m = 1 << 31, p = 0;
        while (true) {
            if ((a & m) != 0) {
                p ^= b;
                if ((a & (m - 1)) == 0) return p;
            }
            m >>>= 1;
            b = (b & 1) != 0 ? (b >>> 1) ^ POLY : b >>> 1;
        }
    }
}
