package dev.cairn.nfs.v4.state;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * A client as EXCHANGE_ID (4.1) or SETCLIENTID (4.0) made it: its owner string and boot verifier, its
 * id, whether it is confirmed, its lease and its sessions.
 */
public final class Client {
    private final long id;
    private final byte[] owner;
    private final byte[] verifier;
    private final int minorVersion;
    /** Who created it (the AUTH_SYS uid): another principal may not take over the record (CLID_INUSE). */
    private final int principal;
    boolean confirmed;
    /** CREATE_SESSION's sequence id (RFC 8881 §18.36.4) and the reply of the last one, for its replays. */
    int createSessionSeq;
    byte[] lastCreateSessionReply;
    /** 4.0: the verifier SETCLIENTID_CONFIRM must present. */
    byte[] confirmVerifier;
    /** 4.0: a callback update's verifier (SETCLIENTID again by the confirmed client), until it is confirmed. */
    byte[] updateVerifier;
    long leaseExpiresNanos;
    boolean reclaimComplete;
    final List<Session> sessions = new ArrayList<>();

    Client(long id, byte[] owner, byte[] verifier, int minorVersion, int principal, byte[] confirmVerifier) {
        this.id = id;
        this.owner = owner.clone();
        this.verifier = verifier.clone();
        this.minorVersion = minorVersion;
        this.principal = principal;
        this.confirmVerifier = confirmVerifier.clone();
        this.createSessionSeq = 0;
    }

    public long id() { return id; }

    public int minorVersion() { return minorVersion; }

    public boolean confirmed() { return confirmed; }

    public int principal() { return principal; }

    public int createSessionSeq() { return createSessionSeq; }

    public boolean reclaimComplete() { return reclaimComplete; }

    public List<Session> sessions() { return List.copyOf(sessions); }

    public boolean sameVerifier(byte[] v) { return Arrays.equals(verifier, v); }

    public byte[] owner() { return owner.clone(); }

    public byte[] confirmVerifier() { return confirmVerifier.clone(); }

    /** Whether {@code v} confirms the pending callback update (4.0). */
    public boolean confirmsUpdate(byte[] v) { return updateVerifier != null && Arrays.equals(updateVerifier, v); }
}
