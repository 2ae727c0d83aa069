package dev.cairn.core.proto;

/** Outcome of a request. Append only: the ordinal is on the wire. */
public enum Status {
    OK,
    NOT_FOUND,
    EXISTS,
    NOT_DIR,
    IS_DIR,
    NOT_EMPTY,
    /** Not enough live servers to place the data. */
    NO_SPACE,
    /** A copy's version is not the one asked for. */
    STALE,
    /** A disk or peer failed; the request may succeed elsewhere or later. */
    IO,
    /** Bytes on disk do not match their checksum. */
    CORRUPT,
    BAD_REQUEST,
    /** Another operation on the same object is in progress; retry shortly. */
    BUSY,
    /** Peer did not answer in time or the connection broke. */
    UNAVAILABLE,
    /** The write window of a chunk version has closed (on the chunkserver's own clock); ask for a new lease. */
    EXPIRED,
    /**
     * This master is not the leader of its group (or is not ready to serve yet): nothing was done; ask the
     * leader, whose client address the detail names after {@code leader=} when known.
     */
    NOT_LEADER;

    public boolean retryable() {
        return this == IO || this == BUSY || this == UNAVAILABLE || this == STALE || this == CORRUPT || this == EXPIRED || this == NOT_LEADER;
    }
}
