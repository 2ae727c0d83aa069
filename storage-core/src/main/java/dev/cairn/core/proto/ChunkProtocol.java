package dev.cairn.core.proto;

import dev.cairn.core.proto.Types.ServerRef;
import java.util.List;

/** Data path: client to chunkserver and chunkserver to chunkserver along a replica chain. */
public sealed interface ChunkProtocol extends Message {

    /**
     * Writes bytes into a chunk copy and forwards them to the rest of the chain. Answered with ChainReply once
     * this copy and every copy after it have the bytes (not yet durable). A failure names the failed server.
     * Bytes past the copy's end extend it, with zeros in any gap; an empty write past the end only extends it.
     */
    record WriteData(long rid, long chunkId, long version, long offset, byte[] data, List<ServerRef> forward)
            implements ChunkProtocol {}

    /** Makes the chunk durable (data, checksums, header, directory entry) on this copy and the rest of the chain. */
    record SyncChunk(long rid, long chunkId, long version, long written, long pieces, List<ServerRef> forward) implements ChunkProtocol {
        /** A sync checking the length written only. */
        public SyncChunk(long rid, long chunkId, long version, long written, List<ServerRef> forward) { this(rid, chunkId, version, written, 0, forward); }
    }

    /** Answer to WriteData and SyncChunk; on failure {@code failedServer} names the copy that failed (empty if unknown). */
    record ChainReply(long rid, Status status, String failedServer, String detail) implements ChunkProtocol {
        @Override public boolean isReply() { return true; }
    }

    /**
     * Reads {@code length} bytes at {@code offset} of a copy at {@code version}. {@code part}: the erasure-coded part
     * the reader takes the copy for, refused ({@code STALE}) if the copy here is another part of the chunk (a
     * location learnt before the planner moved parts around: decoded as the part it is not, its cells would turn into
     * garbage that no checksum catches); {@link #ANY_PART} for a replica.
     */
    record ReadData(long rid, long chunkId, long version, long offset, int length, int part) implements ChunkProtocol {
        public static final int ANY_PART = -1;

        public ReadData(long rid, long chunkId, long version, long offset, int length) { this(rid, chunkId, version, offset, length, ANY_PART); }
    }

    record DataReply(long rid, Status status, String detail, byte[] data) implements ChunkProtocol {
        @Override public boolean isReply() { return true; }
    }
}
