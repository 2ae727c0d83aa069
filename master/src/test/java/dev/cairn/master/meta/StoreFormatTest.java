package dev.cairn.master.meta;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.cairn.core.env.KvBatch;
import dev.cairn.core.proto.CodecException;
import dev.cairn.core.proto.StorageClass;
import dev.cairn.core.proto.Types.AttrChange;
import dev.cairn.core.proto.Types.FileAttr;
import dev.cairn.core.proto.Types.FileType;
import dev.cairn.core.testing.MemKv;
import dev.cairn.master.namespace.InodeRecord;
import dev.cairn.master.namespace.Namespace;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.junit.jupiter.api.Test;

/**
 * A store and a log written by every record encoding a release ever wrote (fixtures, never rewritten) open and
 * read back as the same metadata with today's code; damaged and newer records are refused with an error.
 */
class StoreFormatTest {
    /** Every encoding ever written; the last is the current one. Add, never remove. */
    private static final String[] FIXTURES = {"records1", "records2"};

    @Test void theCurrentEncodingHasAFixture() {
        assertThat(FIXTURES[FIXTURES.length - 1]).as("record a fixture of the current encoding (FormatFixture.main)")
                .isEqualTo("records" + StoreFormat.ENCODING);
    }

    @ParameterizedTest @ValueSource(strings = {"records1", "records2"})
    void aLogWrittenByAnEncodingReadsBackAsTheSameCommands(String fixture) throws Exception {
        List<byte[]> entries = FormatFixture.read(fixture).entries();
        assertThat(entries).hasSameSizeAs(FormatFixture.COMMANDS);
        for (int i = 0; i < entries.size(); i++) assertThat(MetaCodec.decode(entries.get(i))).isEqualTo(FormatFixture.COMMANDS.get(i));
    }

    @ParameterizedTest @ValueSource(strings = {"records1", "records2"})
    void aStoreWrittenByAnEncodingOpensAsTheSameNamespace(String fixture) throws Exception {
        MemKv kv = load(fixture);
        Namespace ns = new Namespace(kv, 3);
        ns.checkFormat();
        FileAttr f = ns.resolve("/d/f").attr();
        assertThat(f).isEqualTo(new FileAttr(3, FileType.FILE, 300, FormatFixture.T + 3, 1 << 20, StorageClass.ec(2, 1), 0600, 0, 0, 1,
                FormatFixture.T + 2, FormatFixture.T + 10, 7, 2, ""));
        assertThat(ns.resolve("/d").storageClass()).isEqualTo(FormatFixture.DIR_CLASS);
        assertThat(ns.resolve("/l2").target()).isEqualTo("f");
        assertThat(ns.resolve("/l2").type()).isEqualTo(FileType.SYMLINK);
        assertThat(ns.chunk(3)).isEqualTo(new ChunkRecord(3, 2, 3, 0, 2));
        assertThat(ns.chunk(1)).as("archived away").isNull();
        assertThat(ns.knownServers()).containsExactly("cs1", "cs2");
        assertThat(ns.drainingServers()).containsExactly("cs2");

        // the outcomes kept for retries read back: a retried create and remove answer as the first time
        LocalMetaLog log = new LocalMetaLog(kv, ns, null);
        FileAttr created = log.submit(new MetaCommand.CreateFile("/d/f", 1 << 20, StorageClass.replicated(2), FormatFixture.T + 2, 102)).value();
        assertThat(created.inode()).isEqualTo(3);
        assertThat(created.size()).as("as it was created").isZero();
        assertThat(log.submit(new MetaCommand.Remove("/d/e", 108)).value()).containsExactly(2L);

        // and the store takes new records beside the old ones
        assertThat(log.submit(new MetaCommand.Mkdir("/d/new", FormatFixture.T + 20, 0)).isFailed()).isFalse();
        assertThat(new Namespace(kv, 3).resolve("/d/new").type()).isEqualTo(FileType.DIR);
    }

