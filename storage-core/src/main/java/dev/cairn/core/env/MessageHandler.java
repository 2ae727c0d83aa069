package dev.cairn.core.env;

import dev.cairn.core.proto.Message;

/** Inbound side of a node's transport; called on the node's scheduler. */
public interface MessageHandler {
    /** A message from {@code from}; reply by sending to {@code from}. */
    void onMessage(Address from, Message message);

    /** The connection to or from {@code peer} is gone; anything in flight on it is lost. */
    default void onDisconnect(Address peer) {}
}
