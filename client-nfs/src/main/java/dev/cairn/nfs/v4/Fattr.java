package dev.cairn.nfs.v4;

import dev.cairn.core.proto.Types.AttrChange;
import dev.cairn.core.proto.Types.FileAttr;
import dev.cairn.core.proto.Types.DeviceNumber;
import dev.cairn.core.proto.Types.FileType;
import dev.cairn.nfs.fs.ClusterFs;
import dev.cairn.nfs.xdr.XdrDecoder;
import dev.cairn.nfs.xdr.XdrEncoder;
import dev.cairn.nfs.xdr.XdrException;

/**
 * fattr4 (RFC 8881 §5): the attributes the gateway supports, encoded for GETATTR and READDIR, and
 * decoded for SETATTR, CREATE and OPEN. {@link #supported} is exactly what {@link #encode} can write
 * and {@link #decodeSettable} can take, so FATTR4_SUPPORTED_ATTRS tells the truth.
 */
public final class Fattr {
    public static final int SUPPORTED_ATTRS = 0, TYPE = 1, FH_EXPIRE_TYPE = 2, CHANGE = 3, SIZE = 4, LINK_SUPPORT = 5,
            SYMLINK_SUPPORT = 6, NAMED_ATTR = 7, FSID = 8, UNIQUE_HANDLES = 9, LEASE_TIME = 10, RDATTR_ERROR = 11,
            CANSETTIME = 15, CASE_INSENSITIVE = 16, CASE_PRESERVING = 17, CHOWN_RESTRICTED = 18, FILEHANDLE = 19, FILEID = 20,
            FILES_AVAIL = 21, FILES_FREE = 22, FILES_TOTAL = 23, HOMOGENEOUS = 26, MAXFILESIZE = 27, MAXLINK = 28, MAXNAME = 29, MAXREAD = 30, MAXWRITE = 31, MODE = 33, NO_TRUNC = 34,
            NUMLINKS = 35, OWNER = 36, OWNER_GROUP = 37, RAWDEV = 41, SPACE_AVAIL = 42, SPACE_FREE = 43, SPACE_TOTAL = 44, SPACE_USED = 45, TIME_ACCESS = 47, TIME_ACCESS_SET = 48,
            TIME_DELTA = 51, TIME_METADATA = 52, TIME_MODIFY = 53, TIME_MODIFY_SET = 54, MOUNTED_ON_FILEID = 55,
            SUPPATTR_EXCLCREAT = 75, XATTR_SUPPORT = 82;

    /** Attributes we return (GETATTR, READDIR), in ascending order. */
    private static final int[] READABLE = {SUPPORTED_ATTRS, TYPE, FH_EXPIRE_TYPE, CHANGE, SIZE, LINK_SUPPORT, SYMLINK_SUPPORT, NAMED_ATTR,
            FSID, UNIQUE_HANDLES, LEASE_TIME, RDATTR_ERROR, CANSETTIME, CASE_INSENSITIVE, CASE_PRESERVING, CHOWN_RESTRICTED, FILEHANDLE,
            FILEID, FILES_AVAIL, FILES_FREE, FILES_TOTAL, HOMOGENEOUS, MAXFILESIZE, MAXLINK, MAXNAME, MAXREAD, MAXWRITE, MODE, NO_TRUNC,
            NUMLINKS, OWNER, OWNER_GROUP, RAWDEV, SPACE_AVAIL, SPACE_FREE, SPACE_TOTAL, SPACE_USED, TIME_ACCESS, TIME_DELTA, TIME_METADATA, TIME_MODIFY, MOUNTED_ON_FILEID, SUPPATTR_EXCLCREAT, XATTR_SUPPORT};
    /** Attributes a client may set. */
    private static final int[] SETTABLE = {SIZE, MODE, OWNER, OWNER_GROUP, TIME_ACCESS_SET, TIME_MODIFY_SET};
    /** Settable at an exclusive create (EXCLUSIVE4_1): not the times, which some servers keep the verifier in. */
    private static final int[] EXCL_SETTABLE = {SIZE, MODE, OWNER, OWNER_GROUP};