    /** Record for record, an old store holds what today's code writes for the same commands. */
    @ParameterizedTest @ValueSource(strings = {"records1", "records2"})
    void aStoreWrittenByAnEncodingHoldsWhatTodaysCodeWrites(String fixture) throws Exception {
        Map<String, byte[]> old = new HashMap<>();
        for (byte[][] kv : FormatFixture.read(fixture).store()) old.put(Arrays.toString(kv[0]), kv[1]);
        Map<String, byte[]> now = new HashMap<>();
        List<byte[]> keys = new ArrayList<>();
        FormatFixture.applied().scan(new byte[0], (k, v) -> {
            now.put(Arrays.toString(k), v);
            keys.add(k);
            return true;
        });
        assertThat(old.keySet()).isEqualTo(now.keySet());
        Map<Long, Class<? extends Record>> outcomeTypes = outcomeTypes();
        for (byte[] key : keys) {
            byte[] a = old.get(Arrays.toString(key)), b = now.get(Arrays.toString(key));
            switch (key[0]) {
                case 'I' -> assertThat(StoreFormat.decode(a, InodeRecord.class)).isEqualTo(StoreFormat.decode(b, InodeRecord.class));
                case 'K' -> assertThat(StoreFormat.decode(a, ChunkRecord.class)).isEqualTo(StoreFormat.decode(b, ChunkRecord.class));
                case 'Q' -> {
                    Class<? extends Record> type = outcomeTypes.get(ByteBuffer.wrap(key, 1, 8).getLong());
                    assertThat(Arrays.copyOf(a, 8)).as("sequence").isEqualTo(Arrays.copyOf(b, 8));
                    assertThat(StoreFormat.decode(a, 8, type)).isEqualTo(StoreFormat.decode(b, 8, type));
                }
                default -> assertThat(a).as("key %s", Arrays.toString(key)).isEqualTo(b); // counters, names, markers: fixed layouts
            }
        }
    }

    @Test void everyProperPrefixOfARecordOrEntryIsRefused() throws Exception {
        for (String fixture : FIXTURES) {
            FormatFixture.Recorded r = FormatFixture.read(fixture);
            for (byte[] e : r.entries()) {
                for (int n = 0; n < e.length; n++) {
                    byte[] cut = Arrays.copyOf(e, n);
                    assertThatThrownBy(() -> MetaCodec.decode(cut)).as("%s: %d of %d bytes", fixture, n, e.length).isInstanceOf(CodecException.class);
                }
            }
            for (byte[][] kv : r.store()) {
                if (kv[0][0] != 'I' && kv[0][0] != 'K') continue;
                Class<? extends Record> type = kv[0][0] == 'I' ? InodeRecord.class : ChunkRecord.class;
                for (int n = 0; n < kv[1].length; n++) {
                    byte[] cut = Arrays.copyOf(kv[1], n);
                    assertThatThrownBy(() -> StoreFormat.decode(cut, type)).isInstanceOf(CodecException.class);
                }
            }
        }
    }

    /** A damaged record is refused with a CodecException or reads as some record; it never throws anything else. */
    @Test void damagedRecordsAreRefusedCleanly() throws Exception {
        SplittableRandom random = new SplittableRandom(7);
        int refused = 0, total = 0;
        for (String fixture : FIXTURES) {
            for (byte[] e : FormatFixture.read(fixture).entries()) {
                for (int round = 0; round < 200; round++) {
                    byte[] bad = e.clone();
                    for (int flips = 1 + random.nextInt(3); flips > 0; flips--) bad[random.nextInt(bad.length)] ^= (byte) (1 << random.nextInt(8));
                    total++;
                    try {
                        MetaCodec.decode(bad);
                    } catch (CodecException expected) {
                        refused++;
                    }
                }
            }
        }
        assertThat(refused).as("most damage is noticed").isGreaterThan(total / 4);
    }

