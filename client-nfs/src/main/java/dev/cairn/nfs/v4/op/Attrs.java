package dev.cairn.nfs.v4.op;

import dev.cairn.nfs.xdr.XdrDecoder;

/** bitmap4 helpers (RFC 8881 §3.3.7). */
final class Attrs {
    /** No attribute number we know is above 95: three words; clients send at most that (knfsd's limit too). */
    static final int MAX_BITMAP_WORDS = 3;

    private Attrs() {}

    static int[] readBitmap(XdrDecoder d) {
        int n = d.readLength(MAX_BITMAP_WORDS, "bitmap");
        int[] words = new int[n];
        for (int i = 0; i < n; i++) words[i] = d.readInt();
        return words;
    }
}
