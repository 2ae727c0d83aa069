package dev.cairn.chunkserver;

import dev.cairn.core.async.Promise;
import dev.cairn.core.ec.CodecCache;
import dev.cairn.core.ec.Stripes;
import dev.cairn.core.proto.CairnException;
import dev.cairn.core.proto.ChunkProtocol.ChainReply;
import dev.cairn.core.proto.ChunkProtocol.SyncChunk;
import dev.cairn.core.proto.ChunkProtocol.WriteData;
import dev.cairn.core.proto.MasterProtocol.ConvertChunk;
import dev.cairn.core.proto.Status;
import dev.cairn.core.proto.Types.ServerRef;
import dev.cairn.core.rpc.Rpc;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * Rewrites a chunk held here in another class, for the master's archive rule (hot replicas to cold EC):
 * reads this server's verified copy, encodes it for the new class, writes it to the new chunk's servers
 * like a client would (a replica chain, or part i to server i) and syncs them. One rewrite at a time per
 * server: it holds a whole chunk in memory.
 */
final class Converter {
    /** Bytes per write message. */
    static final int PIECE = 1 << 20;
    /** Time one write or sync of the new copies gets (they may wait behind client I/O). */
    static final long CALL_NANOS = 30_000_000_000L;
    /** Rewrites under way at once on this server. */
    static final int MAX_AT_ONCE = 1;

    private final ChunkStore store;
    private final Rpc rpc;
    private final CodecCache codecs;
    private int running;

    Converter(ChunkStore store, Rpc rpc, CodecCache codecs) {
        this.store = store;
        this.rpc = rpc;
        this.codecs = codecs;
    }

    Promise<Void> convert(ConvertChunk r) {
        if (r.targets().isEmpty() || r.length() < 0 || r.length() > dev.cairn.core.chunk.ChunkFormat.MAX_CHUNK_SIZE
                || (r.k() > 0 && r.targets().size() != r.k() + r.m())) {
            return Promise.failed(new CairnException(Status.BAD_REQUEST, "convert chunk " + r.chunkId() + ": targets or length do not fit"));
        }
        if (running >= MAX_AT_ONCE) return Promise.failed(new CairnException(Status.BUSY, "a rewrite is already under way here"));
        running++;
        byte[] chunk = new byte[(int) r.length()];
        Promise<Void> done = readAll(r, chunk, 0).flatMap(v -> {
            if (r.k() == 0) return send(r.targets(), r, chunk).flatMap(x -> sync(r.targets(), r, chunk.length));
            byte[][] parts = Stripes.encode(codecs.get(r.k(), r.m()), chunk);
            List<Promise<Void>> each = new ArrayList<>();
            for (int p = 0; p < parts.length; p++) {
                List<ServerRef> one = List.of(r.targets().get(p));
                long written = parts[p].length;
                each.add(send(one, r, parts[p]).flatMap(x -> sync(one, r, written)));
            }
            return Promise.all(each).map(x -> null);
        });
        done.onComplete((v, e) -> running--);
        return done;
    }

    private Promise<Void> readAll(ConvertChunk r, byte[] into, int offset) {
        if (offset >= into.length) return Promise.completed(null);
        int n = Math.min(PIECE, into.length - offset);
        return store.read(r.chunkId(), r.version(), offset, n).flatMap(b -> {
            if (b.length != n) throw new CairnException(Status.IO, "chunk " + r.chunkId() + " is shorter here than its committed length");
            System.arraycopy(b, 0, into, offset, n);
            return readAll(r, into, offset + n);
        });
    }

    /** Writes {@code bytes} down {@code chain} piece by piece (its head forwards to the rest). */
    private Promise<Void> send(List<ServerRef> chain, ConvertChunk r, byte[] bytes) {
        return sendFrom(chain, r, bytes, 0);
    }

    private Promise<Void> sendFrom(List<ServerRef> chain, ConvertChunk r, byte[] bytes, int offset) {
        if (offset >= bytes.length) return Promise.completed(null);
        int n = Math.min(PIECE, bytes.length - offset);
        byte[] piece = Arrays.copyOfRange(bytes, offset, offset + n);
        List<ServerRef> rest = chain.subList(1, chain.size());
        return rpc.call(chain.get(0).address(), rid -> new WriteData(rid, r.newChunkId(), r.newVersion(), offset, piece, rest), ChainReply.class, CALL_NANOS)
                .flatMap(reply -> {
                    check(reply, "write");
                    return sendFrom(chain, r, bytes, offset + n);
                });
    }

    private Promise<Void> sync(List<ServerRef> chain, ConvertChunk r, long written) {
        List<ServerRef> rest = chain.subList(1, chain.size());
        return rpc.call(chain.get(0).address(), rid -> new SyncChunk(rid, r.newChunkId(), r.newVersion(), written, rest), ChainReply.class, CALL_NANOS)
                .map(reply -> {
                    check(reply, "sync");
                    return null;
                });
    }

    private static void check(ChainReply reply, String what) {
        if (reply.status() != Status.OK) {
            throw new CairnException(reply.status(), what + " of the rewritten chunk failed on " + reply.failedServer() + ": " + reply.detail());
        }
    }
}
