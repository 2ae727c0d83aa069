package dev.cairn.master.ratis;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.function.BooleanSupplier;

/** What the tests of real master groups share: waiting in real time for a condition, and a replaced disk. */
final class RealWaits {
    /** Longest wait for any one condition (elections and catch-up on a loaded 2-core machine). */
    static final long WAIT_NANOS = 60_000_000_000L;

    private RealWaits() {}

    /** Polls {@code done} until it holds; fails naming {@code what} after {@link #WAIT_NANOS}. */
    static void await(String what, BooleanSupplier done) {
        long deadline = System.nanoTime() + WAIT_NANOS;
        while (!done.getAsBoolean()) {
            assertThat(System.nanoTime() - deadline).as("waited " + WAIT_NANOS / 1_000_000_000L + " s for " + what).isNegative();
            try {
                Thread.sleep(20);
            } catch (InterruptedException e) {
                throw new AssertionError(e);
            }
        }
    }

    /** Deletes {@code dir} and everything under it (a master's disk replaced). */
    static void deleteTree(Path dir) throws IOException {
        if (!Files.exists(dir)) return;
        try (var files = Files.walk(dir)) {
            for (Path p : files.sorted(Comparator.reverseOrder()).toList()) Files.delete(p);
        }
    }
}