    /** FH4_PERSISTENT: handles never expire (they hold inode ids, which are never reused). */
    static final int FH4_PERSISTENT = 0;
    public static final int NF4REG = 1, NF4DIR = 2, NF4BLK = 3, NF4CHR = 4, NF4LNK = 5, NF4SOCK = 6, NF4FIFO = 7;
    static final int SET_TO_CLIENT_TIME = 1;
    /** Largest READ and WRITE (also the session's channel limits are sized for it). */
    public static final int MAX_IO = 1 << 20;
    static final int MAX_NAME = 255;
    static final int MAX_LINK = 65_000;
    static final int MAX_OWNER = 1024;

    private Fattr() {}

    /** The context attributes need besides the file's own: the server, the handle, the minor version, the cluster's space. */
    public record Context(long fsid, int leaseSeconds, byte[] handle, int minorVersion, java.util.function.Supplier<ClusterFs.Space> space) {}

    /**
     * Files the cluster can hold, as files_total and files_avail say: inode ids are 64-bit and the master's
     * namespace has no fixed table, so no count runs out before space does; this is what df shows as inodes.
     */
    static final long FILES_LIMIT = 1L << 40;
    /** Words of an attribute bitmap read at most: attributes past them are unknown to every minor version here. */
    static final int MAX_BITMAP_WORDS = 8;

    public static int[] supported(int minorVersion) {
        int[] words = new int[3];
        // suppattr_exclcreat is 4.1's; xattr_support is RFC 8276's (an extension of 4.2), told to 4.1 as well since
        // the xattr operations are served there too (Nfs4Server.admissible)
        for (int a : READABLE) if ((a != SUPPATTR_EXCLCREAT && a != XATTR_SUPPORT) || minorVersion >= 1) set(words, a);
        for (int a : SETTABLE) set(words, a);
        return words;
    }

    public static boolean isSet(int[] words, int attr) {
        int w = attr / 32;
        return w < words.length && (words[w] & (1 << (attr % 32))) != 0;
    }

    static void set(int[] words, int attr) { words[attr / 32] |= 1 << (attr % 32); }

    public static void writeBitmap(XdrEncoder e, int[] words) {
        int n = words.length;
        while (n > 0 && words[n - 1] == 0) n--;
        e.writeInt(n);
        for (int i = 0; i < n; i++) e.writeInt(words[i]);
    }

