package dev.cairn.master.meta;

import dev.cairn.core.proto.CodecException;
import java.util.List;

/**
 * {@link MetaCommand}s as log entries: a one-byte tag naming the command, then its record, in the
 * {@link StoreFormat} (entries outlive the code that wrote them: a replica replays its log after an upgrade).
 * Tags are append only.
 */
public final class MetaCodec {
    /** Tag = index in this list. Append only. */
    private static final List<Class<? extends MetaCommand<?>>> TAGS = List.of(
            MetaCommand.Mkdir.class, MetaCommand.CreateFile.class, MetaCommand.Remove.class, MetaCommand.CreateIn.class,
            MetaCommand.Unlink.class, MetaCommand.Rename.class, MetaCommand.Link.class, MetaCommand.SetAttr.class,
            MetaCommand.AllocChunk.class, MetaCommand.BumpVersion.class, MetaCommand.ReserveVersion.class,
            MetaCommand.AdoptVersion.class, MetaCommand.SetLength.class, MetaCommand.SetClass.class,
            MetaCommand.ReserveChunkIds.class, MetaCommand.Archive.class, MetaCommand.Format.class,
            MetaCommand.Barrier.class, MetaCommand.ServerKnown.class, MetaCommand.SetDraining.class,
            MetaCommand.CommitRewrite.class, MetaCommand.SetXattr.class);

    private MetaCodec() {}

    public static byte[] encode(MetaCommand<?> command) {
        int tag = TAGS.indexOf(command.getClass());
        if (tag < 0) throw new IllegalArgumentException("no log tag for " + command.getClass().getSimpleName());
        return StoreFormat.encodeEntry(tag, (Record) command);
    }

    public static MetaCommand<?> decode(byte[] entry) throws CodecException {
        int tag = StoreFormat.entryTag(entry);
        if (tag >= TAGS.size()) throw new CodecException("unknown log entry tag " + tag + " (written by a newer Cairn?)");
        return (MetaCommand<?>) StoreFormat.decodeEntry(entry, TAGS.get(tag).asSubclass(Record.class));
    }

    static int tags() { return TAGS.size(); }
}
