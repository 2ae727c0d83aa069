package dev.cairn.nfs.v4.state;

/**
 * One slot of a session's reply cache (RFC 8881 §2.10.6): the sequence id last seen on it and the whole
 * COMPOUND reply it got, so a retransmission is answered from here and never executed twice.
 */
public final class Slot {
    int sequenceId;
    /** The cached reply of {@link #sequenceId}; null while it runs, or when it was too big to keep. */
    byte[] reply;
    boolean inProgress;

    public int sequenceId() { return sequenceId; }
}
