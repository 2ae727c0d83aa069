package dev.cairn.core.env;

import dev.cairn.core.proto.Message;

/**
 * Ordered, reliable-until-broken message delivery between nodes, like one TCP connection per peer.
 * A message may be lost only together with its connection, which the handler learns through
 * {@link MessageHandler#onDisconnect}.
 */
public interface Transport {
    /** Starts delivering inbound messages to {@code handler}; listens on {@code local} unless it is null. */
    void start(Address local, MessageHandler handler);

    /** Sends {@code message} to {@code to}, connecting first if needed. Never blocks. */
    void send(Address to, Message message);

    /** Closes every connection and stops listening. */
    void stop();
}
