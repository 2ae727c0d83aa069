package dev.cairn.nfs.v4.op;

import dev.cairn.core.async.Promise;
import dev.cairn.core.proto.CairnException;
import dev.cairn.core.proto.MasterProtocol;
import dev.cairn.core.proto.Types.AttrChange;
import dev.cairn.core.proto.Types.FileAttr;
import dev.cairn.core.proto.Types.FileType;
import dev.cairn.nfs.fs.ClusterFs;
import dev.cairn.nfs.rpc.Credentials;
import dev.cairn.nfs.v4.CompoundState;
import dev.cairn.nfs.v4.FileHandle;
import dev.cairn.nfs.v4.Nfs4Status;
import dev.cairn.nfs.v4.Operation;
import dev.cairn.nfs.v4.state.StateTable;
import dev.cairn.nfs.v4.state.StateTable.StateId;
import dev.cairn.nfs.xdr.XdrDecoder;
import dev.cairn.nfs.xdr.XdrEncoder;
import java.nio.charset.StandardCharsets;

/** What the file operations share: errors from the cluster as nfsstat4, names, permissions, change_info4, stateids. */
final class Files {
    static final int ACCESS4_READ = 0x01, ACCESS4_LOOKUP = 0x02, ACCESS4_MODIFY = 0x04, ACCESS4_EXTEND = 0x08, ACCESS4_DELETE = 0x10,
            ACCESS4_EXECUTE = 0x20;
    /** RFC 8276 §8.3: reading, writing and listing extended attributes. */
    static final int ACCESS4_XAREAD = 0x40, ACCESS4_XAWRITE = 0x80, ACCESS4_XALIST = 0x100;
    static final int MAX_NAME_BYTES = 255;
    static final int MAX_LINKTEXT = 4096;

    private Files() {}

    static ClusterFs fs(CompoundState st) { return st.server.fs(); }

    /**
     * A cluster error as the status NFS gives it. A missing inode behind a handle is STALE; a missing name
     * is NOENT (the master's detail for an inode lookup starts with "inode ").
     */
    static int status(Throwable e) {
        if (!(e instanceof CairnException c)) return Nfs4Status.SERVERFAULT;
        return switch (c.status()) {
            case OK -> Nfs4Status.NFS4_OK;
            // the master's "inode N": the file is gone (the handle is stale); a chunk a copy no longer holds while data
            // is written or read is an I/O error of a file that still exists (STALE would make a client drop the file)
            case NOT_FOUND -> CairnException.detailOf(c).startsWith("inode ") ? Nfs4Status.STALE
                    : CairnException.detailOf(c).startsWith("chunk ") ? Nfs4Status.IO
                    : CairnException.detailOf(c).startsWith("xattr ") ? Nfs4Status.NOXATTR : Nfs4Status.NOENT;
            case EXISTS -> Nfs4Status.EXIST;
            case NOT_DIR -> Nfs4Status.NOTDIR;
            case IS_DIR -> Nfs4Status.ISDIR;
            case NOT_EMPTY -> Nfs4Status.NOTEMPTY;
            case NO_SPACE -> Nfs4Status.NOSPC;
            case BAD_REQUEST -> Nfs4Status.INVAL;
            case IO, CORRUPT -> Nfs4Status.IO;
            case STALE, BUSY, UNAVAILABLE, EXPIRED, NOT_LEADER -> Nfs4Status.DELAY;
        };
    }

    /** Maps a cluster call's failure to its status; on success runs {@code then}. */
    static <T> Promise<Integer> call(Promise<T> p, java.util.function.Function<T, Integer> then) {
        return p.then((v, e) -> Promise.completed(e == null ? then.apply(v) : status(e)));
    }

    /**
     * A component4 naming something to create: INVAL if empty or not UTF-8, NAMETOOLONG, BADNAME for "." "..",
     * '/' or NUL; null if fine.
     */
    static Integer badName(String name) {
        if (name.isEmpty() || name == NOT_UTF8) return Nfs4Status.INVAL;
        if (name.getBytes(StandardCharsets.UTF_8).length > MAX_NAME_BYTES) return Nfs4Status.NAMETOOLONG;
        if (isDots(name) || name.indexOf('/') >= 0 || name.indexOf('\0') >= 0) return Nfs4Status.BADNAME;
        return null;
    }

    private static boolean isDots(String name) { return name.equals(".") || name.equals(".."); }

    /**
     * Stands for a component4 that is not valid UTF-8, which {@link #badName} answers INVAL: RFC 8881 §14.4 and
     * RFC 7530 §12.7 give the operation that error (the COMPOUND's XDR is fine). Compared by identity: no
     * decoded name is this instance.
     */
    @SuppressWarnings("StringOperationCanBeSimplified")
    private static final String NOT_UTF8 = new String("\uFFFD");

