package dev.cairn.master.meta;

import dev.cairn.core.proto.CodecException;
import java.nio.BufferUnderflowException;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * A master group's log entry: the proposer's nonce, then one command ({@link MetaCodec}) or a batch of them. A
 * leader under load puts the commands that arrived while earlier entries were on their way into one entry, so the
 * group's per-entry work (replication, the log's writes, its bookkeeping on every master) is shared by many commands.
 * The i-th command of an entry has nonce {@code nonce + i}. A batch is marked by a first byte no single command's
 * encoding starts with, which a Cairn that predates batches refuses by name ("written by a newer Cairn?").
 */
public record LogEntry(long nonce, List<MetaCommand<?>> commands) {
    /** First byte of a batch's body (a command's encoding starts with its tag below 0x80, or {@link StoreFormat#MARK_2}). */
    static final byte BATCH = (byte) 0xC0;
    /** Commands in one entry at most (a decoder refuses more: a corrupt count must not size an allocation). */
    public static final int MAX_COMMANDS = 1024;

    public LogEntry {
        assert !commands.isEmpty() && commands.size() <= MAX_COMMANDS : commands.size() + " commands";
    }

    /** One command alone: the same bytes an entry had before batches. */
    public static byte[] encode(long nonce, byte[] command) {
        return ByteBuffer.allocate(8 + command.length).putLong(nonce).put(command).array();
    }

    /** Commands ({@link MetaCodec#encode}d) in one entry; a single one is encoded alone. */
    public static byte[] encode(long nonce, List<byte[]> commands) {
        if (commands.size() == 1) return encode(nonce, commands.get(0));
        if (commands.isEmpty() || commands.size() > MAX_COMMANDS) throw new IllegalArgumentException(commands.size() + " commands in one entry");
        int size = 8 + 1 + 4;
        for (byte[] c : commands) size += 4 + c.length;
        ByteBuffer b = ByteBuffer.allocate(size).putLong(nonce).put(BATCH).putInt(commands.size());
        for (byte[] c : commands) b.putInt(c.length).put(c);
        return b.array();
    }

    public static LogEntry decode(byte[] entry) throws CodecException {
        if (entry.length < 9) throw new CodecException("log entry of " + entry.length + " bytes");
        ByteBuffer b = ByteBuffer.wrap(entry);
        long nonce = b.getLong();
        if (entry[8] != BATCH) return new LogEntry(nonce, List.of(MetaCodec.decode(Arrays.copyOfRange(entry, 8, entry.length))));
        try {
            b.get();
            int n = b.getInt();
            if (n < 2 || n > MAX_COMMANDS) throw new CodecException("log entry batching " + n + " commands");
            List<MetaCommand<?>> out = new ArrayList<>(n);
            for (int i = 0; i < n; i++) {
                int len = b.getInt();
                if (len <= 0 || len > b.remaining()) throw new CodecException("command " + i + " of a batch entry: " + len + " bytes of " + b.remaining() + " left");
                byte[] c = new byte[len];
                b.get(c);
                out.add(MetaCodec.decode(c));
            }
            if (b.hasRemaining()) throw new CodecException("batch entry: " + b.remaining() + " bytes left over");
            return new LogEntry(nonce, List.copyOf(out));
        } catch (BufferUnderflowException e) {
            throw new CodecException("batch entry cut short");
        }
    }
}
