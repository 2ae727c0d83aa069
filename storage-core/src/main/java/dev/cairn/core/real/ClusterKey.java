package dev.cairn.core.real;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.GeneralSecurityException;
import java.security.SecureRandom;
import java.util.HexFormat;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

/**
 * The secret every node and admin client of one cluster shares: 32 random bytes, kept as one line of hex in a
 * file only its owner may read ({@value #FILE_NAME} in the data directory {@code cairn up} uses). A node that
 * holds it refuses, before handling any message, a peer that cannot prove it holds it too ({@link PeerAuth}).
 */
public final class ClusterKey {
    public static final String FILE_NAME = "cluster.key";
    static final int KEY_BYTES = 32;
    static final String MAC = "HmacSHA256";

    private final byte[] key;

    private ClusterKey(byte[] key) {
        if (key.length != KEY_BYTES) throw new IllegalArgumentException("a cluster key is " + KEY_BYTES + " bytes, not " + key.length);
        this.key = key.clone();
    }

    /** A key made of the given bytes (tests). */
    public static ClusterKey of(byte[] key) { return new ClusterKey(key); }

    /** A new random key (not saved). */
    public static ClusterKey random() {
        byte[] k = new byte[KEY_BYTES];
        new SecureRandom().nextBytes(k);
        return new ClusterKey(k);
    }

    /** Reads a key file; a missing, unreadable or malformed one is refused with a message that names it. */
    public static ClusterKey load(Path file) {
        String text;
        try {
            text = Files.readString(file, StandardCharsets.US_ASCII).trim();
        } catch (IOException e) {
            throw new IllegalArgumentException("cannot read the cluster key " + file + ": " + e.getMessage(), e);
        }
        if (text.length() != 2 * KEY_BYTES || !text.chars().allMatch(c -> Character.digit(c, 16) >= 0)) {
            throw new IllegalArgumentException("the cluster key " + file + " is not " + 2 * KEY_BYTES + " hex digits");
        }
        return new ClusterKey(HexFormat.of().parseHex(text));
    }

    /**
     * The key in {@code file}, made (random, readable by its owner only) if there is none yet. Two processes making
     * it at once agree: the file is created whole under another name and moved into place only if absent.
     */
    public static ClusterKey loadOrCreate(Path file) {
        if (Files.exists(file)) return load(file);
        ClusterKey k = random();
        try {
            Path dir = file.toAbsolutePath().getParent();
            DurableDirectories.create(dir);
            Path tmp = Files.createTempFile(dir, FILE_NAME, ".new",
                    PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------")));
            Files.writeString(tmp, HexFormat.of().formatHex(k.key) + "\n", StandardCharsets.US_ASCII, StandardOpenOption.SYNC);
            try {
                Files.createLink(file, tmp); // fails if another process put its key there first
            } catch (FileAlreadyExistsException raced) {
                // theirs wins
            } finally {
                Files.delete(tmp);
            }
            DurableDirectories.sync(dir); // the key's name, as its bytes: a node must not come back to a new key
        } catch (IOException e) {
            throw new IllegalArgumentException("cannot create the cluster key " + file + ": " + e.getMessage(), e);
        }
        return load(file);
    }

    /** A fresh HMAC-SHA256 whose key is this key's HMAC of {@code label} and {@code context} (a session key). */
    Mac derive(String label, byte[]... context) {
        return mac(hmac(key, label, context));
    }

    /** HMAC-SHA256 of the label and the context pieces, in order, under this key. */
    byte[] hmac(String label, byte[]... context) { return hmac(key, label, context); }

    private static byte[] hmac(byte[] key, String label, byte[]... context) {
        Mac m = mac(key);
        m.update(label.getBytes(StandardCharsets.US_ASCII));
        for (byte[] c : context) m.update(c);
        return m.doFinal();
    }

    static Mac mac(byte[] key) {
        try {
            Mac m = Mac.getInstance(MAC);
            m.init(new SecretKeySpec(key, MAC));
            return m;
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException(MAC + " is part of every JDK", e);
        }
    }

    @Override public String toString() { return "ClusterKey[hidden]"; }
}
