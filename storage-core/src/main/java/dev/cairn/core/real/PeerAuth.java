package dev.cairn.core.real;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelDuplexHandler;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelPromise;
import io.netty.util.ReferenceCountUtil;
import io.netty.util.concurrent.ScheduledFuture;
import java.nio.ByteBuffer;
import java.security.MessageDigest;
import java.security.SecureRandom;
import java.util.ArrayDeque;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import javax.crypto.Mac;

/**
 * Proves both ends of a node connection hold the cluster's key before a message crosses it, then signs every frame.
 * Sits between the length-field framing and the message handler; frames in, frames out.
 *
 * <p>The handshake, each side at once: send {@code HELLO} (magic and a fresh 32-byte nonce); on the peer's hello,
 * send {@code PROOF} = HMAC(key, "proof/" + own role, initiator's nonce, acceptor's nonce); on the peer's proof, check
 * it against the peer's role. Roles differ, so a proof cannot be reflected back at its maker, and a hello carrying a
 * nonce this node itself issued on another open connection is refused (the relay of a node's own handshake to
 * itself). A peer that sends anything else, a frame longer than a handshake's before it is done, or no proof within
 * {@link #HANDSHAKE_SECONDS}, is refused.
 *
 * <p>After it, every frame carries a 16-byte tag: HMAC(session key of its direction, frame number, payload), the
 * session keys derived from the cluster key and both nonces. A frame whose tag does not verify — altered, replayed,
 * reordered, or injected into the stream — closes the connection. Frames are not encrypted: the key proves
 * membership and integrity, not secrecy (file data crosses the cluster's network in the clear, as it does over NFS).
 */
final class PeerAuth extends ChannelDuplexHandler {
    static final int NONCE_BYTES = 32;
    static final int TAG_BYTES = 16;
    /** Upper bound of a frame before the handshake is done: a hello or a proof. */
    static final int MAX_HANDSHAKE_FRAME_BYTES = 64;
    /** A peer that has not proved itself within this is refused. */
    static final int HANDSHAKE_SECONDS = 10;
    /** Frames this node sends before the handshake is done are held, up to this many. */
    static final int MAX_HELD_FRAMES = 4096;
    private static final byte[] MAGIC = {'C', 'K', 'A', '1'};
    private static final SecureRandom NONCES = new SecureRandom();

    enum Role { INITIATOR, ACCEPTOR }

    private enum Stage { HELLO, PROOF, OPEN, REFUSED }

    private final ClusterKey key;
    private final Role role;
    /** Nonces of this node's handshakes on open connections (shared by its connections, on several I/O threads: a concurrent set). */
    private final Set<ByteBuffer> ownNonces;
    private final Refusals refused;
    private final byte[] nonce = new byte[NONCE_BYTES];
    private final ArrayDeque<Held> held = new ArrayDeque<>();
    private byte[] peerNonce;
    private Stage stage = Stage.HELLO;
    private Mac out;
    private Mac in;
    private long sent;
    private long received;
    private ScheduledFuture<?> deadline;
    private ChannelHandlerContext ctx;

    private record Held(ByteBuf frame, ChannelPromise promise) {}

    /** Told why a peer was refused (the caller rate-limits its log lines). */
    interface Refusals {
        /**
         * @param settled the peer proved it is not a member (another key, none, not a Cairn node); false when the
         *     connection merely ended mid-handshake, which a restarting peer also does
         */
        void refused(String why, boolean settled);
    }

    PeerAuth(ClusterKey key, Role role, Set<ByteBuffer> ownNonces, Refusals refused) {
        this.key = key;
        this.role = role;
        this.ownNonces = ownNonces;
        this.refused = refused;
    }

    /** Whether the peer has proved itself (until then the framing allows only handshake-sized frames). */
    boolean open() { return stage == Stage.OPEN; }

    @Override public void handlerAdded(ChannelHandlerContext ctx) { this.ctx = ctx; }

    @Override public void channelActive(ChannelHandlerContext ctx) throws Exception {
        NONCES.nextBytes(nonce);
        ownNonces.add(ByteBuffer.wrap(nonce));
        ctx.writeAndFlush(Unpooled.buffer(MAGIC.length + NONCE_BYTES).writeBytes(MAGIC).writeBytes(nonce));
        deadline = ctx.executor().schedule(() -> {
            if (stage != Stage.OPEN) refuse("no proof of the cluster key within " + HANDSHAKE_SECONDS + " s", false);
        }, HANDSHAKE_SECONDS, TimeUnit.SECONDS);
        super.channelActive(ctx);
    }

    @Override public void channelRead(ChannelHandlerContext ctx, Object msg) throws Exception {
        ByteBuf frame = (ByteBuf) msg;
        switch (stage) {
            case OPEN -> {
                if (verify(frame)) {
                    ctx.fireChannelRead(frame);
                } else {
                    frame.release();
                    refuse("a frame whose tag does not verify (altered, replayed or injected)");
                }
            }
            case HELLO -> {
                try {
                    hello(ctx, frame);
                } finally {
                    frame.release();
                }
            }
            case PROOF -> {
                try {
                    proof(ctx, frame);
                } finally {
                    frame.release();
                }
            }
            case REFUSED -> frame.release();
        }
    }

