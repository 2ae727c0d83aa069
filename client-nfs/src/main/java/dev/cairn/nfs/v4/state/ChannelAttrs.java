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

    /** What the server grants: each asked-for value clamped into [floor, our limit] (unsigned on the wire). */
    public ChannelAttrs clampTo(ChannelAttrs limit, ChannelAttrs floor) {
        return new ChannelAttrs(0,
                clamp(maxRequestSize, floor.maxRequestSize, limit.maxRequestSize),
                clamp(maxResponseSize, floor.maxResponseSize, limit.maxResponseSize),
                clamp(maxResponseSizeCached, floor.maxResponseSizeCached, limit.maxResponseSizeCached),
                clamp(maxOperations, floor.maxOperations, limit.maxOperations),
                clamp(maxRequests, floor.maxRequests, limit.maxRequests));
    }

    private static int clamp(int asked, int floor, int limit) {
        long a = Integer.toUnsignedLong(asked);
        return (int) Math.max(floor, Math.min(limit, a));
    }
}