    /**
     * Reads a component4; names longer than the limit are read (so the status is NAMETOOLONG, not BADXDR),
     * and one that is not UTF-8 comes back as {@link #NOT_UTF8}.
     */
    static String readName(XdrDecoder d) {
        String name = d.readUtf8OrNull(64 * 1024);
        return name == null ? NOT_UTF8 : name;
    }

    /** The permission bits (rwx as 4/2/1) the caller has on a file, POSIX style: owner, else group, else other; root has all but x without any x bit. */
    static int permissions(Credentials c, FileAttr a) {
        if (c.uid() == 0) return 6 | ((a.mode() & 0111) != 0 || a.type() == FileType.DIR ? 1 : 0);
        if (c.uid() == a.uid()) return (a.mode() >> 6) & 7;
        if (inGroup(c, a.gid())) return (a.mode() >> 3) & 7;
        return a.mode() & 7;
    }

    /**
     * Whether a caller may give an object it creates these owners ({@link AttrChange#KEEP}: its own). Create attributes
     * are applied as SETATTR would apply them (RFC 7530 §16.16.4, RFC 8881 §18.16.3), so they take SETATTR's ownership
     * rules: root any, anyone else only its own uid and a group it is in. Without this a user could create a file owned
     * by root, set-user-id bit and all.
     */
    static boolean mayCreateOwned(Credentials c, int uid, int gid) {
        if (c.uid() == 0) return true;
        return (uid == AttrChange.KEEP || uid == c.uid()) && (gid == AttrChange.KEEP || inGroup(c, gid));
    }

    static boolean inGroup(Credentials c, int gid) {
        if (c.gid() == gid) return true;
        for (int g : c.gids()) if (g == gid) return true;
        return false;
    }

    static boolean mayWrite(Credentials c, FileAttr a) { return (permissions(c, a) & 2) != 0; }

    static boolean mayRead(Credentials c, FileAttr a) { return (permissions(c, a) & 4) != 0; }

    static boolean maySearch(Credentials c, FileAttr a) { return (permissions(c, a) & 1) != 0; }

    /** change_info4; not atomic: other changes may fall between the two counters we report. */
    static void writeChangeInfo(XdrEncoder e, FileAttr dirAfter) {
        e.writeBoolean(false);
        e.writeLong(dirAfter.change() - 1);
        e.writeLong(dirAfter.change());
    }

    /**
     * change_info4 from the directory as read before the operation and as it is after (not atomic: another change
     * may fall between): equal values say nothing changed, as for a rename of a name onto itself or onto another
     * name of the same file, which POSIX leaves alone (RFC 7530 §16.26.4).
     */
    static void writeChangeInfo(XdrEncoder e, FileAttr dirBefore, FileAttr dirAfter) {
        e.writeBoolean(false);
        e.writeLong(Math.min(dirBefore.change(), dirAfter.change()));
        e.writeLong(dirAfter.change());
    }

    static FileHandle handle(CompoundState st, long inode) { return new FileHandle(st.server.rootHandle().fsid(), inode, 0); }

    static StateId readStateId(XdrDecoder d) {
        int seqid = d.readInt();
        return new StateId(seqid, d.readFixedOpaque(12));
    }

    static void writeStateId(XdrEncoder e, StateId id) {
        e.writeInt(id.seqid());
        e.writeFixedOpaque(id.other());
    }

    /**
     * The stateid a READ, WRITE or SETATTR presents, checked against the current file: the special ones
     * pass; an open's, or a lock stateid's open, must be of this file and allow the access. Null if fine,
     * else the status.
     */
    /**
     * The special "current stateid" (RFC 8881 §16.2.3.1.2) as the stateid the COMPOUND's last stateid-giving
     * operation left; unchanged if none is set (it then names nothing: BAD_STATEID where it is looked up).
     */
    static StateId resolveCurrent(CompoundState st, StateId id) {
        return id.isCurrent() && st.currentStateId != null ? st.currentStateId : id;
    }

    /**
     * The client a stateid presented in this COMPOUND must belong to: the session's (RFC 8881 §8.2.4: a stateid
     * of another client is BAD_STATEID), or {@link StateTable#ANY_CLIENT} in 4.0, whose requests do not say
     * which client sends them.
     */
    static long requester(CompoundState st) { return st.client() == null ? StateTable.ANY_CLIENT : st.client().id(); }

