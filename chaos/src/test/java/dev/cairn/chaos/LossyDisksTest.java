package dev.cairn.chaos;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.List;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The power-loss layer itself, against POSIX's rules: what was made durable survives a crash byte for byte, what
 * was not is gone, whichever way it was changed (written, truncated, created, removed, renamed over). A layer that
 * lost too little would let durability bugs through every chaos run; one that lost too much would fail correct code.
 */
class LossyDisksTest {
    @TempDir Path dir;
    Path disk;

    @BeforeEach void needsFuse() {
        String why = LossyDisks.unavailable();
        Assumptions.assumeTrue(why == null, "cairn-lossyfs cannot run here: " + why);
    }

    private LossyDisks mount(LossyDisks.Metadata m) throws IOException {
        LossyDisks d = LossyDisks.mount(dir, List.of("n"), m);
        disk = dir.resolve("n");
        return d;
    }

    @Test void onlyWhatWasSyncedSurvivesAPowerLoss() throws IOException {
        try (LossyDisks d = mount(LossyDisks.Metadata.STRICT)) {
            write(disk.resolve("kept"), "durable", true);
            syncDir(disk);
            write(disk.resolve("new-data-lost"), "written, never synced", false);
            syncDir(disk); // the name is durable, the bytes are not
            write(disk.resolve("name-lost"), "synced, but its directory never was", true);
            overwrite(disk.resolve("kept"), 2, "XXXXXXXXXXXX"); // overwrites and extends, unsynced
            Files.createDirectories(disk.resolve("sub"));
            assertThat(d.powerLoss("n")).startsWith("undid ");

            assertThat(Files.readString(disk.resolve("kept"))).isEqualTo("durable");
            assertThat(Files.size(disk.resolve("new-data-lost"))).isZero();
            assertThat(disk.resolve("name-lost")).doesNotExist();
            assertThat(disk.resolve("sub")).doesNotExist();
            try (var s = Files.list(disk)) {
                assertThat(s.map(p -> p.getFileName().toString()).sorted().toList()).containsExactly("kept", "new-data-lost");
            }
        }
    }

