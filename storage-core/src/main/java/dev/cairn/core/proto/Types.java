package dev.cairn.core.proto;

import dev.cairn.core.env.Address;

/** Value records shared by the protocols. */
public final class Types {
    private Types() {}

    /**
     * Append only: the ordinal is on the wire and in the metadata store. The special files (FIFO, SOCKET,
     * CHAR_DEVICE, BLOCK_DEVICE) are names only: no data, created through NFS (mkfifo, mknod, a bound socket).
     */
    public enum FileType {
        FILE, DIR, SYMLINK, FIFO, SOCKET, CHAR_DEVICE, BLOCK_DEVICE;

        public boolean isDevice() { return this == CHAR_DEVICE || this == BLOCK_DEVICE; }
    }

    /**
     * A device file's number (NFS specdata4, stat's st_rdev), kept in the inode's text field as
     * "major:minor" (the field that holds a symlink's target), since no other kind of file uses it.
     */
    public record DeviceNumber(int major, int minor) {
        public static final DeviceNumber NONE = new DeviceNumber(0, 0);

        public String text() { return Integer.toUnsignedString(major) + ":" + Integer.toUnsignedString(minor); }

        /** Parses {@link #text()}; null if {@code s} is not two unsigned 32-bit numbers joined by a colon. */
        public static DeviceNumber parse(String s) {
            int colon = s.indexOf(':');
            if (colon <= 0 || colon == s.length() - 1 || s.length() > 21) return null;
            try {
                return new DeviceNumber(Integer.parseUnsignedInt(s, 0, colon, 10), Integer.parseUnsignedInt(s, colon + 1, s.length(), 10));
            } catch (NumberFormatException e) {
                return null;
            }
        }

        /** The device number of a file with these attributes: NONE unless it is a device. */
        public static DeviceNumber of(FileType type, String text) {
            if (!type.isDevice()) return NONE;
            DeviceNumber d = parse(text);
            return d == null ? NONE : d;
        }
    }

    /** A chunkserver by identity and address. */
    public record ServerRef(String id, Address address) {}

    /**
     * Where a chunkserver sits, for failure domains and placement: its host and rack (from its config;
     * the host defaults to the server id) and the label of its disks (e.g. ssd, hdd; empty for none).
     */
    public record Topology(String host, String rack, String disk) {
        public static final int MAX_LABEL = 64;

        public Topology {
            for (String l : new String[] {host, rack}) {
                if (l == null || l.isEmpty() || l.length() > MAX_LABEL) throw new IllegalArgumentException("topology labels are 1.." + MAX_LABEL + " characters");
            }
            if (disk == null || disk.length() > MAX_LABEL) throw new IllegalArgumentException("disk label over " + MAX_LABEL + " characters");
        }

        public static Topology of(String serverId) { return new Topology(serverId, "rack0", ""); }
    }

    /**
     * One chunk a chunkserver holds: version, durable length, part index (0 for a replica); {@code bad}: found
     * corrupt there (never served; to be repaired elsewhere, then deleted); {@code writable}: a lease's write
     * window on it is still open here (a master that restarted does not know of the lease, and must keep off
     * the chunk until the window has closed).
     */
    public record ChunkReport(long chunkId, long version, long length, int part, boolean bad, boolean writable) {
        public ChunkReport(long chunkId, long version, long length, int part) { this(chunkId, version, length, part, false, false); }

        public ChunkReport(long chunkId, long version, long length, int part, boolean bad) { this(chunkId, version, length, part, bad, false); }
    }

    /**
     * A disk's health as its chunkserver sees it: FULL after ENOSPC (no new chunks; its chunks stay),
     * FAILED after an I/O error or failed fsync (its chunks are gone and reported lost), SLOW when the
     * master has judged its latency far above its peers' (no new chunks; reads prefer other copies).
     */
    public enum DiskState { OK, SLOW, FULL, FAILED }

    /**
     * @param latencyMicros recent I/O latency on this disk (a moving average, or the age of its oldest
     *                      unfinished call if that is longer: a stalled disk completes nothing)
     * @param quarantined chunk files kept aside on this disk (no valid header, or a part that lost to another
     *                    part of its chunk): never served, for an operator to look at ({@code cairn fsck})
     */
    public record DiskReport(String name, DiskState state, long latencyMicros, int chunks, long usedBytes, int quarantined) {
        public DiskReport(String name, DiskState state, long latencyMicros, int chunks, long usedBytes) {
            this(name, state, latencyMicros, chunks, usedBytes, 0);
        }
    }