    @Test void aRecordWithFieldsThisCodeDoesNotKnowIsRefused() {
        byte[] b = StoreFormat.encode(new ChunkRecord(1, 2, 3, 4, 2));
        assertThat(b[1]).isEqualTo((byte) 5);
        byte[] newer = Arrays.copyOf(b, b.length + 1);
        newer[1] = 6;
        newer[b.length] = 0;
        assertThatThrownBy(() -> StoreFormat.decode(newer, ChunkRecord.class)).isInstanceOf(CodecException.class).hasMessageContaining("newer Cairn");
    }

    /** AttrChange as it would have been before it gained {@code fromSize}. */
    record AttrChangeBefore(int mode, int uid, int gid, long size, long atimeMillis, long mtimeMillis) {}

    @Test void aRecordWrittenBeforeAFieldWasAddedReadsWithTheFieldAtItsDefault() throws Exception {
        byte[] b = StoreFormat.encode(new AttrChangeBefore(0600, 1, 2, 3, 4, 5));
        assertThat(StoreFormat.decode(b, AttrChange.class)).isEqualTo(new AttrChange(0600, 1, 2, 3, 4, 5, 0));
    }

    @Test void recordsReadBackAsWritten() throws Exception {
        SplittableRandom r = new SplittableRandom(11);
        for (int i = 0; i < 2000; i++) {
            StorageClass cls = r.nextBoolean() ? StorageClass.replicated(1 + r.nextInt(5)) : StorageClass.ec(1 + r.nextInt(8), 1 + r.nextInt(4));
            if (r.nextBoolean()) cls = cls.withDisk("d" + r.nextInt(100)).withDomain(StorageClass.Domain.values()[r.nextInt(3)]);
            long version = 1 + (r.nextLong() >>> 2);
            InodeRecord ino = new InodeRecord(r.nextLong(), FileType.values()[r.nextInt(FileType.values().length)], r.nextLong(), r.nextLong() >>> 1,
                    r.nextLong(), r.nextInt(), cls, r.nextInt(InodeRecord.MODE_BITS + 1), r.nextInt(), r.nextInt(), r.nextInt(1 << 16), r.nextLong(),
                    r.nextLong(), r.nextLong(), "t\u00e9" + r.nextInt());
            ChunkRecord chunk = new ChunkRecord(r.nextLong(), version, r.nextLong(), r.nextInt(), r.nextLong(version + 1));
            assertThat(StoreFormat.decode(StoreFormat.encode(ino), InodeRecord.class)).isEqualTo(ino);
            assertThat(StoreFormat.decode(StoreFormat.encode(chunk), ChunkRecord.class)).isEqualTo(chunk);
        }
    }

    /** Varints and no fixed-width fields: a typical inode takes 57 bytes where the wire's layout takes 110 (RocksDB, caches, snapshots). */
    @Test void recordsAreSmallerThanOnTheWire() {
        InodeRecord ino = new InodeRecord(12345, FileType.FILE, 2, 300, FormatFixture.T, 1 << 26, StorageClass.replicated(2), 0644, 1000, 1000, 1,
                FormatFixture.T, FormatFixture.T, 3, "");
        assertThat(StoreFormat.encode(ino).length).isLessThan(dev.cairn.core.proto.Codec.encodeRecord(ino).length * 2 / 3);
    }

    private static MemKv load(String fixture) throws Exception {
        MemKv kv = new MemKv();
        KvBatch batch = new KvBatch();
        for (byte[][] e : FormatFixture.read(fixture).store()) batch.put(e[0], e[1]);
        kv.write(batch, true);
        return kv;
    }

    /** The record type each fixture op's outcome is kept as. */
    private static Map<Long, Class<? extends Record>> outcomeTypes() {
        Map<Long, Class<? extends Record>> out = new HashMap<>();
        for (MetaCommand<?> c : FormatFixture.COMMANDS) {
            if (!(c instanceof MetaCommand.Op o) || o.op() == 0) continue;
            out.put(o.op(), c instanceof MetaCommand.Remove ? Namespace.Freed.class
                    : c instanceof MetaCommand.Mkdir || c instanceof MetaCommand.CreateFile ? FileAttr.class : MetaCommand.Changed.class);
        }
        return out;
    }
}
