package dev.cairn.master.meta;

import com.code_intelligence.jazzer.junit.FuzzTest;
import dev.cairn.core.proto.CodecException;
import dev.cairn.core.proto.Types.FileAttr;
import dev.cairn.master.namespace.InodeRecord;

/**
 * Coverage-guided fuzzing of what a master reads back from its own disk and its peers' logs (Jazzer): log entries
 * ({@link MetaCodec}, {@link LogEntry}'s batches) and stored records ({@link StoreFormat}, both encodings). A damaged entry or record must be refused
 * with {@link CodecException}, never half-read or thrown as anything else; an entry accepted reads back as the same
 * command once written again. Corpus under {@code StoreFormatFuzzTestInputs/}; {@code ./cairn fuzz store --minutes N}.
 */
public class StoreFormatFuzzTest {
    @FuzzTest(maxDuration = "5m") void logEntryOrRecord(byte[] bytes) { fuzzerTestOneInput(bytes); }

    public static void fuzzerTestOneInput(byte[] bytes) {
        try {
            MetaCommand<?> c = MetaCodec.decode(bytes);
            MetaCommand<?> again = MetaCodec.decode(MetaCodec.encode(c));
            if (!again.equals(c)) throw new AssertionError("log entry " + c + " reads back as " + again);
        } catch (CodecException refused) {
            // a damaged entry: refused, as it must be
        }
        try {
            LogEntry e = LogEntry.decode(bytes); // a whole entry: the proposer's nonce, then one command or a batch
            java.util.List<byte[]> commands = e.commands().stream().map(MetaCodec::encode).toList();
            LogEntry again = LogEntry.decode(LogEntry.encode(e.nonce(), commands));
            if (!again.equals(e)) throw new AssertionError("log entry " + e + " reads back as " + again);
        } catch (CodecException refused) {
            // likewise
        }
        for (Class<? extends Record> type : java.util.List.of(InodeRecord.class, ChunkRecord.class, FileAttr.class)) {
            try {
                Record r = StoreFormat.decode(bytes, type);
                Record again = StoreFormat.decode(StoreFormat.encode(r), type);
                if (!again.equals(r)) throw new AssertionError(type.getSimpleName() + " " + r + " reads back as " + again);
            } catch (CodecException refused) {
                // likewise
            }
        }
    }
}
