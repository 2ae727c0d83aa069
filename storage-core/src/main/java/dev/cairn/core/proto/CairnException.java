package dev.cairn.core.proto;

/** A failed request, carrying the status a peer (or this node) answered. */
public final class CairnException extends RuntimeException implements dev.cairn.core.async.Unexpected.Expected {
    private final Status status;
    private final String detail;

    public CairnException(Status status, String detail) {
        super(status + ": " + detail, null, false, false);
        this.status = status;
        this.detail = detail;
    }

    public Status status() { return status; }

    /** The reason without the status, as sent on the wire. */
    public String detail() { return detail; }

    /** The reason to put on the wire for any failure. */
    public static String detailOf(Throwable t) {
        return t instanceof CairnException c ? c.detail() : String.valueOf(t.getMessage());
    }

    public static Status statusOf(Throwable t) {
        return t instanceof CairnException c ? c.status() : Status.IO;
    }
}
