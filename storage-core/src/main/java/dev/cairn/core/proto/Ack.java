package dev.cairn.core.proto;

/** The plain answer: a status and, on failure, a reason. For a chain failure the reason names the failed server. */
public record Ack(long rid, Status status, String detail) implements Message {
    public static Ack ok(long rid) { return new Ack(rid, Status.OK, ""); }

    @Override public boolean isReply() { return true; }
}