    @Test void removalsRenamesAndTruncationsComeBackUnlessSynced() throws IOException {
        try (LossyDisks d = mount(LossyDisks.Metadata.STRICT)) {
            write(disk.resolve("a"), "aaaa", true);
            write(disk.resolve("b"), "bbbb", true);
            write(disk.resolve("c"), "cccc", true);
            write(disk.resolve("gone"), "gone for good", true);
            syncDir(disk);
            Files.delete(disk.resolve("gone"));
            syncDir(disk); // this removal is durable
            Files.move(disk.resolve("a"), disk.resolve("b"), StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
            Files.delete(disk.resolve("c"));
            try (FileChannel ch = FileChannel.open(disk.resolve("b"), StandardOpenOption.WRITE)) {
                ch.truncate(1);
            }
            assertThat(Files.readString(disk.resolve("b"))).isEqualTo("a");
            d.powerLoss("n");

            assertThat(Files.readString(disk.resolve("a"))).isEqualTo("aaaa");
            assertThat(Files.readString(disk.resolve("b"))).isEqualTo("bbbb");
            assertThat(Files.readString(disk.resolve("c"))).isEqualTo("cccc");
            assertThat(disk.resolve("gone")).doesNotExist();
        }
    }

    @Test void aRenameIsDurableOnceItsDirectoryIsSynced() throws IOException {
        try (LossyDisks d = mount(LossyDisks.Metadata.STRICT)) {
            write(disk.resolve("tmp"), "new", true);
            write(disk.resolve("current"), "old", true);
            syncDir(disk);
            Files.move(disk.resolve("tmp"), disk.resolve("current"), StandardCopyOption.ATOMIC_MOVE);
            syncDir(disk);
            d.powerLoss("n");
            assertThat(Files.readString(disk.resolve("current"))).isEqualTo("new");
            assertThat(disk.resolve("tmp")).doesNotExist();
            assertThat(d.powerLoss("n")).as("a second loss with nothing pending").isEqualTo("undid 0 changes, 0 bytes");
        }
    }

    @Test void journaledMetadataIsCommittedByAnySync() throws IOException {
        try (LossyDisks d = mount(LossyDisks.Metadata.JOURNALED)) {
            Files.createDirectories(disk.resolve("log"));
            write(disk.resolve("log/segment"), "entry", true); // its own fsync commits its name and its directory's
            write(disk.resolve("unsynced"), "lost bytes", false); // its name rides the next commit, its bytes do not
            write(disk.resolve("later"), "x", true);
            write(disk.resolve("after-last-sync"), "y", false);
            d.powerLoss("n");
            assertThat(Files.readString(disk.resolve("log/segment"))).isEqualTo("entry");
            assertThat(Files.size(disk.resolve("unsynced"))).isZero();
            assertThat(disk.resolve("after-last-sync")).doesNotExist();
        }
    }

    /** An unsynced write of {@code len} bytes {@code b} at {@code off}. */
    private record Write(long off, int len, byte b) {
        boolean covers(long at, long prefix) { return off <= at && at < off + prefix; }
    }

    /**
     * A torn power loss: each unsynced write is undone, kept whole, or kept as a prefix of whole 512-byte sectors,
     * the rest of it (and the size it added beyond) undone, a newer write's kept bytes never overwritten by an older
     * one's undo. Checked over many seeds against what each write could have left: a byte is durable data or the byte
     * of a write that kept it, what a write kept is a sector-aligned prefix of it (bytes a newer write kept aside), and
     * the size is the durable one or what the newest write kept reached.
     */
    @Test void aTornPowerLossKeepsSectorAlignedPrefixesOfUnsyncedWrites() throws IOException {
        int size = 65536;
        List<Write> writes = List.of(new Write(0, 16384, (byte) 'B'), new Write(8192, 16384, (byte) 'C'), new Write(57344, 12288, (byte) 'D')); // oldest first; page-aligned: the kernel splits a write at a page boundary it starts inside
        java.util.Set<String> seen = new java.util.TreeSet<>();
        try (LossyDisks d = mount(LossyDisks.Metadata.STRICT)) {
            Path f = disk.resolve("f");
            write(f, "A".repeat(size), true);
            syncDir(disk);
            for (long seed = 1; seed <= 24; seed++) {
                for (Write w : writes) {
                    try (FileChannel ch = FileChannel.open(f, StandardOpenOption.WRITE)) {
                        byte[] b = new byte[w.len()];
                        java.util.Arrays.fill(b, w.b());
                        ch.write(ByteBuffer.wrap(b), w.off());
                    }
                }
                String said = d.powerLossTearing("n", seed);
                byte[] got = Files.readAllBytes(f);
                long[] kept = new long[writes.size()];
                for (int i = writes.size() - 1; i >= 0; i--) { // newest first: a newer write's kept bytes hide an older one's
                    Write w = writes.get(i);
                    long lastKept = -1;
                    boolean lost = false;
                    for (long at = w.off(); at < w.off() + w.len() && at < got.length; at++) {
                        boolean hidden = false;
                        for (int j = i + 1; j < writes.size(); j++) hidden |= writes.get(j).covers(at, kept[j]);
                        if (hidden) continue;
                        if (got[(int) at] == w.b()) {
                            assertThat(lost).as("seed %d: write %d kept byte %d after losing an earlier one (%s)", seed, i, at, said).isFalse();
                            lastKept = at;
                        } else {
                            lost = true;
                        }
                    }
                    kept[i] = lastKept < 0 ? 0 : lastKept + 1 - w.off();
                    assertThat(kept[i] == w.len() || kept[i] % 512 == 0).as("seed %d: write %d kept %d bytes, not whole sectors (%s)", seed, i, kept[i], said).isTrue();
                    seen.add(kept[i] == 0 ? "undone" : kept[i] == w.len() ? "whole" : "part");
                }
                for (int at = 0; at < got.length; at++) {
                    if (got[at] == 'A') assertThat(at).as("seed %d: durable bytes only within the durable size", seed).isLessThan(size);
                    else assertThat(List.of((byte) 'B', (byte) 'C', (byte) 'D')).as("seed %d: byte %d", seed, at).contains(got[at]);
                }
                assertThat((long) got.length).as("seed %d: the size the newest write's kept bytes reach, else the durable one (%s)", seed, said)
                        .isEqualTo(Math.max(size, writes.get(2).off() + kept[2]));
                write(f, "A".repeat(size), true); // durable again for the next seed
            }
        }
        assertThat(seen).as("over the seeds, writes were undone, kept whole and kept in part").containsExactly("part", "undone", "whole");
    }

    @Test void aStalledDiskAnswersLate() throws IOException {
        try (LossyDisks d = mount(LossyDisks.Metadata.STRICT)) {
            write(disk.resolve("f"), "x", true);
            d.stall("n", 300);
            long start = System.nanoTime();
            write(disk.resolve("f"), "y", true); // a write and a sync: at least two delayed calls
            assertThat((System.nanoTime() - start) / 1_000_000).isGreaterThanOrEqualTo(600);
            d.stall("n", 0);
        }
    }

    @Test void aFailingDiskAnswersEioUntilItIsWell() throws IOException {
        try (LossyDisks d = mount(LossyDisks.Metadata.STRICT)) {
            write(disk.resolve("f"), "x", true);
            d.fail("n", true);
            org.assertj.core.api.Assertions.assertThatThrownBy(() -> write(disk.resolve("f"), "y", true)).isInstanceOf(IOException.class);
            org.assertj.core.api.Assertions.assertThatThrownBy(() -> Files.readString(disk.resolve("f"))).isInstanceOf(IOException.class);
            org.assertj.core.api.Assertions.assertThatThrownBy(() -> Files.createDirectory(disk.resolve("d"))).isInstanceOf(IOException.class);
            d.fail("n", false);
            assertThat(Files.readString(disk.resolve("f"))).isEqualTo("x");
            write(disk.resolve("f"), "z", true);
            assertThat(Files.readString(disk.resolve("f"))).isEqualTo("z");
        }
    }

    private static void write(Path f, String s, boolean sync) throws IOException {
        try (FileChannel ch = FileChannel.open(f, StandardOpenOption.CREATE, StandardOpenOption.WRITE, StandardOpenOption.TRUNCATE_EXISTING)) {
            ch.write(ByteBuffer.wrap(s.getBytes(StandardCharsets.UTF_8)));
            if (sync) ch.force(true);
        }
    }

    private static void overwrite(Path f, long at, String s) throws IOException {
        try (FileChannel ch = FileChannel.open(f, StandardOpenOption.WRITE)) {
            ch.write(ByteBuffer.wrap(s.getBytes(StandardCharsets.UTF_8)), at);
        }
    }

    private static void syncDir(Path d) throws IOException {
        try (FileChannel ch = FileChannel.open(d, StandardOpenOption.READ)) {
            ch.force(true);
        }
    }
}
