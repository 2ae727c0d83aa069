package dev.cairn.core.real;

import dev.cairn.core.env.Address;
import dev.cairn.core.env.Env;
import dev.cairn.core.env.Node;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.nio.NioIoHandler;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.function.Function;

/**
 * Runs nodes on this machine, each on its own single-threaded event loop with its own data directory.
 * This is the one place (with the rest of {@code dev.cairn.core.real}) allowed to touch threads,
 * sockets, files and the system clock directly.
 */
public final class RealRuntime implements AutoCloseable {
    /** A running node. */
    public static final class Handle<N extends Node> {
        private final RealEnv env;
        private final EventLoopGroup group;
        private final N node;

        private Handle(RealEnv env, EventLoopGroup group, N node) {
            this.env = env;
            this.group = group;
            this.node = node;
        }

        public N node() { return node; }

        public Env env() { return env; }

        /**
         * Why a node this one connected to turned out not to be of its cluster (another cluster key, or a key on only
         * one side); null while none has. Any thread.
         */
        public String refusedBy() { return env.nettyTransport().refusedBy(); }

        /** The node's event loop, for a server (the NFS port) that must run on the node's own thread. */
        public io.netty.channel.EventLoop eventLoop() { return env.loop(); }

        /** Runs {@code action} on the node's loop and waits for it (for tests and the CLI, never node code). */
        public <T> T call(Function<N, T> action) {
            CompletableFuture<T> f = new CompletableFuture<>();
            env.loop().execute(() -> {
                try { f.complete(action.apply(node)); } catch (Throwable t) { f.completeExceptionally(t); }
            });
            return f.join();
        }

        public void run(Consumer<N> action) { call(n -> { action.accept(n); return null; }); }

        void stop() {
            try {
                env.loop().submit(node::stop).get(10, TimeUnit.SECONDS);
            } catch (Exception e) {
                // the loop may already be gone; closing the env below releases what is left
            }
            env.close();
            group.shutdownGracefully(0, 2, TimeUnit.SECONDS).awaitUninterruptibly();
        }
    }

    private final List<Handle<?>> handles = new ArrayList<>();
    /** Null: nodes of an open cluster. */
    private final ClusterKey key;

    /** Nodes of an open cluster: no handshake, and any process that reaches a port can send commands. */
    public RealRuntime() { this.key = null; }

    /** Nodes that prove they hold {@code key} to every peer and refuse peers that do not ({@link PeerAuth}). */
    public RealRuntime(ClusterKey key) { this.key = java.util.Objects.requireNonNull(key); }

    private int netThreads = NettyTransport.DEFAULT_NET_THREADS;

    /** Socket threads of each node started after this (0: its sockets live on its own loop); returns this runtime. */
    public synchronized RealRuntime netThreads(int n) {
        if (n < 0 || n > NettyTransport.MAX_NET_THREADS) throw new IllegalArgumentException("socket threads " + n);
        netThreads = n;
        return this;
    }

    /**
     * Starts a node: makes its loop, checks its volumes, binds {@code listen} (if not null), then calls
     * {@link Node#start()} on the loop. Throws with a clear message if the directory or port is unusable.
     */
    public <N extends Node> Handle<N> start(String hostId, Path dataDir, Address listen,
                                            List<String> volumes, Function<Env, N> factory) {
        return start(hostId, dataDir, listen, volumes, java.util.Map.of(), factory);
    }

    /** As above, with some volumes in directories of their own ({@code volumeDirs}) rather than under {@code dataDir}. */
    public synchronized <N extends Node> Handle<N> start(String hostId, Path dataDir, Address listen, List<String> volumes,
                                                         java.util.Map<String, Path> volumeDirs, Function<Env, N> factory) {
        EventLoopGroup group = new MultiThreadIoEventLoopGroup(1, NioIoHandler.newFactory());
        RealEnv env = new RealEnv(hostId, dataDir, volumeDirs, group.next(), key, netThreads);
        // a bug caught on the node's loop (a promise chain, a handler) is logged with its stack trace
        org.slf4j.Logger bugs = org.slf4j.LoggerFactory.getLogger("dev.cairn.bug");
        env.loop().execute(() -> dev.cairn.core.async.Unexpected.install(t -> bugs.error("[" + hostId + "] unexpected error (a bug)", t)));
        try {
            for (String v : volumes) env.requireVolume(v);
            if (listen != null) env.nettyTransport().bind(listen);
            N node = factory.apply(env);
            Handle<N> h = new Handle<>(env, group, node);
            h.run(Node::start);
            handles.add(h);
            return h;
        } catch (RuntimeException | InterruptedException e) {
            env.close();
            group.shutdownGracefully(0, 1, TimeUnit.SECONDS);
            if (e instanceof InterruptedException) Thread.currentThread().interrupt();
            throw e instanceof RuntimeException r ? r : new IllegalStateException(e);
        }
    }

    /** Stops one node (as a crash would, minus the power loss: the OS keeps what was written). */
    public synchronized void stop(Handle<?> h) {
        if (handles.remove(h)) h.stop();
    }

    @Override public synchronized void close() {
        for (int i = handles.size() - 1; i >= 0; i--) handles.get(i).stop();
        handles.clear();
    }
}
