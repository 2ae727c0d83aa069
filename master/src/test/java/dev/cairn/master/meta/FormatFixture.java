package dev.cairn.master.meta;

import dev.cairn.core.proto.StorageClass;
import dev.cairn.core.proto.Types.AttrChange;
import dev.cairn.core.proto.Types.ChunkVersion;
import dev.cairn.core.proto.Types.FileType;
import dev.cairn.core.testing.MemKv;
import dev.cairn.master.namespace.Namespace;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;

/**
 * The metadata a store-format fixture holds: one of every {@link MetaCommand} kind, applied in this order to an
 * empty store. A fixture directory ({@code src/test/resources/dev/cairn/master/meta/format/<name>/}) keeps what a
 * release wrote for them, in two text files of hex: {@code log.txt}, each command's log entry, one per line, and
 * {@code store.txt}, every key and value of the store afterwards. A fixture is written once, by the release whose
 * format it records, and never rewritten: {@link StoreFormatTest} holds every later release to reading it.
 *
 * <p>To record the current format: {@code java -cp <test classpath> dev.cairn.master.meta.FormatFixture DIR}.
 */
public final class FormatFixture {
    static final long T = 1_764_000_000_000L;
    /** The class the fixture sets on {@code /d}: every field of a storage class away from its default. */
    static final StorageClass DIR_CLASS = StorageClass.replicated(2).withDomain(StorageClass.Domain.RACK).withDisk("ssd").withOverflow(true)
            .withArchive(StorageClass.ec(2, 1), 3600);

    /** The commands, in order. Ids (inodes 2..5, chunks 1..3) are what an empty store hands out. */
    static final List<MetaCommand<?>> COMMANDS = List.of(
            new MetaCommand.Format(T),
            new MetaCommand.ServerKnown("cs1"),
            new MetaCommand.ServerKnown("cs2"),
            new MetaCommand.SetDraining("cs2", true),
            new MetaCommand.Mkdir("/d", T + 1, 101),
            new MetaCommand.SetClass("/d", DIR_CLASS),
            new MetaCommand.CreateFile("/d/f", 1 << 20, StorageClass.replicated(2), T + 2, 102),
            new MetaCommand.AllocChunk(3, 0),
            new MetaCommand.ReserveVersion(1),
            new MetaCommand.BumpVersion(1),
            new MetaCommand.AdoptVersion(1, 4),
            new MetaCommand.SetLength(3, 300, T + 3, List.of(new ChunkVersion(1, 4))),
            new MetaCommand.CreateIn(2, "e", FileType.FILE, 0640, 1000, 1001, "", 1 << 20, StorageClass.ec(2, 1), 77, T + 4, 103),
            new MetaCommand.CreateIn(2, "l", FileType.SYMLINK, 0777, 0, 0, "f", 0, StorageClass.DEFAULT, 0, T + 5, 104),
            new MetaCommand.Link(3, 1, "f2", T + 6, 105),
            new MetaCommand.Rename(2, "l", 1, "l2", T + 7, 106),
            new MetaCommand.SetAttr(3, new AttrChange(0600, AttrChange.KEEP, AttrChange.KEEP, AttrChange.KEEP, AttrChange.KEEP, AttrChange.KEEP), T + 8),
            new MetaCommand.SetClass("/d/f", StorageClass.replicated(3)),
            new MetaCommand.AllocChunk(4, 0),
            new MetaCommand.BumpVersion(2),
            new MetaCommand.SetLength(4, 100, T + 9, List.of(new ChunkVersion(2, 2))),
            new MetaCommand.ReserveChunkIds(1),
            new MetaCommand.Archive(3, T + 3, 300, StorageClass.ec(2, 1), List.of(new MetaCommand.Rewritten(0, 1, 4, 3))),
            new MetaCommand.Unlink(1, "f2", T + 10, 107),
            new MetaCommand.Remove("/d/e", 108),
            new MetaCommand.Barrier(42));

    private FormatFixture() {}

    /** An empty store with {@link #COMMANDS} applied through the local log (each must succeed). */
    static MemKv applied() {
        MemKv kv = new MemKv();
        Namespace ns = new Namespace(kv, 3);
        LocalMetaLog log = new LocalMetaLog(kv, ns, null);
        for (MetaCommand<?> c : COMMANDS) {
            var p = log.submit(c);
            if (p.isFailed()) throw new IllegalStateException(c + " failed: " + p.error(), p.error());
        }
        return kv;
    }

    /** One fixture as read: the log entries in order, and the store's keys and values in key order. */
    record Recorded(List<byte[]> entries, List<byte[][]> store) {}

    static Recorded read(String name) throws IOException {
        List<byte[]> entries = new ArrayList<>();
        for (String line : lines(name, "log.txt")) entries.add(HexFormat.of().parseHex(line));
        List<byte[][]> store = new ArrayList<>();
        for (String line : lines(name, "store.txt")) {
            String[] kv = line.split(" ", -1);
            store.add(new byte[][] {HexFormat.of().parseHex(kv[0]), HexFormat.of().parseHex(kv[1])});
        }
        return new Recorded(entries, store);
    }

    private static List<String> lines(String name, String file) throws IOException {
        String path = "format/" + name + "/" + file;
        try (InputStream in = FormatFixture.class.getResourceAsStream(path)) {
            if (in == null) throw new IOException("no fixture " + path + " beside " + FormatFixture.class.getName());
            List<String> out = new ArrayList<>();
            for (String l : new String(in.readAllBytes(), StandardCharsets.US_ASCII).split("\n")) if (!l.isBlank() && !l.startsWith("#")) out.add(l.replace("\r", "")); // an empty value ends its line in a space
            return out;
        }
    }

    public static void main(String[] args) throws IOException {
        Path dir = Path.of(args[0]);
        Files.createDirectories(dir);
        StringBuilder log = new StringBuilder("# one log entry per line, in hex: ").append(FormatFixture.class.getName()).append(".COMMANDS in order\n");
        for (MetaCommand<?> c : COMMANDS) log.append(HexFormat.of().formatHex(MetaCodec.encode(c))).append('\n');
        StringBuilder store = new StringBuilder("# key value, in hex, in key order: the store after the commands\n");
        applied().scan(new byte[0], (k, v) -> {
            store.append(HexFormat.of().formatHex(k)).append(' ').append(HexFormat.of().formatHex(v)).append('\n');
            return true;
        });
        Files.writeString(dir.resolve("log.txt"), log);
        Files.writeString(dir.resolve("store.txt"), store);
    }
}
