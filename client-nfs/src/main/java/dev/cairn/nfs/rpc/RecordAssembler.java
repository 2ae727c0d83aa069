package dev.cairn.nfs.rpc;

import java.util.ArrayList;
import java.util.List;

/**
 * ONC RPC record marking over a byte stream (RFC 5531 §11): each fragment is a 4-byte header (top bit
 * "last fragment", 31 bits of length) and its bytes; a record is its fragments joined. Fed whatever the
 * socket delivered, it hands out whole records. Memory per connection is bounded by {@code maxRecord}:
 * a record that would grow past it, or an empty non-last fragment run past {@link #MAX_FRAGMENTS},
 * poisons the stream (the connection is closed: there is no way to resynchronise a byte stream).
 */
public final class RecordAssembler {
    /** More fragments than this in one record is not a client, it is an attack on our bookkeeping. */
    public static final int MAX_FRAGMENTS = 1024;

    private final int maxRecord;
    private final byte[] header = new byte[4];
    private int headerFill;
    /** Bytes left in the current fragment; -1 while reading a header. */
    private int fragmentLeft = -1;
    private boolean lastFragment;
    private int fragments;
    private byte[] record = new byte[0];
    private int recordFill;
    private String poisoned;

    public RecordAssembler(int maxRecord) { this.maxRecord = maxRecord; }

    /** Why the stream is unusable, or null. */
    public String poisoned() { return poisoned; }

    /** Whether part of a record (a header's bytes or a fragment's) has arrived and the record is not complete. */
    public boolean partial() { return headerFill > 0 || fragmentLeft >= 0 || fragments > 0; }

    /** Bytes held for a record not yet complete (for tests of the memory bound). */
    public int buffered() { return record.length; }

    /** Consumes {@code data}; returns the records it completed (possibly none). */
    public List<byte[]> feed(byte[] data, int off, int len) {
        return feed(java.nio.ByteBuffer.wrap(data, off, len));
    }

    /** Consumes what {@code data} has remaining (a socket buffer, read in place); returns the records it completed. */
    public List<byte[]> feed(java.nio.ByteBuffer data) {
        List<byte[]> out = new ArrayList<>(1);
        while (data.hasRemaining() && poisoned == null) {
            if (fragmentLeft < 0) {
                header[headerFill++] = data.get();
                if (headerFill < 4) continue;
                headerFill = 0;
                int h = ((header[0] & 0xff) << 24) | ((header[1] & 0xff) << 16) | ((header[2] & 0xff) << 8) | (header[3] & 0xff);
                lastFragment = (h & 0x8000_0000) != 0;
                int length = h & 0x7fff_ffff;
                if (++fragments > MAX_FRAGMENTS) {
                    poisoned = "more than " + MAX_FRAGMENTS + " fragments in one record";
                    break;
                }
                if ((long) recordFill + length > maxRecord) {
                    poisoned = "record of more than " + maxRecord + " bytes";
                    break;
                }
                fragmentLeft = length;
            } else {
                int n = Math.min(fragmentLeft, data.remaining());
                if (recordFill + n > record.length) record = grown(n);
                data.get(record, recordFill, n);
                recordFill += n;
                fragmentLeft -= n;
            }
            if (fragmentLeft == 0) {
                fragmentLeft = -1;
                if (lastFragment) {
                    out.add(record.length == recordFill ? record : java.util.Arrays.copyOf(record, recordFill));
                    record = new byte[0];
                    recordFill = 0;
                    fragments = 0;
                }
            }
        }
        return out;
    }

    /**
     * The record's buffer grown to take {@code n} more bytes. A record's only fragment (what every client sends) gets
     * its exact size once its first bytes are here, so a 1 MiB WRITE is copied once and never regrown: doubling from
     * what arrived copied and zeroed it about three times over. Sized from the header, but only once bytes follow it,
     * and never past {@code maxRecord}: a header alone costs nothing, and a sender that follows a lying header with a
     * byte holds no more than one that sends the whole record (the server's bound over all connections counts both).
     * A record of several fragments grows with what arrives.
     */
    private byte[] grown(int n) {
        int want = fragments == 1 && lastFragment ? recordFill + fragmentLeft : Math.max(recordFill + n, 2 * record.length);
        return java.util.Arrays.copyOf(record, Math.min(maxRecord, want));
    }

    /** Frames {@code payload} as one record of one fragment. */
    public static byte[] frame(byte[] payload) { return fragment(payload, 0, payload.length, true); }

    /** One fragment: {@code len} bytes of {@code b} from {@code off}, marked last or not. */
    public static byte[] fragment(byte[] b, int off, int len, boolean last) {
        byte[] out = new byte[len + 4];
        int h = (last ? 0x8000_0000 : 0) | len;
        out[0] = (byte) (h >>> 24);
        out[1] = (byte) (h >>> 16);
        out[2] = (byte) (h >>> 8);
        out[3] = (byte) h;
        System.arraycopy(b, off, out, 4, len);
        return out;
    }
}