    /** Writes fattr4 (bitmap, then the values) for the attributes requested that we support. */
    public static void encode(XdrEncoder e, int[] requested, FileAttr a, Context ctx) {
        int[] supported = supported(ctx.minorVersion());
        int[] answered = new int[3];
        for (int attr : READABLE) if (isSet(requested, attr) && isSet(supported, attr)) set(answered, attr);
        writeBitmap(e, answered);
        int lengthAt = e.mark();
        int start = e.size();
        for (int attr : READABLE) {
            if (!isSet(answered, attr)) continue;
            switch (attr) {
                case SUPPORTED_ATTRS -> writeBitmap(e, supported);
                case TYPE -> e.writeInt(nfsType(a.type()));
                case FH_EXPIRE_TYPE -> e.writeInt(FH4_PERSISTENT);
                case CHANGE -> e.writeLong(a.change());
                case SIZE -> e.writeLong(a.size());
                case LINK_SUPPORT, SYMLINK_SUPPORT, UNIQUE_HANDLES, CANSETTIME, CASE_PRESERVING, CHOWN_RESTRICTED, HOMOGENEOUS, NO_TRUNC -> e.writeBoolean(true);
                case NAMED_ATTR, CASE_INSENSITIVE -> e.writeBoolean(false);
                case FSID -> { e.writeLong(ctx.fsid()); e.writeLong(0); }
                case LEASE_TIME -> e.writeInt(ctx.leaseSeconds());
                case RDATTR_ERROR -> e.writeInt(Nfs4Status.NFS4_OK);
                case FILEHANDLE -> e.writeOpaque(ctx.handle());
                case FILEID, MOUNTED_ON_FILEID -> e.writeLong(a.inode());
                case MAXFILESIZE -> e.writeLong(ClusterFs.MAX_FILE_SIZE);
                case MAXLINK -> e.writeInt(MAX_LINK);
                case MAXNAME -> e.writeInt(MAX_NAME);
                case MAXREAD, MAXWRITE -> e.writeLong(MAX_IO);
                case MODE -> e.writeInt(a.mode());
                case NUMLINKS -> e.writeInt(a.nlink());
                case OWNER -> e.writeString(Integer.toUnsignedString(a.uid()));
                case OWNER_GROUP -> e.writeString(Integer.toUnsignedString(a.gid()));
                case RAWDEV -> {
                    DeviceNumber rdev = DeviceNumber.of(a.type(), a.target());
                    e.writeInt(rdev.major()).writeInt(rdev.minor());
                }
                case SPACE_USED -> e.writeLong(a.type() == FileType.FILE ? roundUp(a.size(), 4096) : 4096);
                case SPACE_TOTAL -> e.writeLong(ctx.space().get().totalBytes());
                case SPACE_FREE, SPACE_AVAIL -> e.writeLong(ctx.space().get().freeBytes()); // no quotas or reserve: all free is available
                case FILES_TOTAL, FILES_FREE, FILES_AVAIL -> e.writeLong(FILES_LIMIT);
                case TIME_ACCESS -> writeTime(e, a.atimeMillis());
                case TIME_DELTA -> writeTime(e, 1);
                case TIME_METADATA -> writeTime(e, a.ctimeMillis());
                case TIME_MODIFY -> writeTime(e, a.mtimeMillis());
                case XATTR_SUPPORT -> e.writeBoolean(true);
                case SUPPATTR_EXCLCREAT -> {
                    int[] excl = new int[3];
                    for (int s : EXCL_SETTABLE) set(excl, s);
                    writeBitmap(e, excl);
                }
                default -> throw new AssertionError("attribute " + attr + " listed but not encoded");
            }
        }
        e.patchInt(lengthAt, e.size() - start);
    }

    public static int nfsType(FileType t) {
        return switch (t) {
            case FILE -> NF4REG;
            case DIR -> NF4DIR;
            case SYMLINK -> NF4LNK;
            case FIFO -> NF4FIFO;
            case SOCKET -> NF4SOCK;
            case CHAR_DEVICE -> NF4CHR;
            case BLOCK_DEVICE -> NF4BLK;
        };
    }

    private static long roundUp(long v, long to) { return (v + to - 1) / to * to; }

    private static void writeTime(XdrEncoder e, long millis) {
        e.writeLong(Math.floorDiv(millis, 1000));
        e.writeInt((int) Math.floorMod(millis, 1000) * 1_000_000);
    }

    /** What a client asked to set; {@code status} is not OK if the request cannot be honoured as a whole. */
    public record Settable(int status, AttrChange change, int[] bitmap) {}

