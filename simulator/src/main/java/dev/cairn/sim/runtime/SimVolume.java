package dev.cairn.sim.runtime;

import dev.cairn.core.async.Promise;
import dev.cairn.core.env.Volume;
import java.util.List;
import java.util.function.Supplier;

/** A node's view of a simulated disk: each call completes on the host's scheduler when the disk gets to it. */
final class SimVolume implements Volume {
    private final SimHost host;
    private final SimDisk disk;

    SimVolume(SimHost host, SimDisk disk) {
        this.host = host;
        this.disk = disk;
    }

    @Override public String name() { return disk.name(); }

    /**
     * The bytes are taken from {@code data} when the disk gets to the write, as the real volume (on its I/O
     * thread) and io_uring take them: the caller leaves the array alone until the write completes. With
     * assertions on (as {@code ./cairn sim} runs), a caller that changes it in between fails one.
     */
    @Override public Promise<Void> write(String file, long offset, byte[] data) {
        long digest = CHECKED ? crc(data) : 0;
        return op(disk.transferNanos(data.length), file.hashCode() ^ offset, () -> {
            assert crc(data) == digest : "the array written to " + file + " changed before the write completed";
            disk.write(file, offset, data);
            return null;
        });
    }

    private static final boolean CHECKED = SimVolume.class.desiredAssertionStatus();

    private static long crc(byte[] data) {
        java.util.zip.CRC32C c = new java.util.zip.CRC32C();
        c.update(data);
        return c.getValue();
    }

    @Override public Promise<byte[]> read(String file, long offset, int length) {
        return op(disk.transferNanos(length), file.hashCode() ^ offset, () -> {
            byte[] b = disk.read(file, offset, length);
            if (b == null) throw new NoSuchFile(file);
            return b;
        });
    }

    /** Takes the disk as long as reading the range would: the disk reads it; the simulator only skips copying it out. */
    @Override public Promise<int[]> checksums(String file, long offset, int length, int blockSize) {
        try {
            Volume.checksumPieces(offset, length, blockSize);
        } catch (IllegalArgumentException e) {
            return Promise.failed(e);
        }
        return op(disk.transferNanos(length), file.hashCode() ^ offset, () -> {
            int[] crcs = disk.checksums(file, offset, length, blockSize);
            if (crcs == null) throw new NoSuchFile(file);
            return crcs;
        });
    }

    @Override public Promise<Void> sync(String file) {
        return op(disk.syncNanos(), file.hashCode(), () -> {
            if (!disk.sync(file)) throw new NoSuchFile(file);
            return null;
        });
    }

    @Override public Promise<Void> syncDirectory() {
        return op(disk.syncNanos(), 1, () -> {
            disk.syncDirectory();
            return null;
        });
    }

    @Override public Promise<Void> rename(String from, String to) {
        return op(SimDisk.OP_NANOS, from.hashCode(), () -> {
            if (!disk.rename(from, to)) throw new NoSuchFile(from);
            return null;
        });
    }

    @Override public void retiring(String file) { disk.retiring(file); }

    @Override public Space space() { return disk.space(); }

    @Override public Promise<Void> delete(String file) {
        return op(SimDisk.OP_NANOS, file.hashCode(), () -> {
            disk.delete(file);
            return null;
        });
    }

    @Override public Promise<List<String>> list() {
        return op(SimDisk.OP_NANOS, 2, disk::list);
    }

    private <T> Promise<T> op(long cost, long digest, Supplier<T> action) {
        Promise<T> p = new Promise<>();
        Runnable complete = () -> {
            T v;
            try {
                v = action.get();
            } catch (RuntimeException e) {
                p.fail(e);
                return;
            }
            p.complete(v);
        };
        long delay = disk.completion(cost);
        disk.track(host.sim().now() + delay, host.sim().at(delay, host, Simulation.Kind.DISK, digest, complete), complete, digest);
        return p;
    }
}
