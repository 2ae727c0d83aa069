package dev.cairn.core.proto;

/**
 * Everything that crosses the wire. Every message carries a request id: a reply repeats the id of the
 * request it answers. One sealed interface per protocol; {@link Codec} gives each record a stable tag.
 */
public sealed interface Message permits MasterProtocol, ChunkProtocol, Ack {
    long rid();

    /** True for answers (matched to a pending request), false for requests. */
    default boolean isReply() { return false; }
}