    /**
     * The checks READ, WRITE and SEEK share before they touch a file's data: the stateid allows {@code access}, the
     * file is a regular one (ISDIR, INVAL for others), and an anonymous stateid's caller may read or write it (ACCESS);
     * then {@code then} runs with the file's attributes.
     */
    /**
     * READ and READ_PLUS: their arguments (stateid, offset, count), the checks they share, and the read (at most
     * {@link dev.cairn.nfs.v4.Fattr#MAX_IO} bytes, within one chunk); {@code answer} writes the result body.
     */
    static Promise<Integer> read(CompoundState st, XdrDecoder d, java.util.function.BiFunction<Long, ClusterFs.ReadResult, Integer> answer) {
        StateId sid = readStateId(d);
        long offset = d.readLong();
        int count = d.readInt();
        if (st.current == null) return Operation.status(Nfs4Status.NOFILEHANDLE);
        if (offset < 0) return Operation.status(Nfs4Status.INVAL);
        long ino = st.current.inode();
        int n = (int) Math.min(Integer.toUnsignedLong(count), dev.cairn.nfs.v4.Fattr.MAX_IO);
        return withDataAccess(st, sid, ino, StateTable.ACCESS_READ, a -> call(fs(st).read(ino, offset, n), r -> answer.apply(offset, r)));
    }

    static Promise<Integer> withDataAccess(CompoundState st, StateId sid, long ino, int access,
                                           java.util.function.Function<FileAttr, Promise<Integer>> then) {
        return withDataAccess(st, sid, ino, access, () -> fs(st).attrForIo(ino), a -> a, then);
    }

    /** As above, with the attributes taken from what {@code fetch} answers (WRITE: the file made ready for it). */
    static <T> Promise<Integer> withDataAccess(CompoundState st, StateId sid, long ino, int access, java.util.function.Supplier<Promise<T>> fetch,
                                               java.util.function.Function<T, FileAttr> attrOf, java.util.function.Function<T, Promise<Integer>> then) {
        Integer bad = checkStateId(st, sid, ino, access);
        if (bad != null) return Operation.status(bad);
        return fetch.get().then((t, e) -> {
            if (e != null) return Operation.status(status(e));
            FileAttr a = attrOf.apply(t);
            if (a.type() == FileType.DIR) return Operation.status(Nfs4Status.ISDIR);
            if (a.type() != FileType.FILE) return Operation.status(Nfs4Status.INVAL);
            boolean allowed = access == StateTable.ACCESS_WRITE ? mayWrite(st.credentials, a) : mayRead(st.credentials, a);
            if (sid.isSpecial() && !allowed) return Operation.status(Nfs4Status.ACCESS);
            return then.apply(t);
        });
    }

    static Integer checkStateId(CompoundState st, StateId id, long inode, int access) {
        if (id.isCurrent() && st.currentStateId == null) return Nfs4Status.BAD_STATEID;
        id = resolveCurrent(st, id);
        if (id.isSpecial()) {
            // no open of its own, so another's share reservation holds it off (RFC 7530 §9.1.4.3); the bypass
            // stateid may read past them
            boolean bypassRead = id.isBypass() && access == StateTable.ACCESS_READ;
            return !bypassRead && st.server.states().denied(inode, access) ? Integer.valueOf(Nfs4Status.LOCKED) : null;
        }
        int[] status = new int[1];
        StateTable.Open o = st.server.states().resolve(id, st.minorVersion, Files.requester(st), status);
        if (o == null) return status[0];
        if (o.inode != inode) return Nfs4Status.BAD_STATEID;
        if ((o.access & access) == 0) return Nfs4Status.OPENMODE;
        return null;
    }

    /**
     * Runs {@code then} with directory {@code dir}'s attributes once it is known to be a directory the caller
     * may search (and, with {@code write}, change): else the status (NOTDIR, SYMLINK for a symlink, ACCESS, STALE).
     */
    static Promise<Integer> inDirectory(CompoundState st, long dir, boolean write, java.util.function.Function<FileAttr, Promise<Integer>> then) {
        return fs(st).getAttr(dir).then((da, e) -> {
            if (e != null) return Promise.completed(status(e));
            if (da.type() == FileType.SYMLINK) return Promise.completed(Nfs4Status.SYMLINK);
            if (da.type() != FileType.DIR) return Promise.completed(Nfs4Status.NOTDIR);
            if (!maySearch(st.credentials, da) || (write && !mayWrite(st.credentials, da))) return Promise.completed(Nfs4Status.ACCESS);
            return then.apply(da);
        });
    }

    /**
     * Runs {@code then} once the current handle is known to be a regular file; else the status the lock
     * operations give: ISDIR, SYMLINK or WRONG_TYPE (INVAL in 4.0), STALE.
     */
    static Promise<Integer> regularFile(CompoundState st, java.util.function.Supplier<Promise<Integer>> then) {
        return fs(st).getAttr(st.current.inode()).then((a, e) -> {
            if (e != null) return Promise.completed(status(e));
            return switch (a.type()) {
                case FILE -> then.get();
                case DIR -> Promise.completed(Nfs4Status.ISDIR);
                case SYMLINK -> Promise.completed(st.minorVersion == 0 ? Nfs4Status.INVAL : Nfs4Status.SYMLINK);
                case FIFO, SOCKET, CHAR_DEVICE, BLOCK_DEVICE -> Promise.completed(st.minorVersion == 0 ? Nfs4Status.INVAL : Nfs4Status.WRONG_TYPE);
            };
        });
    }

