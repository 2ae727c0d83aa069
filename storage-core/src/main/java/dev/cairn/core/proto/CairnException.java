package dev.cairn.core.proto;

/** A failed request, carrying the status a peer (or this node) answered. */
public final class CairnException extends RuntimeException {
    private final Status status;

    public CairnException(Status status, String message) {
        super(status + ": " + message, null, false, false);
        this.status = status;
    }

    public Status status() { return status; }

    public static Status statusOf(Throwable t) {
        return t instanceof CairnException c ? c.status() : Status.IO;
    }
}
