package dev.cairn.master.meta;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.cairn.core.proto.CodecException;
import dev.cairn.core.proto.StorageClass;
import dev.cairn.core.proto.Types.AttrChange;
import dev.cairn.core.proto.Types.ChunkVersion;
import dev.cairn.core.proto.Types.FileType;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/** Log entries: every command kind has a tag of its own, and every command reads back as written (seeded sweep of field values). */
class MetaCodecTest {
    @Test void everyCommandKindHasATagOfItsOwn() {
        Class<?>[] kinds = MetaCommand.class.getPermittedSubclasses();
        assertThat(kinds).hasSize(MetaCodec.tags());
        Set<Byte> tags = new HashSet<>();
        for (Class<?> k : kinds) assertThat(tags.add(MetaCodec.encode(sample(k, new SplittableRandom(1)))[1])).as(k.getSimpleName()).isTrue();
    }

    @Test void everyCommandReadsBackAsWritten() throws Exception {
        for (long seed = 1; seed <= 300; seed++) {
            SplittableRandom r = new SplittableRandom(seed);
            for (Class<?> k : MetaCommand.class.getPermittedSubclasses()) {
                MetaCommand<?> c = sample(k, r);
                assertThat(MetaCodec.decode(MetaCodec.encode(c))).as("seed %d: %s", seed, c).isEqualTo(c);
            }
        }
    }

    @Test void aDamagedOrForeignEntryIsAnErrorNotAWrongCommand() {
        byte[] good = MetaCodec.encode(new MetaCommand.Mkdir("/a", 5));
        assertThatThrownBy(() -> MetaCodec.decode(new byte[0])).isInstanceOf(CodecException.class);
        byte[] unknown = good.clone();
        unknown[1] = (byte) 120;
        assertThatThrownBy(() -> MetaCodec.decode(unknown)).isInstanceOf(CodecException.class).hasMessageContaining("tag 120");
        byte[] newer = good.clone();
        newer[0] = (byte) 0x83;
        assertThatThrownBy(() -> MetaCodec.decode(newer)).isInstanceOf(CodecException.class).hasMessageContaining("newer Cairn");
        assertThatThrownBy(() -> MetaCodec.decode(Arrays.copyOf(good, good.length - 1))).isInstanceOf(CodecException.class);
        assertThatThrownBy(() -> MetaCodec.decode(Arrays.copyOf(good, good.length + 1))).isInstanceOf(CodecException.class);
    }

    static MetaCommand<?> sample(Class<?> kind, SplittableRandom r) {
        String s = name(r);
        long l = r.nextLong();
        int i = r.nextInt();
        StorageClass cls = r.nextBoolean() ? StorageClass.replicated(1 + r.nextInt(5)) : StorageClass.ec(1 + r.nextInt(8), 1 + r.nextInt(4));
        if (kind == MetaCommand.Mkdir.class) return new MetaCommand.Mkdir(s, l, r.nextLong());
        if (kind == MetaCommand.CreateFile.class) return new MetaCommand.CreateFile(s, i, cls, l, r.nextLong());
        if (kind == MetaCommand.Remove.class) return new MetaCommand.Remove(s, r.nextLong());
        if (kind == MetaCommand.CreateIn.class) {
            return new MetaCommand.CreateIn(l, s, FileType.values()[r.nextInt(FileType.values().length)], i, r.nextInt(), r.nextInt(), name(r),
                    r.nextInt(), cls, r.nextLong(), r.nextLong(), r.nextLong());
        }
        if (kind == MetaCommand.Unlink.class) return new MetaCommand.Unlink(l, s, r.nextLong(), r.nextLong());
        if (kind == MetaCommand.Rename.class) return new MetaCommand.Rename(l, s, r.nextLong(), name(r), r.nextLong(), r.nextLong());
        if (kind == MetaCommand.Link.class) return new MetaCommand.Link(l, r.nextLong(), s, r.nextLong(), r.nextLong());
        if (kind == MetaCommand.SetAttr.class) {
            return new MetaCommand.SetAttr(l, new AttrChange(i, r.nextInt(), r.nextInt(), r.nextLong(), r.nextLong(), r.nextLong(), r.nextLong()), r.nextLong());
        }
        if (kind == MetaCommand.AllocChunk.class) return new MetaCommand.AllocChunk(l, i);
        if (kind == MetaCommand.BumpVersion.class) return new MetaCommand.BumpVersion(l);
        if (kind == MetaCommand.ReserveVersion.class) return new MetaCommand.ReserveVersion(l);
        if (kind == MetaCommand.AdoptVersion.class) return new MetaCommand.AdoptVersion(l, r.nextLong());
        if (kind == MetaCommand.SetLength.class) return new MetaCommand.SetLength(l, r.nextLong(), r.nextLong(), versions(r));
        if (kind == MetaCommand.SetClass.class) return new MetaCommand.SetClass(s, cls);
        if (kind == MetaCommand.ReserveChunkIds.class) return new MetaCommand.ReserveChunkIds(i);
        if (kind == MetaCommand.Archive.class) {
            List<MetaCommand.Rewritten> rw = new ArrayList<>();
            for (int n = r.nextInt(4); n > 0; n--) rw.add(new MetaCommand.Rewritten(r.nextInt(), r.nextLong(), r.nextLong(), r.nextLong()));
            return new MetaCommand.Archive(l, r.nextLong(), r.nextLong(), cls, rw);
        }
        if (kind == MetaCommand.CommitRewrite.class) {
            List<MetaCommand.Rewritten> rw = new ArrayList<>();
            for (int n = r.nextInt(4); n > 0; n--) rw.add(new MetaCommand.Rewritten(r.nextInt(), r.nextLong(), r.nextLong(), r.nextLong()));
            return new MetaCommand.CommitRewrite(l, r.nextLong(), r.nextLong(), versions(r), rw);
        }
        if (kind == MetaCommand.Format.class) return new MetaCommand.Format(l);
        if (kind == MetaCommand.Barrier.class) return new MetaCommand.Barrier(l);
        if (kind == MetaCommand.ServerKnown.class) return new MetaCommand.ServerKnown(s);
        if (kind == MetaCommand.SetDraining.class) return new MetaCommand.SetDraining(s, r.nextBoolean());
        if (kind == MetaCommand.SetXattr.class) {
            byte[] value = new byte[r.nextInt(40)];
            for (int b = 0; b < value.length; b++) value[b] = (byte) r.nextInt();
            return new MetaCommand.SetXattr(l, s, value, r.nextInt(4), r.nextLong(), r.nextLong());
        }
        throw new AssertionError("no sample for " + kind.getSimpleName() + ": add one");
    }

    private static List<ChunkVersion> versions(SplittableRandom r) {
        List<ChunkVersion> out = new ArrayList<>();
        for (int n = r.nextInt(5); n > 0; n--) out.add(new ChunkVersion(r.nextLong(), r.nextLong()));
        return out;
    }

    /** Names with what trips codecs: empty, multi-byte UTF-8, separators. */
    private static String name(SplittableRandom r) {
        String[] parts = {"", "a", "/x/y", "é", "日本", "🐟", " ", "..", "name-" + r.nextInt(1000)};
        StringBuilder b = new StringBuilder();
        for (int n = r.nextInt(4); n > 0; n--) b.append(parts[r.nextInt(parts.length)]);
        return b.toString();
    }
}
