package dev.cairn.core.real;

import org.junit.jupiter.api.Nested;

/**
 * The transport's tests again with the sockets on threads of their own beside each node's loop (what a machine of four
 * cores or more runs by default): messages in order, bounds, refusals and the handshake hold there too.
 */
class SocketThreadsTest {
    @Nested class Runtime extends RealRuntimeTest {
        @Override int netThreads() { return 2; }
    }

    @Nested class Authentication extends PeerAuthTest {
        @Override int netThreads() { return 2; }
    }
}
