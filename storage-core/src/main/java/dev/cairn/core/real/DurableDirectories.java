package dev.cairn.core.real;

import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

/**
 * Directories whose existence survives a power loss. {@code mkdir} puts a name into the parent directory, and like
 * any name it is durable only once the parent is fsynced (POSIX; ext4 usually commits it within seconds, a power
 * cut before that loses it). A node that made its data directory, fsynced every chunk file inside and acknowledged
 * them could come back to an empty disk: found by {@code ./cairn chaos --scenario power-loss}, whose disks keep the
 * rule strictly.
 */
public final class DurableDirectories {
    private DurableDirectories() { }

    /** Creates {@code dir} and any missing parent, syncing each one's parent after it is made; returns {@code dir}. */
    public static Path create(Path dir) throws IOException {
        Path abs = dir.toAbsolutePath().normalize();
        List<Path> missing = new ArrayList<>();
        for (Path p = abs; p != null && !Files.isDirectory(p); p = p.getParent()) missing.add(p);
        Collections.reverse(missing);
        for (Path p : missing) {
            try {
                Files.createDirectory(p);
            } catch (FileAlreadyExistsException e) {
                if (!Files.isDirectory(p)) throw e; // made by another process meanwhile: fine if a directory
            }
            sync(p.getParent());
        }
        // made by an earlier run that may have lost power before it synced the parent: cheap to make sure
        if (missing.isEmpty() && abs.getParent() != null) sync(abs.getParent());
        return dir;
    }

    /** fsync of a directory: the names it holds (created, removed, renamed) are durable afterwards. */
    public static void sync(Path dir) throws IOException {
        try (FileChannel ch = FileChannel.open(dir, StandardOpenOption.READ)) {
            ch.force(true);
        }
    }
}
