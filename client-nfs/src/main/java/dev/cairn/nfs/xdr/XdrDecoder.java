package dev.cairn.nfs.xdr;

import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.nio.ByteBuffer;

/**
 * Reads XDR (RFC 4506) from one received record. Every read checks what is left, and every
 * variable-length item has a caller-given maximum, so a hostile length can neither overrun the record
 * nor make the gateway allocate more than the record already holds.
 */
public final class XdrDecoder {
    private final byte[] buf;
    private int pos;
    private final int limit;

    public XdrDecoder(byte[] buf) { this(buf, 0, buf.length); }

    public XdrDecoder(byte[] buf, int offset, int length) {
        if (offset < 0 || length < 0 || offset + length > buf.length) throw new IllegalArgumentException("range outside the buffer");
        this.buf = buf;
        this.pos = offset;
        this.limit = offset + length;
    }

    public int remaining() { return limit - pos; }

    public int position() { return pos; }

    private void need(int n, String what) {
        if (n < 0 || n > limit - pos) throw new XdrException("truncated: " + what + " needs " + n + " bytes, " + (limit - pos) + " left");
    }

    public int readInt() {
        need(4, "int");
        int v = ((buf[pos] & 0xff) << 24) | ((buf[pos + 1] & 0xff) << 16) | ((buf[pos + 2] & 0xff) << 8) | (buf[pos + 3] & 0xff);
        pos += 4;
        return v;
    }

    /** An unsigned 32-bit value (RFC 4506 "unsigned int") as a long. */
    public long readUnsignedInt() { return readInt() & 0xffff_ffffL; }

    public long readLong() {
        long hi = readUnsignedInt();
        return (hi << 32) | readUnsignedInt();
    }

    public boolean readBoolean() {
        int v = readInt();
        if (v != 0 && v != 1) throw new XdrException("bad boolean " + v);
        return v == 1;
    }

    /** A count or length that must lie in [0, max]. */
    public int readLength(int max, String what) {
        int n = readInt();
        if (n < 0 || n > max) throw new XdrException(what + " length " + Integer.toUnsignedString(n) + " exceeds the limit of " + max);
        return n;
    }

    /** A variable-length opaque of at most {@code max} bytes. */
    public byte[] readOpaque(int max) {
        int n = readLength(max, "opaque");
        return readFixedOpaque(n);
    }

    /** A fixed-length opaque of {@code n} bytes (plus padding to 4). */
    public byte[] readFixedOpaque(int n) {
        int padded = (n + 3) & ~3;
        need(padded, "opaque of " + n);
        byte[] out = new byte[n];
        System.arraycopy(buf, pos, out, 0, n);
        for (int i = n; i < padded; i++) {
            if (buf[pos + i] != 0) throw new XdrException("non-zero padding");
        }
        pos += padded;
        return out;
    }

    /** A UTF-8 string of at most {@code max} bytes; invalid UTF-8 is bad XDR for NFSv4 (utf8str_cs). */
    public String readString(int max) {
        String s = readUtf8OrNull(max);
        if (s == null) throw new XdrException("string is not valid UTF-8");
        return s;
    }

    /** Like {@link #readString}, but invalid UTF-8 is read past and answered null (for fields whose own status covers it). */
    public String readUtf8OrNull(int max) {
        byte[] b = readOpaque(max);
        try {
            return StandardCharsets.UTF_8.newDecoder()
                    .onMalformedInput(CodingErrorAction.REPORT)
                    .onUnmappableCharacter(CodingErrorAction.REPORT)
                    .decode(ByteBuffer.wrap(b)).toString();
        } catch (CharacterCodingException e) {
            return null;
        }
    }

    /** Skips {@code n} bytes of a fixed-length item (padded). */
    public void skip(int n) {
        int padded = (n + 3) & ~3;
        need(padded, "skip");
        pos += padded;
    }

    /** A decoder of what is left, reading on its own (this one stays where it is): to look ahead. */
    public XdrDecoder copy() { return new XdrDecoder(buf, pos, limit - pos); }

    /** A slice of the next {@code n} bytes without copying (padded), e.g. WRITE data. */
    public XdrDecoder slice(int n) {
        int padded = (n + 3) & ~3;
        need(padded, "slice");
        XdrDecoder s = new XdrDecoder(buf, pos, n);
        pos += padded;
        return s;
    }

    /** Copies {@code n} raw bytes (no padding). */
    public byte[] readRaw(int n) {
        need(n, "raw");
        byte[] out = new byte[n];
        System.arraycopy(buf, pos, out, 0, n);
        pos += n;
        return out;
    }
}