    /**
     * What a file, directory or symlink is. Times are wall-clock milliseconds of the master that made the
     * change (informational: nothing in Cairn orders events by them).
     *
     * @param mode      permission bits (07777), not the type
     * @param nlink     names the inode has (a directory: 2 plus its subdirectories)
     * @param change    bumped by every change to the inode (content, attributes, entries of a directory);
     *                  never goes back, so NFS clients can trust it to invalidate their caches
     * @param parent    the directory holding it (for a file with several names, the one it was created in)
     * @param target    a symlink's target ("" otherwise)
     */
    public record FileAttr(long inode, FileType type, long size, long mtimeMillis, int chunkSize, StorageClass storageClass,
                           int mode, int uid, int gid, int nlink, long atimeMillis, long ctimeMillis, long change, long parent, String target) {}

    /** Stands in for "no attributes" in error replies (the wire has no nulls). */
    public static final FileAttr NO_ATTR = new FileAttr(0, FileType.FILE, 0, 0, 0, StorageClass.DEFAULT, 0, 0, 0, 0, 0, 0, 0, 0, "");

    public record DirEntry(String name, FileAttr attr) {}

    /** A directory entry with its READDIR cookie: stable while the entry exists, and never reused. */
    public record DirCookieEntry(String name, long cookie, FileAttr attr) {}

    /**
     * Attributes to change ({@link #KEEP} leaves one as it is). {@code fromSize}, if not KEEP, makes a size
     * change conditional: it applies only if the file's size is still that (STALE otherwise), so a writer that
     * zero-filled the file's last chunk from that size before growing it never grows a file someone else has
     * changed since.
     */
    public record AttrChange(int mode, int uid, int gid, long size, long atimeMillis, long mtimeMillis, long fromSize) {
        public static final int KEEP = -1;
        /**
         * As a mode: the file's mode without its set-user-id bit, and without its set-group-id bit where group execute
         * is set (without it, the bit marks mandatory locking, not privilege), taken from the mode the master holds
         * when it applies the change: what a write by anyone but root, or a change of owner, does to a file (Linux's
         * VFS and knfsd). Ignored for a directory, whose set-group-id bit is inherited, not a privilege.
         */
        public static final int DROP_SET_ID = -2;
        public static final int SET_UID = 04000, SET_GID = 02000, GROUP_EXEC = 00010;
        public static final AttrChange NONE = new AttrChange(KEEP, KEEP, KEEP, KEEP, KEEP, KEEP);

        /** {@code mode} as {@link #DROP_SET_ID} leaves it. */
        public static int withoutSetId(int mode) {
            int out = mode & ~SET_UID;
            return (out & GROUP_EXEC) != 0 ? out & ~SET_GID : out;
        }

        /** Whether {@link #DROP_SET_ID} would change {@code mode}. */
        public static boolean hasSetId(int mode) { return withoutSetId(mode) != mode; }

        public AttrChange(int mode, int uid, int gid, long size, long atimeMillis, long mtimeMillis) {
            this(mode, uid, gid, size, atimeMillis, mtimeMillis, KEEP);
        }

        public AttrChange withSize(long s) { return new AttrChange(mode, uid, gid, s, atimeMillis, mtimeMillis, fromSize); }

        /** The same change, its size change applying only to a file of size {@code from}. */
        public AttrChange fromSize(long from) { return new AttrChange(mode, uid, gid, size, atimeMillis, mtimeMillis, from); }
    }

    /** A chunk and the lease version a writer wrote it at. */
    public record ChunkVersion(long chunkId, long version) {}

    /**
     * One chunk of a file: the version to read it at and the live servers holding a current copy at that
     * version (the newest such version); for an erasure-coded chunk {@code parts.get(i)} is the part that
     * {@code servers.get(i)} holds. The first {@code fast} servers have no disk judged slow (the slow ones come after
     * them): readers spread their reads over those and ask the others only when those fail or stall.
     */
    public record ChunkLocation(int index, long chunkId, long version, java.util.List<ServerRef> servers, java.util.List<Integer> parts, int fast) {
        public ChunkLocation {
            if (fast < 0 || fast > servers.size()) throw new IllegalArgumentException("fast " + fast + " of " + servers.size() + " servers");
        }
    }
}
