package dev.cairn.master.ratis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.cairn.core.env.KvBatch;
import dev.cairn.core.testing.MemKv;
import java.io.ByteArrayOutputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.zip.CRC32C;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class SnapshotFileTest {
    @TempDir Path dir;

    private static List<String> read(SnapshotFile.Found f) throws IOException {
        List<String> out = new ArrayList<>();
        SnapshotFile.read(f, (k, v) -> out.add(new String(k, StandardCharsets.UTF_8) + "=" + new String(v, StandardCharsets.UTF_8)));
        return out;
    }

    @Test void writesAStoreAndReadsItBackInKeyOrder() throws IOException {
        MemKv kv = new MemKv();
        KvBatch b = new KvBatch();
        SplittableRandom rnd = new SplittableRandom(5);
        List<String> want = new ArrayList<>();
        for (int i = 0; i < 2000; i++) {
            String k = String.format("K%06d", i), v = "v" + rnd.nextInt();
            b.put(k.getBytes(StandardCharsets.UTF_8), v.getBytes(StandardCharsets.UTF_8));
            want.add(k + "=" + v);
        }
        b.put("E".getBytes(StandardCharsets.UTF_8), new byte[0]);
        want.add(0, "E=");
        kv.write(b, true);
        SnapshotFile.write(dir, 3, 77, kv.view());
        SnapshotFile.Found f = SnapshotFile.latest(dir);
        assertThat(f).isEqualTo(new SnapshotFile.Found(dir.resolve("snapshot.3_77"), 3, 77));
        assertThat(read(f)).isEqualTo(want);
    }

    /** The layout as its comment specifies it, written by hand: a reader that stops reading format 1 fails here. */
    @Test void readsFormatOneAsSpecified() throws IOException {
        ByteArrayOutputStream body = new ByteArrayOutputStream();
        DataOutputStream out = new DataOutputStream(body);
        out.write("CAIRNSNP".getBytes(StandardCharsets.US_ASCII));
        out.writeInt(1);
        out.writeLong(2);
        out.writeLong(9);
        for (String[] e : new String[][] {{"Ia", "1"}, {"Ib", ""}}) {
            out.writeInt(e[0].length());
            out.write(e[0].getBytes(StandardCharsets.UTF_8));
            out.writeInt(e[1].length());
            out.write(e[1].getBytes(StandardCharsets.UTF_8));
        }
        out.writeInt(-1);
        out.writeLong(2);
        CRC32C crc = new CRC32C();
        crc.update(body.toByteArray());
        out.writeLong(crc.getValue());
        Path p = dir.resolve("snapshot.2_9");
        Files.write(p, body.toByteArray());
        assertThat(read(new SnapshotFile.Found(p, 2, 9))).containsExactly("Ia=1", "Ib=");
    }

    @Test void aDamagedTruncatedOrForeignFileHandsOutNothing() throws IOException {
        MemKv kv = new MemKv();
        KvBatch b = new KvBatch();
        for (int i = 0; i < 100; i++) b.put(("K" + i).getBytes(StandardCharsets.UTF_8), ("v" + i).getBytes(StandardCharsets.UTF_8));
        kv.write(b, true);
        Path good = SnapshotFile.write(dir, 1, 5, kv.view());
        byte[] bytes = Files.readAllBytes(good);
        List<String> handed = new ArrayList<>();

        byte[] flipped = bytes.clone();
        flipped[bytes.length / 2] ^= 4;
        Path p = dir.resolve("snapshot.1_6");
        Files.write(p, flipped);
        assertThatThrownBy(() -> SnapshotFile.read(new SnapshotFile.Found(p, 1, 6), (k, v) -> handed.add("x"))).isInstanceOf(IOException.class);

        Path q = dir.resolve("snapshot.1_7");
        Files.write(q, java.util.Arrays.copyOf(bytes, bytes.length - 9));
        assertThatThrownBy(() -> SnapshotFile.read(new SnapshotFile.Found(q, 1, 7), (k, v) -> handed.add("x"))).isInstanceOf(IOException.class);

        byte[] v2 = bytes.clone();
        v2[11] = 2; // format version 2
        Path r = dir.resolve("snapshot.1_8");
        Files.write(r, v2);
        assertThatThrownBy(() -> SnapshotFile.read(new SnapshotFile.Found(r, 1, 8), (k, v) -> handed.add("x")))
                .hasMessageContaining("snapshot format 2");

        // a file whose name does not say what it holds
        Path s = dir.resolve("snapshot.1_9");
        Files.write(s, bytes);
        assertThatThrownBy(() -> SnapshotFile.read(new SnapshotFile.Found(s, 1, 9), (k, v) -> handed.add("x"))).hasMessageContaining("not what its name says");
        assertThat(handed).as("entries handed out from bad files").isEmpty();
    }

    @Test void keepsOnlyTheLatestSnapshot() throws IOException {
        MemKv kv = new MemKv();
        for (long i : new long[] {10, 30, 20}) SnapshotFile.write(dir, 1, i, kv.view());
        Files.writeString(dir.resolve("snapshot.1_40.tmp"), "half written");
        SnapshotFile.Found latest = SnapshotFile.latest(dir);
        assertThat(latest.index()).isEqualTo(30);
        SnapshotFile.deleteAllBut(dir, latest);
        try (var files = Files.list(dir)) {
            assertThat(files.map(x -> x.getFileName().toString())).containsExactly("snapshot.1_30");
        }
    }
}