    /**
     * Reads a fattr4 a client sends to set attributes. An attribute we do not support is ATTRNOTSUPP; one
     * we support but that cannot be set is INVAL; a malformed value is BADXDR (thrown), an unknown owner
     * BADOWNER. {@code now} is the gateway's wall time for SET_TO_SERVER_TIME.
     */
    public static Settable decodeSettable(XdrDecoder d, long now, boolean exclusive) {
        int[] bitmap = readBitmap(d);
        byte[] vals = d.readOpaque(64 * 1024);
        XdrDecoder v = new XdrDecoder(vals);
        int mode = AttrChange.KEEP, uid = AttrChange.KEEP, gid = AttrChange.KEEP;
        long size = AttrChange.KEEP, atime = AttrChange.KEEP, mtime = AttrChange.KEEP;
        boolean sizeSet = false;
        int[] settable = new int[3];
        for (int s : exclusive ? EXCL_SETTABLE : SETTABLE) set(settable, s);
        int[] readable = supported(1);
        for (int attr = 0; attr < bitmap.length * 32; attr++) {
            if (!isSet(bitmap, attr)) continue;
            if (!isSet(settable, attr)) {
                int status = isSet(readable, attr) ? Nfs4Status.INVAL : Nfs4Status.ATTRNOTSUPP;
                return new Settable(status, AttrChange.NONE, new int[0]);
            }
            switch (attr) {
                case SIZE -> {
                    size = v.readLong();
                    sizeSet = true;
                }
                case MODE -> mode = v.readInt() & 07777;
                case OWNER -> uid = owner(v.readString(MAX_OWNER));
                case OWNER_GROUP -> gid = owner(v.readString(MAX_OWNER));
                case TIME_ACCESS_SET -> atime = readSetTime(v, now);
                case TIME_MODIFY_SET -> mtime = readSetTime(v, now);
                default -> throw new AssertionError(attr);
            }
            if (atime == BAD_TIME || mtime == BAD_TIME) return new Settable(Nfs4Status.INVAL, AttrChange.NONE, new int[0]);
            if (uid == EMPTY_OWNER || gid == EMPTY_OWNER) return new Settable(Nfs4Status.INVAL, AttrChange.NONE, new int[0]);
            if (uid == BAD_OWNER || gid == BAD_OWNER) return new Settable(Nfs4Status.BADOWNER, AttrChange.NONE, new int[0]);
        }
        // attr_vals holds exactly the values the bitmap names: anything left over is malformed (RFC 7530 §16.32.4)
        if (v.remaining() != 0) throw new XdrException(v.remaining() + " bytes after the attribute values");
        // size is unsigned on the wire: past the largest file (2^64-1 included, which must not read as "keep") is FBIG
        if (sizeSet && (size < 0 || size > ClusterFs.MAX_FILE_SIZE)) return new Settable(Nfs4Status.FBIG, AttrChange.NONE, new int[0]);
        return new Settable(Nfs4Status.NFS4_OK, new AttrChange(mode, uid, gid, size, atime, mtime), bitmap);
    }

    /** Whether a bitmap names a write-only attribute (the *_SET times): GETATTR, READDIR and VERIFY answer INVAL. */
    public static boolean namesWriteOnly(int[] bitmap) { return isSet(bitmap, TIME_ACCESS_SET) || isSet(bitmap, TIME_MODIFY_SET); }

    /**
     * A bitmap4 of up to {@link #MAX_BITMAP_WORDS} words: bits of attributes this server does not know are kept as
     * sent (GETATTR answers without them, SETATTR refuses them ATTRNOTSUPP), never a decoding error.
     */
    public static int[] readBitmap(XdrDecoder d) {
        int n = d.readLength(MAX_BITMAP_WORDS, "bitmap");
        int[] words = new int[Math.max(n, 3)];
        for (int i = 0; i < n; i++) words[i] = d.readInt();
        return words;
    }

    private static final int BAD_OWNER = -2;
    /** Stands for an empty owner string: not a name at all, so INVAL rather than BADOWNER (RFC 8881 §5.9). */
    private static final int EMPTY_OWNER = -3;
    /** Stands for a time whose nanoseconds are out of range. */
    private static final long BAD_TIME = Long.MIN_VALUE;

    /** "1000", "1000@domain", "root@domain" or "nobody": numeric ids as Linux sends them with sec=sys. An empty one is INVAL. */
    static int owner(String s) {
        if (s.isEmpty()) return EMPTY_OWNER;
        String name = s.indexOf('@') >= 0 ? s.substring(0, s.indexOf('@')) : s;
        if (name.equals("root")) return 0;
        if (name.equals("nobody")) return 65534;
        try {
            long id = Long.parseLong(name);
            return id >= 0 && id < 0xFFFF_FFFFL ? (int) id : BAD_OWNER;
        } catch (NumberFormatException e) {
            return BAD_OWNER;
        }
    }

    private static long readSetTime(XdrDecoder v, long now) {
        int how = v.readInt();
        if (how != SET_TO_CLIENT_TIME) {
            if (how != 0) throw new XdrException("time_how4 " + how);
            return now;
        }
        long sec = v.readLong();
        int nsec = v.readInt();
        if (nsec < 0 || nsec >= 1_000_000_000) return BAD_TIME; // a well-formed but impossible time: INVAL
        return sec * 1000 + nsec / 1_000_000;
    }
}
