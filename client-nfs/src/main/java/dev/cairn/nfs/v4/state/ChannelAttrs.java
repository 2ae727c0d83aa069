package dev.cairn.nfs.v4.state;

import dev.cairn.nfs.xdr.XdrDecoder;
import dev.cairn.nfs.xdr.XdrEncoder;

/** channel_attrs4 (RFC 8881 §18.36): what a session's channel may carry. */
public record ChannelAttrs(int headerPadSize, int maxRequestSize, int maxResponseSize, int maxResponseSizeCached,
                           int maxOperations, int maxRequests) {
    /** RDMA is not offered: ca_rdma_ird has at most one element and we answer with none. */
    static final int MAX_RDMA_IRD = 1;

    public static ChannelAttrs decode(XdrDecoder d) {
        ChannelAttrs a = new ChannelAttrs(d.readInt(), d.readInt(), d.readInt(), d.readInt(), d.readInt(), d.readInt());
        int ird = d.readLength(MAX_RDMA_IRD, "ca_rdma_ird");
        for (int i = 0; i < ird; i++) d.readInt();
        return a;
    }

    public void encode(XdrEncoder e) {
        e.writeInt(headerPadSize).writeInt(maxRequestSize).writeInt(maxResponseSize).writeInt(maxResponseSizeCached)
                .writeInt(maxOperations).writeInt(maxRequests).writeInt(0);
    }

    /**
     * The smallest request a channel must carry: an RPC call with AUTH_NONE (40 bytes), a COMPOUND header
     * with an empty tag (12) and a SEQUENCE (36). Below it the client could never send anything (TOOSMALL).
     */
    public static final int MIN_REQUEST = 40 + 12 + 4 + 32;
    /** The smallest reply: an accepted RPC reply (24), a COMPOUND header (12), SEQUENCE's result (44). */
    public static final int MIN_RESPONSE = 24 + 12 + 8 + 36;

    /**
     * What the server grants for these asked-for values (RFC 8881 §18.36.3): each lowered to our {@code limit}
     * and never raised, since the client sized its buffers by what it asked. Null (TOOSMALL) if the channel
     * could never carry a request and its reply, or has no slot or no room for SEQUENCE and one operation.
     */
    public ChannelAttrs negotiate(ChannelAttrs limit) {
        if (Integer.compareUnsigned(maxRequestSize, MIN_REQUEST) < 0 || Integer.compareUnsigned(maxResponseSize, MIN_RESPONSE) < 0
                || maxRequests == 0 || Integer.compareUnsigned(maxOperations, 2) < 0) {
            return null;
        }
        return new ChannelAttrs(0, min(maxRequestSize, limit.maxRequestSize), min(maxResponseSize, limit.maxResponseSize),
                min(maxResponseSizeCached, limit.maxResponseSizeCached), min(maxOperations, limit.maxOperations),
                min(maxRequests, limit.maxRequests));
    }

    private static int min(int asked, int limit) {
        return (int) Math.min(Integer.toUnsignedLong(asked), limit);
    }
}
