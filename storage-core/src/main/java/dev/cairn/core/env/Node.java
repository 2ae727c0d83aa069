package dev.cairn.core.env;

/** A single-threaded state machine on an {@link Env}: master, chunkserver, client session, gateway. */
public interface Node {
    /** Called once, on the node's scheduler. */
    void start();

    /** Called once, on the node's scheduler, before the runtime lets go of its Env. */
    default void stop() {}
}
