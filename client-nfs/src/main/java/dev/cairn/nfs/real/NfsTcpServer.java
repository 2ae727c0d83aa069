package dev.cairn.nfs.real;

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
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import java.net.InetSocketAddress;
import java.util.List;
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

    private final NfsService service;
    private volatile Channel server;
    private final AtomicLong connectionIds = new AtomicLong();

    private NfsTcpServer(NfsService service) { this.service = service; }

    /** Binds {@code host:port} (port 0 picks one) on {@code loop}; throws with a clear message if it cannot. */
    public static NfsTcpServer bind(EventLoop loop, String host, int port, NfsService service) {
        NfsTcpServer self = new NfsTcpServer(service);
        ServerBootstrap b = new ServerBootstrap()
                .group(loop)
                .channel(NioServerSocketChannel.class)
                .childOption(ChannelOption.TCP_NODELAY, true)
                .childHandler(new ChannelInitializer<SocketChannel>() {
                    @Override protected void initChannel(SocketChannel ch) {
                        ch.pipeline().addLast(self.new Connection(ch));
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

    /** One client connection: its record assembly and its calls in flight. */
    private final class Connection extends ChannelInboundHandlerAdapter {
        private final RecordAssembler records = new RecordAssembler(MAX_RECORD);
        private final CompoundState.Connection id;
        private int inFlight;

        Connection(SocketChannel ch) {
            InetSocketAddress r = ch.remoteAddress();
            id = new CompoundState.Connection(connectionIds.incrementAndGet(), r == null ? "?" : r.getAddress().getHostAddress());
        }

        @Override public void channelRead(ChannelHandlerContext ctx, Object msg) {
            ByteBuf buf = (ByteBuf) msg;
            List<byte[]> complete;
            try {
                byte[] bytes = new byte[buf.readableBytes()];
                buf.readBytes(bytes);
                complete = records.feed(bytes, 0, bytes.length);
            } finally {
                buf.release();
            }
            if (records.poisoned() != null) {
                service.nfs4().log().warn("NFS connection from {} closed: {}", id.peerAddress(), records.poisoned());
                ctx.close();
                return;
            }
            for (byte[] record : complete) call(ctx, record);
        }

        private void call(ChannelHandlerContext ctx, byte[] record) {
            inFlight++;
            if (inFlight >= MAX_CALLS_PER_CONNECTION) ctx.channel().config().setAutoRead(false);
            service.handle(record, id).onComplete((reply, e) -> {
                if (--inFlight < MAX_CALLS_PER_CONNECTION) ctx.channel().config().setAutoRead(true);
                if (reply == null) return; // RFC 5531: a message that is not a call gets no answer
                ctx.writeAndFlush(Unpooled.wrappedBuffer(RecordAssembler.frame(reply)));
            });
        }

        @Override public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
            ctx.close(); // a reset or a broken pipe: this client reconnects; nobody else notices
        }
    }
}
