package dev.cairn.core.env;

import dev.cairn.core.async.Promise;
import java.util.List;

/**
 * One data directory (a disk) with a flat set of files. Writes, creates, renames and deletes are
 * volatile until synced: {@link #sync} makes one file's data durable, {@link #syncDirectory} makes the
 * set of names durable. A power loss may drop anything not yet synced. All completions run on the
 * owning node's scheduler. Calls fail with {@link NoSuchFile}, {@link NoSpace} or {@link DiskError}.
 */
public interface Volume {
    String name();

    /**
     * Writes at {@code offset}, creating the file if it does not exist. The bytes may be taken from
     * {@code data} at any time until the write completes (an I/O thread, a submission queue): the caller
     * must not change the array before then.
     */
    Promise<Void> write(String file, long offset, byte[] data);

    /** Reads up to {@code length} bytes; fewer at end of file; fails with NoSuchFile if the file is absent. */
    Promise<byte[]> read(String file, long offset, int length);

    /**
     * Reads as {@link #read} does, but from the device itself, past any cache of the operating system's (a
     * real volume opens the file with {@code O_DIRECT} where its filesystem allows): what a power cut would
     * leave. A read-back after an fsync that a write the disk put elsewhere, or dropped, cannot pass.
     */
    default Promise<byte[]> readFromDevice(String file, long offset, int length) { return read(file, offset, length); }

    /**
     * The CRC32C of each {@code blockSize}-byte piece of {@code [offset, offset + length)} (the last may be
     * shorter), bytes past the end of the file counting as zeros: what reading the range, zero-filling a short
     * read and checksumming each piece would give. For a reader that keeps nothing but the checksums (the
     * scrubber): it hands the volume no buffer, and a volume may compute them without copying the bytes out.
     * Fails as a read does.
     */
    Promise<int[]> checksums(String file, long offset, int length, int blockSize);

    /** Checks {@link #checksums}' arguments; the number of pieces. */
    static int checksumPieces(long offset, int length, int blockSize) {
        if (offset < 0 || length < 0 || blockSize <= 0) {
            throw new IllegalArgumentException("checksums of " + length + " bytes at " + offset + " in blocks of " + blockSize);
        }
        return (int) (((long) length + blockSize - 1) / blockSize);
    }

    Promise<Void> sync(String file);

    Promise<Void> syncDirectory();

    Promise<Void> rename(String from, String to);

    /** Deletes the file; succeeds if it does not exist. */
    Promise<Void> delete(String file);

    /**
     * The filesystem under this volume: bytes free for this process, its size, and an id shared by every volume
     * on the same filesystem (so free space is counted once); null where unknown (the simulator's disks, or a
     * failed query). A cheap query (statvfs), meant for a heartbeat's pace.
     */
    default Space space() { return null; }

    record Space(long freeBytes, long totalBytes, String filesystem) {}

    /**
     * The caller has decided to delete {@code file} and will, once the operations queued on it are done: from now
     * on nothing reads it. Changes nothing on a real disk; the simulator judges the deletion here, against the
     * state it was decided in, rather than when the unlink gets through a stalled queue.
     */
    default void retiring(String file) {}

    /** File names, sorted. */
    Promise<List<String>> list();

    /** Raised (as a failed promise) when a file does not exist. */
    final class NoSuchFile extends RuntimeException implements dev.cairn.core.async.Unexpected.Expected {
        public NoSuchFile(String file) { super("no such file: " + file); }
    }

    /** Raised (as a failed promise) when the disk has no room left for a write (ENOSPC); nothing else is wrong with it. */
    final class NoSpace extends RuntimeException implements dev.cairn.core.async.Unexpected.Expected {
        public NoSpace(String volume) { super("no space left on " + volume); }
    }

    /**
     * Raised (as a failed promise) when the disk itself failed the call: an I/O error, or an fsync that did
     * not complete. What that call covered must be taken as lost (DESIGN.md, durability contract).
     */
    final class DiskError extends RuntimeException implements dev.cairn.core.async.Unexpected.Expected {
        public DiskError(String volume, String what, Throwable cause) { super("disk " + volume + ": " + what, cause); }
    }
}
