package dev.cairn.nfs.rpc;

import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.zip.CRC32C;

/**
 * The NFSv4.0 duplicate request cache (RFC 7530 §3.1.1, §9.1.7): a 4.0 client that lost a reply resends the
 * call with the same xid, and a non-idempotent operation (CREATE, REMOVE, RENAME, LINK, SETATTR) must not run
 * twice: a retransmitted mkdir would answer EXIST, a retransmitted remove NOENT. 4.1 has sessions for this.
 * A call is known by its sender's address, its xid and a checksum of the whole record (a different call that
 * reuses an xid is not a retransmission). While the first copy runs a retransmission is dropped unanswered (the
 * client sends it again); once it is done, a retransmission gets the same reply without running. Bounded in
 * entries and bytes, least recently used first out; a reply larger than {@link #MAX_ENTRY_BYTES} (a READ's
 * data: idempotent anyway) is not kept.
 */
public final class DuplicateRequestCache {
    public static final int MAX_ENTRIES = 4096;
    public static final long MAX_BYTES = 8L << 20;
    public static final int MAX_ENTRY_BYTES = 8192;

    /** What a call is to do: run (then {@link #done}), be answered with {@code reply}, or be dropped (its first copy runs). */
    public sealed interface Verdict {}

    public record Run(Key key) implements Verdict {}

    public record Answer(byte[] reply) implements Verdict {}

    public record Drop() implements Verdict {}

    public record Key(String peer, int xid, long checksum) {}

    private final Map<Key, byte[]> replies = new LinkedHashMap<>(64, 0.75f, true);
    private final Map<Key, Boolean> running = new HashMap<>();
    private long bytes;

    public Verdict check(String peer, int xid, byte[] record) {
        CRC32C crc = new CRC32C();
        crc.update(record);
        Key key = new Key(peer, xid, crc.getValue());
        byte[] reply = replies.get(key);
        if (reply != null) return new Answer(reply);
        if (running.containsKey(key) || running.size() >= MAX_ENTRIES) return new Drop();
        running.put(key, Boolean.TRUE);
        return new Run(key);
    }

    /** The call is answered with {@code reply} (null: it was dropped, nothing to keep). */
    public void done(Key key, byte[] reply) {
        running.remove(key);
        if (reply == null || reply.length > MAX_ENTRY_BYTES) return;
        byte[] old = replies.put(key, reply);
        bytes += reply.length - (old == null ? 0 : old.length);
        for (var it = replies.entrySet().iterator(); it.hasNext() && (replies.size() > MAX_ENTRIES || bytes > MAX_BYTES); ) {
            bytes -= it.next().getValue().length;
            it.remove();
        }
        assert bytes >= 0 && replies.size() <= MAX_ENTRIES : "cache accounting";
    }

    public int size() { return replies.size(); }

    public long bytes() { return bytes; }
}