    private void hello(ChannelHandlerContext ctx, ByteBuf frame) {
        if (!isHello(frame)) {
            refuse("no cluster handshake (an open node, another protocol, or not a Cairn node)");
            return;
        }
        peerNonce = new byte[NONCE_BYTES];
        frame.getBytes(frame.readerIndex() + MAGIC.length, peerNonce);
        if (ownNonces.contains(ByteBuffer.wrap(peerNonce))) {
            refuse("a handshake nonce this node issued itself (a relayed handshake)");
            return;
        }
        stage = Stage.PROOF;
        ctx.writeAndFlush(Unpooled.wrappedBuffer(proofOf(role)));
    }

    private void proof(ChannelHandlerContext ctx, ByteBuf frame) {
        byte[] got = new byte[frame.readableBytes()];
        frame.readBytes(got);
        Role peer = role == Role.INITIATOR ? Role.ACCEPTOR : Role.INITIATOR;
        if (!MessageDigest.isEqual(got, proofOf(peer))) {
            refuse("it does not hold this cluster's key");
            return;
        }
        out = key.derive("frames/" + role, initiatorNonce(), acceptorNonce());
        in = key.derive("frames/" + peer, initiatorNonce(), acceptorNonce());
        stage = Stage.OPEN;
        deadline.cancel(false);
        while (!held.isEmpty()) {
            Held h = held.poll();
            ctx.write(sign(h.frame()), h.promise());
        }
        ctx.flush();
    }

    @Override public void write(ChannelHandlerContext ctx, Object msg, ChannelPromise promise) {
        ByteBuf frame = (ByteBuf) msg;
        if (stage == Stage.OPEN) {
            ctx.write(sign(frame), promise);
        } else if (stage == Stage.REFUSED || held.size() >= MAX_HELD_FRAMES) {
            frame.release();
            promise.setFailure(new IllegalStateException(stage == Stage.REFUSED ? "connection refused by the cluster handshake"
                    : MAX_HELD_FRAMES + " frames held waiting for the cluster handshake"));
        } else {
            held.add(new Held(frame, promise));
        }
    }

    private byte[] proofOf(Role r) { return key.hmac("proof/" + r, initiatorNonce(), acceptorNonce()); }

    private byte[] initiatorNonce() { return role == Role.INITIATOR ? nonce : peerNonce; }

    private byte[] acceptorNonce() { return role == Role.ACCEPTOR ? nonce : peerNonce; }

    private ByteBuf sign(ByteBuf frame) {
        byte[] tag = tag(out, sent++, frame, frame.readerIndex(), frame.readableBytes());
        return Unpooled.wrappedBuffer(frame, Unpooled.wrappedBuffer(tag));
    }

    /** Checks and strips the tag; the frame's bytes are the payload after. */
    private boolean verify(ByteBuf frame) {
        int n = frame.readableBytes() - TAG_BYTES;
        if (n < 0) return false;
        byte[] want = tag(in, received++, frame, frame.readerIndex(), n);
        byte[] got = new byte[TAG_BYTES];
        frame.getBytes(frame.readerIndex() + n, got);
        if (!MessageDigest.isEqual(want, got)) return false;
        frame.writerIndex(frame.readerIndex() + n);
        return true;
    }

    private static byte[] tag(Mac mac, long number, ByteBuf frame, int from, int length) {
        mac.update(ByteBuffer.allocate(Long.BYTES).putLong(0, number));
        for (ByteBuffer b : frame.nioBuffers(from, length)) mac.update(b);
        byte[] full = mac.doFinal();
        byte[] t = new byte[TAG_BYTES];
        System.arraycopy(full, 0, t, 0, TAG_BYTES);
        return t;
    }

    /** Whether {@code frame} is a handshake's hello (an open node meeting a keyed one says so rather than "malformed"). */
    static boolean isHello(ByteBuf frame) { return frame.readableBytes() == MAGIC.length + NONCE_BYTES && startsWithMagic(frame); }

    private static boolean startsWithMagic(ByteBuf frame) {
        for (int i = 0; i < MAGIC.length; i++) if (frame.getByte(frame.readerIndex() + i) != MAGIC[i]) return false;
        return true;
    }

    /** Refuses the peer: says why (once), fails what was held for it, closes the connection. */
    void refuse(String why) { refuse(why, true); }

    private void refuse(String why, boolean settled) {
        if (stage == Stage.REFUSED) return;
        stage = Stage.REFUSED;
        refused.refused(why, settled);
        releaseHeld(new IllegalStateException("connection refused by the cluster handshake: " + why));
        ctx.close();
    }

    private void releaseHeld(Throwable cause) {
        while (!held.isEmpty()) {
            Held h = held.poll();
            ReferenceCountUtil.release(h.frame());
            h.promise().tryFailure(cause);
        }
    }

    @Override public void channelInactive(ChannelHandlerContext ctx) throws Exception {
        forget();
        if (stage != Stage.OPEN && stage != Stage.REFUSED) {
            stage = Stage.REFUSED;
            refused.refused("the connection ended during the cluster handshake (does the peer hold the same key?)", false);
        }
        super.channelInactive(ctx);
    }

    @Override public void handlerRemoved(ChannelHandlerContext ctx) { forget(); }

    private void forget() {
        ownNonces.remove(ByteBuffer.wrap(nonce));
        if (deadline != null) deadline.cancel(false);
        releaseHeld(new IllegalStateException("connection closed during the cluster handshake"));
    }
}
