package dev.cairn.nfs.real;

import dev.cairn.core.async.Promise;
import dev.cairn.core.env.Log;
import dev.cairn.nfs.rpc.NfsService;
import dev.cairn.nfs.rpc.RecordAssembler;
import dev.cairn.nfs.v4.CompoundState;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoop;
import io.netty.channel.WriteBufferWaterMark;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import io.netty.handler.timeout.IdleState;
import io.netty.handler.timeout.IdleStateEvent;
import io.netty.handler.timeout.IdleStateHandler;
import java.net.InetSocketAddress;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The gateway's NFS port in the real runtime: TCP on netty, every connection on the gateway node's own
 * event loop (so the NFS state needs no locks, as in simulation). Record marking is undone here and each
 * record handed to {@link NfsService}; replies go back framed as one fragment. A stream that breaks the
 * record limit is closed (it cannot be resynchronised); every other client is unaffected.
 */
public final class NfsTcpServer implements AutoCloseable {
    /** The largest record accepted: a 1 MiB WRITE plus its COMPOUND around it. */
    public static final int MAX_RECORD = (1 << 20) + 64 * 1024;
    /** Calls of one connection running at once; past this the connection stops being read until they finish. */
    public static final int MAX_CALLS_PER_CONNECTION = 64;
    /**
     * Reply bytes queued for a connection past which it is not read any more (netty's high write-buffer water
     * mark), until the client has taken them down to the low mark: a client that sends calls and never reads the
     * replies holds at most this much (plus its calls in flight) of the gateway's memory.
     */
    public static final int REPLY_QUEUE_HIGH_BYTES = 4 << 20, REPLY_QUEUE_LOW_BYTES = 1 << 20;
    /** Connections open at once; one more is closed at once, with one log line a minute. */
    public static final int MAX_CONNECTIONS = 1024;
    /**
     * Memory the gateway lets calls hold, over all connections: each call counts {@link #CALL_RESERVE_BYTES} (or its
     * own size, if larger) while it runs, then its reply's size until the reply is on the wire. Past the limit a
     * connection that holds anything (a call running or a reply not taken) gets no further call until the total
     * drops below {@link #CALL_BYTES_RESUME} (these are the defaults: {@link Limits#forHeap}); one that holds nothing still gets one call at a time, so connections
     * whose replies are not read cannot stall the others (a client reading its connections in turn would otherwise
     * wait for ever). Without the limit, many connections each pipelining 64 READs of 1 MiB and never reading the
     * replies would hold gigabytes; with it they hold this plus about two calls' worth per connection.
     */
    public static final long MAX_CALL_BYTES = 128L << 20, CALL_BYTES_RESUME = 96L << 20;
    /** What a call is assumed to need until its reply exists: the largest READ reply (1 MiB) and its COMPOUND. */
    public static final int CALL_RESERVE_BYTES = (1 << 20) + 4096;
    /**
     * Bytes held in records not yet complete, over all connections. A connection whose record would take the total
     * past this is closed: an honest client sends a record's bytes back to back, so only stalled or hostile
     * streams hold many partial records at once.
     */
    public static final long MAX_ASSEMBLING_BYTES = 128L << 20;
    /** A connection that holds part of a record and sends nothing more for this long is closed. */
    public static final int RECORD_STALL_SECONDS = 30;
    /**
     * A connection with no call running that sends and receives nothing for this long is closed (RFC 7530 §3.1:
     * the server may close idle connections; clients reconnect and their state is kept by their leases).
     */
    public static final int IDLE_CLOSE_SECONDS = 15 * 60;
    private static final long REFUSAL_LOG_NANOS = 60_000_000_000L;

