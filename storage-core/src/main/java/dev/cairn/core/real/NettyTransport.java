package dev.cairn.core.real;

import dev.cairn.core.env.Address;
import dev.cairn.core.env.MessageHandler;
import dev.cairn.core.env.Transport;
import dev.cairn.core.proto.Codec;
import dev.cairn.core.proto.CodecException;
import dev.cairn.core.proto.Message;
import io.netty.bootstrap.Bootstrap;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoop;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.nio.NioIoHandler;
import io.netty.util.concurrent.DefaultThreadFactory;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import io.netty.channel.socket.nio.NioSocketChannel;
import io.netty.handler.codec.LengthFieldBasedFrameDecoder;
import io.netty.handler.codec.LengthFieldPrepender;
import io.netty.handler.codec.TooLongFrameException;
import io.netty.handler.timeout.IdleStateEvent;
import io.netty.handler.timeout.IdleStateHandler;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * TCP with 4-byte length-prefixed frames, one connection per peer. The sockets live on the node's loop or, with socket
 * threads ({@link #DEFAULT_NET_THREADS}), on threads of the transport's own, which then frame, verify (the cluster key's
 * tags), sign and decode beside the node's loop (a gateway reading at full speed spends ~30 % of its loop on these);
 * the node sees only whole messages, handed to its loop in each connection's order, and sends from its loop. What the
 * node's loop owns: the connection maps and the handler; what socket threads share with it: counters, kept atomic.
 * A frame longer than {@link Codec#MAX_FRAME_BYTES} or one that does not decode closes its connection
 * (the node stays up). Outbound connections are keyed by the target address; accepted ones by the
 * peer's address, so a reply to {@code from} goes back over the connection the request came on.
 * With a {@link ClusterKey}, every connection opens with {@link PeerAuth}'s handshake and every frame is signed; a
 * peer without the key is refused before any of its bytes reach the codec. Without one the node is open to any
 * process that reaches its port (said once in the log at start).
 */
final class NettyTransport implements Transport {
    private static final Logger LOG = LoggerFactory.getLogger(NettyTransport.class);
    /** Messages queued for a peer while its connection is being set up. */
    static final int MAX_QUEUED_WHILE_CONNECTING = 4096;
    static final int CONNECT_TIMEOUT_MILLIS = 3000;
    /** Connections accepted and open at once; one more is closed at once (a node has a few peers and clients). */
    static final int MAX_ACCEPTED_CONNECTIONS = 2048;
    /**
     * Bytes held in frames not yet complete, over all of this node's connections. The connection whose bytes take
     * the total past it is closed: a peer sends a frame's bytes back to back, so only stalled or hostile streams
     * hold many partial frames at once (200 connections each holding 2 MB of a frame once took a master's memory
     * from 116 to 502 MB for good).
     */
    static final long MAX_PARTIAL_FRAME_BYTES = 64L << 20;
    /**
     * Bytes of messages written to all connections and not yet taken by their sockets, at most: a quarter of the heap
     * (they are heap arrays), at least 64 MiB. Past it, the connection holding the most is closed; its calls fail and
     * are retried. One connection may hold half of it, then it is closed: its peer is not reading what it asked for
     * (10 connections pipelining 1 MiB reads whose replies were never read once took a gateway from 386 to 870 MB).
     * A node never stops reading a connection for this: two nodes each waiting for the other to read would never move.
     */
    static final long MAX_UNSENT_BYTES = Math.max(64L << 20, Runtime.getRuntime().maxMemory() / 4);
    /** A connection holding part of a frame that sends nothing more for this long is closed. */
    static final int FRAME_STALL_SECONDS = 30;
    private static final long WARN_EVERY_NANOS = 60_000_000_000L;
    /**
     * Socket threads per node by default: none (the sockets live on the node's loop) below four cores, where every
     * process of a test cluster shares two cores and handing each message between threads cost 7-15 % of NFS
     * throughput (docs/benchmarks.md); else half the cores, at most 4. {@code -Dcairn.net.threads=N} sets it.
     */
    static final int DEFAULT_NET_THREADS = Integer.getInteger("cairn.net.threads",
            Runtime.getRuntime().availableProcessors() < 4 ? 0 : Math.min(4, Runtime.getRuntime().availableProcessors() / 2));
    /** The most socket threads a node takes. */
    static final int MAX_NET_THREADS = 64;

    private final EventLoop loop;
    /** Where the sockets live (framing, MACs, decoding): the node's loop, or a group of its own beside it. */
    private final EventLoopGroup sockets;
    private final String host;
    /** Null: an open node (no handshake, unsigned frames). */
    private final ClusterKey key;
    private final Set<ByteBuffer> handshakeNonces = java.util.concurrent.ConcurrentHashMap.newKeySet();
    private final Map<Address, Channel> channels = new HashMap<>();
    private final Map<Address, ArrayDeque<Message>> connecting = new HashMap<>();
    private Channel server;
    private MessageHandler handler;
    private volatile boolean stopped;
    private final AtomicInteger accepted = new AtomicInteger();
    private final AtomicLong partialFrameBytes = new AtomicLong();
    private final AtomicLong refusedPeers = new AtomicLong();
    private final AtomicLong unsentBytes = new AtomicLong();
    private volatile long maxUnsent = MAX_UNSENT_BYTES;
    private static final io.netty.util.AttributeKey<AtomicLong> UNSENT = io.netty.util.AttributeKey.valueOf("cairn.unsent");
    /** Why the last connection this node opened failed its handshake for good (another key, or none); else null. */
    private volatile String refusedBy;
    private long lastWarn = System.nanoTime() - WARN_EVERY_NANOS;
    private int warnsHeld;

    NettyTransport(EventLoop loop, String host, ClusterKey key, int netThreads) {
        if (netThreads < 0 || netThreads > MAX_NET_THREADS) throw new IllegalArgumentException("socket threads " + netThreads + " not in 0.." + MAX_NET_THREADS);
        this.loop = loop;
        this.sockets = netThreads == 0 ? loop : new MultiThreadIoEventLoopGroup(netThreads, new DefaultThreadFactory("cairn-net-" + host, true),
                NioIoHandler.newFactory());
        this.host = host;
        this.key = key;
    }

    /** Connections refused by the cluster handshake since start; any thread. */
    long refusedPeers() { return refusedPeers.get(); }

    /**
     * Why a peer this node connected to is not of its cluster, as far as a handshake settled it (another key on either
     * side, or only one side with a key); null if none was. Any thread: a command-line client fails at once with it
     * rather than waiting out its call timeout.
     */
    String refusedBy() { return refusedBy; }

    /** Lowers the unsent budget (half of it per connection); any thread (tests, whose heap is large). */
    void limitUnsent(long bytes) { maxUnsent = bytes; }

    /** Bytes of messages written and not yet taken by their sockets, all connections; any thread (tests). */
    long unsentBytes() { return unsentBytes.get(); }

    /** Frames and their bytes received (on the I/O threads) and sent (on the loop) since start; read by a metrics scrape. */
    private final java.util.concurrent.atomic.LongAdder framesIn = new java.util.concurrent.atomic.LongAdder(), bytesIn = new java.util.concurrent.atomic.LongAdder();
    private volatile long framesOut, bytesOut;

    long framesIn() { return framesIn.sum(); }

    long bytesIn() { return bytesIn.sum(); }

    long framesOut() { return framesOut; }

    long bytesOut() { return bytesOut; }

    /** Connections open now (to and from peers); from any thread, approximately. */
    int connections() { return openConnections.get(); }

    private final AtomicInteger openConnections = new AtomicInteger();

    /** Bytes held in partial frames now; any thread (tests of the memory bound). */
    long partialFrameBytes() { return partialFrameBytes.get(); }

    /**
     * Runs {@code task} on the node's loop, after everything this thread handed it before (a connection's messages and
     * its end keep their order); dropped once the node is stopping.
     */
    private void onLoop(Runnable task) {
        if (loop.inEventLoop()) { // sockets on the node's loop
            task.run();
            return;
        }
        if (loop.isShuttingDown()) return;
        try {
            loop.execute(() -> {
                try {
                    task.run();
                } catch (RuntimeException | Error t) {
                    dev.cairn.core.async.Unexpected.report(t); // the node's sink: logged as a bug with its stack trace
                }
            });
        } catch (java.util.concurrent.RejectedExecutionException e) {
            // the node stopped meanwhile: nothing is left to tell
        }
    }

    /** Binds the listening socket; called by the runtime before the node starts, off the loop. */
    void bind(Address local) throws InterruptedException {
        ServerBootstrap b = new ServerBootstrap()
                .group(loop, sockets)
                .channel(NioServerSocketChannel.class)
                .childOption(ChannelOption.TCP_NODELAY, true)
                .childHandler(new ChannelInitializer<SocketChannel>() {
                    @Override protected void initChannel(SocketChannel ch) {
                        // on the channel's I/O thread
                        InetSocketAddress r = ch.remoteAddress();
                        Address peer = new Address(r.getAddress().getHostAddress(), r.getPort());
                        if (accepted.incrementAndGet() > MAX_ACCEPTED_CONNECTIONS) {
                            accepted.decrementAndGet();
                            warnRarely("refusing a connection from " + peer + ": " + MAX_ACCEPTED_CONNECTIONS + " open already");
                            ch.close();
                            return;
                        }
                        ch.closeFuture().addListener(f -> accepted.decrementAndGet());
                        pipeline(ch, peer, PeerAuth.Role.ACCEPTOR);
                        // known to the node before any of its messages (handed to the loop after this)
                        onLoop(() -> {
                            if (ch.isOpen() && !stopped) channels.put(peer, ch);
                        });
                    }
                });
        ChannelFuture f = b.bind(local.host(), local.port()).await();
        if (!f.isSuccess()) {
            throw new IllegalStateException("cannot listen on " + local + ": " + f.cause().getMessage(), f.cause());
        }
        server = f.channel();
        if (key == null) LOG.warn("[{}] no cluster key: any process that reaches {} can send this node commands", host, local);
    }

    @Override public void start(Address local, MessageHandler h) {
        assert loop.inEventLoop();
        this.handler = h;
    }

    @Override public void send(Address to, Message message) {
        assert loop.inEventLoop() : "send off the node's loop";
        if (stopped) return;
        Channel ch = channels.get(to);
        if (ch != null) {
            write(ch, message);
            return;
        }
        ArrayDeque<Message> q = connecting.get(to);
        if (q != null) {
            if (q.size() >= MAX_QUEUED_WHILE_CONNECTING) {
                LOG.warn("[{}] dropping message to {}: {} queued while connecting", host, to, q.size());
                return;
            }
            q.add(message);
            return;
        }
        q = new ArrayDeque<>();
        q.add(message);
        connecting.put(to, q);
        Bootstrap b = new Bootstrap()
                .group(sockets)
                .channel(NioSocketChannel.class)
                .option(ChannelOption.TCP_NODELAY, true)
                .option(ChannelOption.CONNECT_TIMEOUT_MILLIS, CONNECT_TIMEOUT_MILLIS)
                .handler(new ChannelInitializer<SocketChannel>() {
                    @Override protected void initChannel(SocketChannel ch) { pipeline(ch, to, PeerAuth.Role.INITIATOR); }
                });
        b.connect(to.host(), to.port()).addListener((ChannelFuture f) -> onLoop(() -> {
            ArrayDeque<Message> queued = connecting.remove(to);
            if (!f.isSuccess() || stopped) {
                LOG.debug("[{}] connect to {} failed: {}", host, to, f.cause() == null ? "stopped" : f.cause().toString());
                if (f.isSuccess()) f.channel().close();
                if (handler != null && !stopped) handler.onDisconnect(to);
                return;
            }
            // closed before the loop got here (refused, or reset at once): its channelInactive, queued after this, tells
            // the handler; the messages queued for it are lost with it, as on any broken connection
            if (!f.channel().isOpen()) return;
            channels.put(to, f.channel());
            if (queued != null) for (Message m : queued) write(f.channel(), m);
        }));
    }

    private void write(Channel ch, Message m) {
        ByteBuf frame = frameOf(m);
        int size = frame.readableBytes();
        if (size > Codec.MAX_FRAME_BYTES) {
            frame.release();
            throw new IllegalArgumentException(m.getClass().getSimpleName() + " of " + size + " bytes exceeds the frame limit");
        }
        AtomicLong unsent = ch.attr(UNSENT).setIfAbsent(new AtomicLong());
        if (unsent == null) unsent = ch.attr(UNSENT).get();
        long n = size;
        if (unsent.get() + n > maxUnsent / 2) {
            frame.release();
            warnRarely("closing connection with " + peerOf(ch) + ": " + (unsent.get() >> 20) + " MiB of messages to it not read");
            ch.close();
            return;
        }
        AtomicLong held = unsent;
        held.addAndGet(n);
        unsentBytes.addAndGet(n);
        framesOut++;
        bytesOut += n;
        ch.writeAndFlush(frame).addListener(f -> { // on the channel's I/O thread
            held.addAndGet(-n);
            unsentBytes.addAndGet(-n);
            if (!f.isSuccess() && ch.isOpen()) {
                // a message that could not be sent (out of memory signing it, say) must not vanish while its caller
                // waits out a timeout: the connection goes, and its calls fail now and are retried
                warnRarely("closing connection with " + peerOf(ch) + ": a " + m.getClass().getSimpleName() + " could not be sent (" + f.cause() + ")");
                ch.close();
            }
        });
        if (unsentBytes.get() > maxUnsent) closeLargestUnsent();
    }

    /**
     * A message's frame: its small fields copied out of the encoder, its payloads (a chunk's data) sent from the
     * message's own arrays, which nobody changes once sent. Encoding into one flat array allocated, zeroed and
     * copied every 1 MiB write once more at each hop (a tenth of a chunkserver's CPU on the write path).
     */
    private static ByteBuf frameOf(Message m) {
        Codec.Frame f = new Codec.Encoder().encode(m);
        List<ByteBuf> pieces = new ArrayList<>(3);
        f.pieces((b, off, len, payload) -> pieces.add(payload ? Unpooled.wrappedBuffer(b, off, len) : Unpooled.wrappedBuffer(Arrays.copyOfRange(b, off, off + len))));
        return pieces.size() == 1 ? pieces.get(0) : Unpooled.wrappedBuffer(pieces.toArray(new ByteBuf[0]));
    }

    /** Over the node's budget for unsent messages: the connection holding the most goes. */
    private void closeLargestUnsent() {
        Channel largest = null;
        long most = 0;
        for (Channel c : channels.values()) {
            AtomicLong u = c.attr(UNSENT).get();
            if (u != null && u.get() > most) {
                most = u.get();
                largest = c;
            }
        }
        if (largest == null) return;
        warnRarely("closing connection with " + peerOf(largest) + ": " + (most >> 20) + " MiB of messages to it not read, "
                + (unsentBytes.get() >> 20) + " MiB over all connections");
        largest.close();
    }

    private Object peerOf(Channel ch) { return ch.remoteAddress(); }

    /**
     * Logs at most one warning a minute, saying how many were held back: a flood of bad connections must not
     * become a flood of log lines. Any thread.
     */
    private synchronized void warnRarely(String what) {
        long now = System.nanoTime();
        if (now - lastWarn < WARN_EVERY_NANOS) {
            warnsHeld++;
            return;
        }
        lastWarn = now;
        if (warnsHeld > 0) LOG.warn("[{}] {} (and {} more like it in the last minute, not logged)", host, what, warnsHeld);
        else LOG.warn("[{}] {}", host, what);
        warnsHeld = 0;
    }

    /**
     * Long frames, counted against the node's budget for partial frames, and cut off when they stall; until the
     * peer has proved it holds the cluster key, nothing longer than a handshake frame is read.
     */
    private final class BoundedFrameDecoder extends LengthFieldBasedFrameDecoder {
        private final Address peer;
        private final PeerAuth auth;
        private int held;

        BoundedFrameDecoder(Address peer, PeerAuth auth) {
            super(Codec.MAX_FRAME_BYTES + (auth == null ? 0 : PeerAuth.TAG_BYTES), 0, 4, 0, 4);
            this.peer = peer;
            this.auth = auth;
        }

        @Override protected Object decode(ChannelHandlerContext ctx, ByteBuf in) throws Exception {
            if (auth != null && !auth.open() && in.readableBytes() >= 4) {
                long length = in.getUnsignedInt(in.readerIndex());
                if (length > PeerAuth.MAX_HANDSHAKE_FRAME_BYTES) {
                    in.skipBytes(in.readableBytes());
                    auth.refuse("a frame of " + length + " bytes before it proved it holds the cluster key");
                    return null;
                }
            }
            return super.decode(ctx, in);
        }

        @Override public void channelRead(ChannelHandlerContext ctx, Object msg) throws Exception {
            super.channelRead(ctx, msg);
            recount();
            if (partialFrameBytes.get() > MAX_PARTIAL_FRAME_BYTES && ctx.channel().isOpen()) {
                warnRarely("closing connection with " + peer + ": " + (partialFrameBytes.get() >> 20) + " MiB held in partial frames over all connections");
                ctx.close();
            }
        }

        private void recount() {
            int now = internalBuffer().readableBytes();
            partialFrameBytes.addAndGet(now - held);
            held = now;
        }

        @Override public void userEventTriggered(ChannelHandlerContext ctx, Object evt) throws Exception {
            if (evt instanceof IdleStateEvent && internalBuffer().isReadable()) {
                warnRarely("closing connection with " + peer + ": part of a frame and nothing more for " + FRAME_STALL_SECONDS + " s");
                ctx.close();
                return;
            }
            super.userEventTriggered(ctx, evt);
        }

        @Override protected void handlerRemoved0(ChannelHandlerContext ctx) {
            partialFrameBytes.addAndGet(-held);
            held = 0;
        }
    }

    private void pipeline(SocketChannel ch, Address peer, PeerAuth.Role role) {
        openConnections.incrementAndGet();
        ch.closeFuture().addListener(f -> openConnections.decrementAndGet());
        PeerAuth auth = key == null ? null
                : new PeerAuth(key, role, handshakeNonces, (why, settled) -> {
                    refusedPeers.incrementAndGet();
                    if (settled && role == PeerAuth.Role.INITIATOR) refusedBy = peer + " " + why;
                    warnRarely("refusing " + peer + ": " + why);
                });
        ch.pipeline()
                .addLast(new IdleStateHandler(FRAME_STALL_SECONDS, 0, 0))
                .addLast(new BoundedFrameDecoder(peer, auth))
                .addLast(new LengthFieldPrepender(4));
        if (auth != null) ch.pipeline().addLast(auth);
        ch.pipeline()
                .addLast(new ChannelInboundHandlerAdapter() {
                    @Override public void channelRead(ChannelHandlerContext ctx, Object msg) {
                        ByteBuf buf = (ByteBuf) msg;
                        if (key == null && PeerAuth.isHello(buf)) {
                            buf.release();
                            refusedBy = peer + " requires the cluster key, and this node has none";
                            warnRarely("closing connection with " + peer + ": it requires the cluster key, and this node has none");
                            ctx.close();
                            return;
                        }
                        Message m;
                        try {
                            framesIn.increment();
                            bytesIn.add(buf.readableBytes());
                            // decoded where it lies (one copy of a payload, into the message): copying the frame out
                            // first cost a zeroed array and a copy of each MiB more
                            m = Codec.decode(buf.nioBufferCount() == 1 ? buf.nioBuffer() : java.nio.ByteBuffer.wrap(ByteBufUtil.getBytes(buf)));
                        } catch (CodecException e) {
                            warnRarely("closing connection with " + peer + ": malformed frame (" + e.getMessage() + ")");
                            ctx.close();
                            return;
                        } finally {
                            buf.release();
                        }
                        onLoop(() -> {
                            if (handler != null && !stopped) handler.onMessage(peer, m);
                        });
                    }

                    @Override public void channelInactive(ChannelHandlerContext ctx) {
                        Channel gone = ctx.channel();
                        onLoop(() -> {
                            if (channels.get(peer) == gone) channels.remove(peer);
                            if (handler != null && !stopped) handler.onDisconnect(peer);
                        });
                    }

                    @Override public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
                        if (cause instanceof TooLongFrameException) {
                            warnRarely("closing connection with " + peer + ": " + cause.getMessage());
                        } else if (cause instanceof java.io.IOException || cause instanceof io.netty.handler.codec.DecoderException) {
                            LOG.debug("[{}] connection with {} failed: {}", host, peer, cause.toString());
                        } else {
                            // thrown by the node while handling a message (a bug, or out of memory): said loudly, never
                            // passed off as a broken connection (an out-of-memory error once vanished here at DEBUG)
                            LOG.error("[{}] unexpected error while handling a message from {}; closing the connection", host, peer, cause);
                        }
                        ctx.close();
                    }
                });
    }

    /** Closes every connection and the listener; runs on the loop (waiting for it when called from outside). */
    @Override public void stop() {
        if (!loop.inEventLoop()) {
            if (!loop.isShuttingDown()) loop.submit(this::stop).awaitUninterruptibly(5_000);
            if (sockets != loop) sockets.shutdownGracefully(0, 2, java.util.concurrent.TimeUnit.SECONDS); // closes what is left on it
            return;
        }
        stopped = true;
        for (Channel ch : new ArrayList<>(channels.values())) ch.close();
        channels.clear();
        connecting.clear();
        if (server != null) server.close();
        if (sockets != loop) sockets.shutdownGracefully(0, 2, java.util.concurrent.TimeUnit.SECONDS);
    }
}