    /**
     * Reads the name of an entry that must exist in the current directory and runs {@code then(dir, name)}
     * once the handle, the name and the directory check out (NOFILEHANDLE, {@link #badName}: "." and ".." are
     * BADNAME here too, as the conformance suites expect of LOOKUP and REMOVE, since NFSv4 has no such entries,
     * {@link #inDirectory}'s rules, with write rights if {@code write}).
     */
    static Promise<Integer> existingEntry(CompoundState st, XdrDecoder d, boolean write,
                                          java.util.function.BiFunction<Long, String, Promise<Integer>> then) {
        String name = readName(d);
        if (st.current == null) return Promise.completed(Nfs4Status.NOFILEHANDLE);
        Integer bad = badName(name);
        if (bad != null) return Promise.completed(bad);
        long dir = st.current.inode();
        return inDirectory(st, dir, write, da -> then.apply(dir, name));
    }

    /** The sticky bit (S_ISVTX) of a directory's mode. */
    static final int STICKY = 01000;

    /**
     * Runs {@code then} unless the caller may not remove or replace entry {@code name} of directory {@code dir} because
     * the directory is sticky (mode 1777, as /tmp): there only root, the directory's owner and the entry's owner may
     * (POSIX; knfsd answers PERM, as the kernel's EPERM). A missing entry is left to {@code then} to report.
     * The check and the change are two master calls: an entry replaced in between by someone who may replace it is
     * judged as it was.
     */
    static Promise<Integer> unlessStickyForbids(CompoundState st, FileAttr dirAttr, long dir, String name,
                                                java.util.function.Supplier<Promise<Integer>> then) {
        Credentials c = st.credentials;
        if ((dirAttr.mode() & STICKY) == 0 || c.uid() == 0 || c.uid() == dirAttr.uid()) return then.get();
        return fs(st).lookup(dir, name).then((a, e) -> {
            if (e == null && a.uid() != c.uid()) return Promise.completed(Nfs4Status.PERM);
            return then.get();
        });
    }

    /**
     * An extended attribute's name (xattrkey4, a component4) as GETXATTR, SETXATTR and REMOVEXATTR carry it: INVAL if
     * empty, not UTF-8 or holding NUL, NAMETOOLONG past {@link MasterProtocol#MAX_XATTR_NAME_BYTES}; null if fine. Any
     * other byte is allowed ('/' too: an xattr's name is no path).
     */
    static Integer badXattrName(String name) {
        if (name.isEmpty() || name == NOT_UTF8 || name.indexOf('\0') >= 0) return Nfs4Status.INVAL;
        return name.getBytes(StandardCharsets.UTF_8).length > MasterProtocol.MAX_XATTR_NAME_BYTES ? Integer.valueOf(Nfs4Status.NAMETOOLONG) : null;
    }

    /**
     * Runs {@code then} with the current object's attributes once the caller may read its extended attributes (list
     * them), or with {@code write}, change them: the object's read or write permission, as ACCESS's XAREAD, XALIST and
     * XAWRITE report them (RFC 8276 §8.3); else ACCESS, or STALE for an object that is gone.
     */
    static Promise<Integer> withXattrAccess(CompoundState st, boolean write, java.util.function.Function<FileAttr, Promise<Integer>> then) {
        return fs(st).getAttr(st.current.inode()).then((a, e) -> {
            if (e != null) return Promise.completed(status(e));
            boolean allowed = write ? mayWrite(st.credentials, a) : mayRead(st.credentials, a);
            return allowed ? then.apply(a) : Promise.completed(Nfs4Status.ACCESS);
        });
    }

    /**
     * GETXATTR's and REMOVEXATTR's shared start: reads the name, checks the handle, the name and the caller's right to
     * read (or with {@code write}, change) the object's extended attributes, then runs {@code then(inode, name)}.
     */
    static Promise<Integer> namedXattr(CompoundState st, XdrDecoder d, boolean write, java.util.function.BiFunction<Long, String, Promise<Integer>> then) {
        String name = readName(d);
        if (st.current == null) return Promise.completed(Nfs4Status.NOFILEHANDLE);
        Integer bad = badXattrName(name);
        if (bad != null) return Promise.completed(bad);
        long ino = st.current.inode();
        return withXattrAccess(st, write, a -> then.apply(ino, name));
    }

    /** The current handle's inode, or the status when there is none. */
    static Integer noFh(CompoundState st) { return st.current == null ? Nfs4Status.NOFILEHANDLE : null; }
}