    /**
     * The limits on connections that tests shrink, and the bytes of calls in flight (reading stops past
     * {@code maxCallBytes}, and resumes below three quarters of it) that a gateway sizes to its heap
     * ({@link #forHeap}); {@link #DEFAULT_LIMITS} otherwise.
     */
    public record Limits(int maxConnections, int recordStallSeconds, int idleCloseSeconds, long maxCallBytes) {
        public Limits {
            if (maxConnections < 1 || recordStallSeconds < 1 || idleCloseSeconds < 1 || maxCallBytes < CALL_RESERVE_BYTES) {
                throw new IllegalArgumentException("limits must be positive, and calls in flight room for one");
            }
        }

        public Limits(int maxConnections, int recordStallSeconds, int idleCloseSeconds) {
            this(maxConnections, recordStallSeconds, idleCloseSeconds, MAX_CALL_BYTES);
        }

        long resumeCallBytes() { return maxCallBytes / 4 * 3; }

        /** The defaults with calls in flight scaled as {@link dev.cairn.nfs.fs.ClusterFs.Memory#forHeap} scales the write-behind. */
        public static Limits forHeap(long heapBytes) {
            long held = dev.cairn.nfs.fs.ClusterFs.Memory.forHeap(heapBytes).heldBytes();
            return new Limits(MAX_CONNECTIONS, RECORD_STALL_SECONDS, IDLE_CLOSE_SECONDS,
                    Math.max(CALL_RESERVE_BYTES, MAX_CALL_BYTES * held / dev.cairn.nfs.fs.ClusterFs.MAX_HELD_BYTES));
        }
    }

    public static final Limits DEFAULT_LIMITS = new Limits(MAX_CONNECTIONS, RECORD_STALL_SECONDS, IDLE_CLOSE_SECONDS);

    /** What answers the records: {@link NfsService#handle} in the gateway; a stand-in in tests of the transport. */
    public interface Calls {
        /** The reply to {@code record} (null for a message that gets no answer), completed on the connection's loop. */
        Promise<byte[]> handle(byte[] record, CompoundState.Connection from);
    }

    private final Calls service;
    private final Log log;
    private volatile Channel server;
    private final AtomicLong connectionIds = new AtomicLong();
    private final AtomicInteger open = new AtomicInteger();
    private volatile long lastRefusalLog = System.nanoTime() - REFUSAL_LOG_NANOS;
    // The fields below are touched on the event loop only (every connection and every reply runs on it).
    private long callBytes;
    private long assemblingBytes;
    private long lastAssemblyLog = System.nanoTime() - REFUSAL_LOG_NANOS;
    /** Connections not being read because {@link #callBytes} is over its limit; read again once it drops. */
    private final Set<Connection> waitingForRoom = new LinkedHashSet<>();

    /** Connections open now. */
    public int openConnections() { return open.get(); }

    /** Bytes of calls being served now (for tests of the memory bound). */
    public long callBytes() { return callBytes; }

    private final Limits limits;

    private NfsTcpServer(Calls service, Log log, Limits limits) {
        this.service = service;
        this.log = log;
        this.limits = limits;
    }

    /** Binds {@code host:port} (port 0 picks one) on {@code loop}; throws with a clear message if it cannot. */
    public static NfsTcpServer bind(EventLoop loop, String host, int port, NfsService service) {
        return bind(loop, host, port, service, DEFAULT_LIMITS);
    }

    /** As above, within {@code limits}. */
    public static NfsTcpServer bind(EventLoop loop, String host, int port, NfsService service, Limits limits) {
        return bind(loop, host, port, service::handle, service.nfs4().log(), limits);
    }

