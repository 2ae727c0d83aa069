package dev.cairn.nfs.xdr;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;

/** Writes XDR (RFC 4506) into a growing buffer; {@link #mark}/{@link #patchInt} fill in counts known only later. */
public final class XdrEncoder {
    private byte[] buf;
    private int pos;

    public XdrEncoder() { this(256); }

    public XdrEncoder(int initial) { buf = new byte[Math.max(16, initial)]; }

    public int size() { return pos; }

    private void ensure(int n) {
        if (pos + n > buf.length) buf = Arrays.copyOf(buf, Math.max(buf.length * 2, pos + n));
    }

    public XdrEncoder writeInt(int v) {
        ensure(4);
        buf[pos] = (byte) (v >>> 24);
        buf[pos + 1] = (byte) (v >>> 16);
        buf[pos + 2] = (byte) (v >>> 8);
        buf[pos + 3] = (byte) v;
        pos += 4;
        return this;
    }

    public XdrEncoder writeUnsignedInt(long v) { return writeInt((int) v); }

    public XdrEncoder writeLong(long v) {
        writeInt((int) (v >>> 32));
        return writeInt((int) v);
    }

    public XdrEncoder writeBoolean(boolean v) { return writeInt(v ? 1 : 0); }

    public XdrEncoder writeOpaque(byte[] b) { return writeOpaque(b, 0, b.length); }

    public XdrEncoder writeOpaque(byte[] b, int off, int len) {
        writeInt(len);
        return writeFixedOpaque(b, off, len);
    }

    public XdrEncoder writeFixedOpaque(byte[] b) { return writeFixedOpaque(b, 0, b.length); }

    public XdrEncoder writeFixedOpaque(byte[] b, int off, int len) {
        int padded = (len + 3) & ~3;
        ensure(padded);
        System.arraycopy(b, off, buf, pos, len);
        for (int i = len; i < padded; i++) buf[pos + i] = 0;
        pos += padded;
        return this;
    }

    public XdrEncoder writeString(String s) { return writeOpaque(s.getBytes(StandardCharsets.UTF_8)); }

    /** Appends another encoder's bytes as they are. */
    public XdrEncoder writeRaw(XdrEncoder other) {
        ensure(other.pos);
        System.arraycopy(other.buf, 0, buf, pos, other.pos);
        pos += other.pos;
        return this;
    }

    /** Appends bytes as they are (already XDR: a multiple of four). */
    public XdrEncoder writeRaw(byte[] b) {
        assert b.length % 4 == 0 : "raw XDR of " + b.length + " bytes";
        ensure(b.length);
        System.arraycopy(b, 0, buf, pos, b.length);
        pos += b.length;
        return this;
    }

    /** Copies every byte written into {@code dst} at {@code at} (for a reply assembled once, at its exact size). */
    public void copyTo(byte[] dst, int at) { System.arraycopy(buf, 0, dst, at, pos); }

    /** A copy of the bytes from {@code from} to the end. */
    public byte[] copyFrom(int from) { return Arrays.copyOfRange(buf, from, pos); }

    /** Reserves an int to patch later; returns its position. */
    public int mark() {
        int at = pos;
        writeInt(0);
        return at;
    }

    public void patchInt(int at, int v) {
        buf[at] = (byte) (v >>> 24);
        buf[at + 1] = (byte) (v >>> 16);
        buf[at + 2] = (byte) (v >>> 8);
        buf[at + 3] = (byte) v;
    }

    /** Drops everything after the first {@code size} bytes (an operation's partial result, replaced by an error). */
    public void truncate(int size) {
        if (size < 0 || size > pos) throw new IllegalArgumentException("truncate to " + size + " of " + pos);
        pos = size;
    }

    public byte[] toByteArray() { return Arrays.copyOf(buf, pos); }

    /** Reserves {@code n} zero bytes (a multiple of four) to be patched later; returns their position. */
    public int reserve(int n) {
        assert n % 4 == 0 : "XDR reservation of " + n + " bytes";
        ensure(n);
        int at = pos;
        Arrays.fill(buf, at, at + n, (byte) 0);
        pos += n;
        return at;
    }

    /** Writes {@code b}, padded to four, over bytes already written from {@code at}. */
    public void patchFixedOpaque(int at, byte[] b) {
        int padded = (b.length + 3) & ~3;
        if (at < 0 || at + padded > pos) throw new IllegalArgumentException("patch of " + padded + " bytes at " + at + " of " + pos);
        System.arraycopy(b, 0, buf, at, b.length);
        Arrays.fill(buf, at + b.length, at + padded, (byte) 0);
    }

    /**
     * The bytes written, as {@link #toByteArray}, but handing over the encoder's own buffer when it holds exactly
     * them (a READ's result grows it to the size of its data, so its MiB is not copied once more); the encoder is
     * not used after.
     */
    public byte[] finish() {
        byte[] out = pos == buf.length ? buf : Arrays.copyOf(buf, pos);
        buf = new byte[0];
        pos = 0;
        return out;
    }
}
