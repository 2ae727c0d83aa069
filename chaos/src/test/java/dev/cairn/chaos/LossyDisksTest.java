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