    /** As above, with the calls answered by {@code calls} on {@code loop}, within {@code limits}. */
    public static NfsTcpServer bind(EventLoop loop, String host, int port, Calls calls, Log log, Limits limits) {
        NfsTcpServer self = new NfsTcpServer(calls, log, limits);
        ServerBootstrap b = new ServerBootstrap()
                .group(loop)
                .channel(NioServerSocketChannel.class)
                .childOption(ChannelOption.TCP_NODELAY, true)
                .childOption(ChannelOption.WRITE_BUFFER_WATER_MARK, new WriteBufferWaterMark(REPLY_QUEUE_LOW_BYTES, REPLY_QUEUE_HIGH_BYTES))
                .childHandler(new ChannelInitializer<SocketChannel>() {
                    @Override protected void initChannel(SocketChannel ch) {
                        if (self.open.incrementAndGet() > limits.maxConnections()) {
                            self.open.decrementAndGet();
                            long now = System.nanoTime();
                            if (now - self.lastRefusalLog > REFUSAL_LOG_NANOS) {
                                self.lastRefusalLog = now;
                                self.log.warn("NFS connection from {} refused: {} open already (more refused within a minute are not logged)",
                                        ch.remoteAddress(), limits.maxConnections());
                            }
                            ch.close();
                            return;
                        }
                        Connection c = self.new Connection(ch);
                        ch.closeFuture().addListener(f -> {
                            self.open.decrementAndGet();
                            c.closed();
                        });
                        ch.pipeline().addLast(new IdleStateHandler(limits.recordStallSeconds(), 0, limits.idleCloseSeconds()), c);
                    }
                });
        var f = b.bind(host, port).awaitUninterruptibly();
        if (!f.isSuccess()) {
            throw new IllegalStateException("cannot serve NFS on " + host + ":" + port + ": " + f.cause().getMessage(), f.cause());
        }
        self.server = f.channel();
        return self;
    }

    public int port() { return ((InetSocketAddress) server.localAddress()).getPort(); }

    @Override public void close() { server.close().awaitUninterruptibly(); }

    private boolean overCallBytes() { return callBytes > limits.maxCallBytes(); }

    /** Logs at most once a minute: a flood of bad connections must not become a flood of log lines. */
    private void warnRarely(String format, Object... args) {
        long now = System.nanoTime();
        if (now - lastAssemblyLog < REFUSAL_LOG_NANOS) return;
        lastAssemblyLog = now;
        log.warn(format + " (more like it within a minute are not logged)", args);
    }

    /** One client connection: its record assembly, records waiting for room, and its calls in flight. */
    private final class Connection extends ChannelInboundHandlerAdapter {
        private final RecordAssembler records = new RecordAssembler(MAX_RECORD);
        private final CompoundState.Connection id;
        /** Whole records not yet handed out: one socket read can carry thousands of small calls. */
        private final ArrayDeque<byte[]> waiting = new ArrayDeque<>();
        private int waitingBytes;
        private int inFlight;
        private int held; // bytes this connection counts in assemblingBytes
        private long own; // bytes this connection counts in callBytes: its running calls and replies not yet sent
        private boolean dispatching;
        private ChannelHandlerContext ctx;

        Connection(SocketChannel ch) {
            InetSocketAddress r = ch.remoteAddress();
            id = new CompoundState.Connection(connectionIds.incrementAndGet(), r == null ? "?" : r.getAddress().getHostAddress());
        }

        @Override public void handlerAdded(ChannelHandlerContext ctx) { this.ctx = ctx; }

        @Override public void channelRead(ChannelHandlerContext ctx, Object msg) {
            ByteBuf buf = (ByteBuf) msg;
            List<byte[]> complete;
            try {
                complete = new ArrayList<>(1);
                // read in place: copying each socket read out first cost a copy and a zeroed array per read
                for (java.nio.ByteBuffer b : buf.nioBuffers()) complete.addAll(records.feed(b));
            } finally {
                buf.release();
            }
            if (records.poisoned() != null) {
                warnRarely("NFS connection from {} closed: {}", id.peerAddress(), records.poisoned());
                ctx.close();
                return;
            }
            for (byte[] record : complete) {
                waiting.add(record);
                waitingBytes += record.length;
            }
            recount();
            if (assemblingBytes > MAX_ASSEMBLING_BYTES) {
                warnRarely("NFS connection from {} closed: {} MiB held in records not yet served, over all connections",
                        id.peerAddress(), assemblingBytes >> 20);
                ctx.close();
                return;
            }
            dispatch();
        }

        private void recount() {
            int now = records.buffered() + waitingBytes;
            assemblingBytes += now - held;
            held = now;
        }

        private boolean room() {
            return (own == 0 || !overCallBytes()) && inFlight < MAX_CALLS_PER_CONNECTION && ctx.channel().isWritable();
        }

        /**
         * Hands waiting records to the service while there is room (few enough of this connection's calls running,
         * its replies being taken, the gateway not holding too many call bytes in all), and reads the socket only
         * when nothing waits and there is room still: a client that does not read its replies stops being read.
         */
        private void dispatch() {
            if (dispatching) return; // a call answered at once re-enters here; the loop below carries on
            dispatching = true;
            try {
                while (!waiting.isEmpty() && room() && ctx.channel().isOpen()) {
                    byte[] record = waiting.poll();
                    waitingBytes -= record.length;
                    recount();
                    call(record);
                }
            } finally {
                dispatching = false;
            }
            if (overCallBytes()) waitingForRoom.add(this);
            ctx.channel().config().setAutoRead(waiting.isEmpty() && room());
        }

        private void call(byte[] record) {
            inFlight++;
            long reserve = Math.max(record.length, CALL_RESERVE_BYTES);
            callBytes += reserve;
            own += reserve;
            service.handle(record, id).onComplete((reply, e) -> {
                inFlight--;
                callBytes -= reserve;
                own -= reserve;
                if (e != null) log.warn("NFS call from {} failed, no reply sent: {}", id.peerAddress(), e.toString());
                if (reply != null) { // RFC 5531: a message that is not a call gets no answer
                    long size = reply.length + 4L;
                    callBytes += size;
                    own += size;
                    // one fragment, marked last; the reply is not copied to put its header in front
                    byte[] header = {(byte) (0x80 | (reply.length >>> 24)), (byte) (reply.length >>> 16), (byte) (reply.length >>> 8), (byte) reply.length};
                    ctx.writeAndFlush(Unpooled.wrappedBuffer(header, reply)).addListener(f -> {
                        callBytes -= size;
                        own -= size;
                        dispatch();
                        resumeWaiting();
                    });
                }
                dispatch();
                resumeWaiting();
            });
        }

        private void resumeWaiting() {
            if (overCallBytes() || callBytes > limits.resumeCallBytes() || waitingForRoom.isEmpty()) return;
            List<Connection> resume = List.copyOf(waitingForRoom);
            waitingForRoom.clear();
            for (Connection c : resume) if (c.ctx.channel().isOpen()) c.dispatch();
        }

        void closed() {
            waiting.clear();
            waitingBytes = 0;
            assemblingBytes -= held;
            held = 0;
            waitingForRoom.remove(this);
        }

        @Override public void channelWritabilityChanged(ChannelHandlerContext ctx) {
            dispatch();
            ctx.fireChannelWritabilityChanged();
        }

        @Override public void userEventTriggered(ChannelHandlerContext ctx, Object evt) {
            if (!(evt instanceof IdleStateEvent idle)) {
                ctx.fireUserEventTriggered(evt);
                return;
            }
            // reader idle: a record left half sent is a stall; all idle: nothing running and nothing said for long
            boolean stalled = idle.state() == IdleState.READER_IDLE && records.partial() && ctx.channel().config().isAutoRead();
            boolean quiet = idle.state() == IdleState.ALL_IDLE && inFlight == 0;
            if (stalled || quiet) {
                warnRarely("NFS connection from {} closed: {}", id.peerAddress(),
                        stalled ? "part of a record and nothing more for " + limits.recordStallSeconds() + " s" : "idle for " + limits.idleCloseSeconds() + " s");
                ctx.close();
            }
        }

        @Override public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
            ctx.close(); // a reset or a broken pipe: this client reconnects; nobody else notices
        }
    }
}
