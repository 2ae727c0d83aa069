package dev.cairn.nfs.client;

import dev.cairn.core.async.Promise;
import dev.cairn.nfs.rpc.NfsService;
import dev.cairn.nfs.v4.Nfs4Status;
import dev.cairn.nfs.v4.Op;
import dev.cairn.nfs.xdr.XdrDecoder;
import dev.cairn.nfs.xdr.XdrEncoder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Consumer;

/**
 * A small NFSv4.1 client over the gateway's own XDR code: one session with up to {@link #MAX_SLOTS} slots, so up
 * to that many COMPOUNDs in flight at once (as a kernel client or fio keeps them); more wait for a free slot.
 * Enough to drive a gateway from the simulator and from {@code cairn bench nfs} (open, read, write,
 * commit, locks, directories); not a general client. The transport is a {@link Channel}: in-process in
 * the simulator, a socket with record marking on the real machine. AUTH_SYS as the given uid and gid.
 */
public final class Nfs4Client {
    /** Sends one RPC call record and answers the reply record (record marking is the channel's). */
    public interface Channel {
        Promise<byte[]> call(byte[] record);
    }

    /** A COMPOUND that did not end NFS4_OK: the status and the operation it stopped at. */
    public static final class NfsException extends RuntimeException implements dev.cairn.core.async.Unexpected.Expected {
        public final int status;
        public final int op;

        NfsException(int status, int op) {
            super("NFS4 status " + status + " at operation " + op);
            this.status = status;
            this.op = op;
        }
    }

    /** An open file: its handle and the open stateid (seqid + other). */
    public record OpenFile(byte[] fh, byte[] stateId) {}

    /** A WRITE's answer: bytes taken, how stable (0 UNSTABLE, 1 DATA_SYNC, 2 FILE_SYNC), the write verifier. */
    public record WriteResult(int count, int committed, long verifier) {}

    public static final int UNSTABLE = 0, DATA_SYNC = 1, FILE_SYNC = 2;
    public static final int READ_LT = 1, WRITE_LT = 2;
    static final int ACCESS_READ = 1, ACCESS_WRITE = 2, ACCESS_BOTH = 3;
    static final int MAX_REPLY_TAG = 1024;
    static final int MAX_FH = 128;
    static final int MAX_NAME = 1024;
    static final int MAX_READ = 1 << 20;
    /** The minor version every COMPOUND is sent with: 4.2, as a Linux client mounts by default (4.1 plus SEEK and the optional rest). */
    static final int MINOR_VERSION = 2;

    private final Channel channel;
    private final int uid;
    private final int gid;
    private final byte[] owner;
    private int xid = 1;
    private long clientId;
    private byte[] session;
    /** Slots the client asks the server for (it may grant fewer). */
    public static final int MAX_SLOTS = 32;
    /** Each slot's next sequence id; a slot is busy while a COMPOUND on it is in flight. */
    private int[] slotSeqs = new int[0];
    private boolean[] slotBusy = new boolean[0];
    private final java.util.ArrayDeque<Runnable> waitingForSlot = new java.util.ArrayDeque<>();
    /** The EXCHANGE_ID verifier: new for every connect, as a rebooted client's would be. */
    private long incarnation;

    public Nfs4Client(Channel channel, int uid, int gid, String owner) {
        this.channel = channel;
        this.uid = uid;
        this.gid = gid;
        this.owner = owner.getBytes(StandardCharsets.UTF_8);
    }

    /**
     * EXCHANGE_ID, CREATE_SESSION and RECLAIM_COMPLETE: the client is then ready. Called again after the
     * gateway restarted (BADSESSION, STALE_CLIENTID), it starts over as a new incarnation of this client.
     */
    public Promise<Void> connect() {
        long verifier = ++incarnation;
        return send(false, b -> b.op(Op.EXCHANGE_ID, a -> a.writeLong(verifier).writeOpaque(owner).writeInt(0).writeInt(0).writeInt(0)))
                .flatMap(r -> {
                    XdrDecoder d = r.get(0);
                    clientId = d.readLong();
                    int seq = d.readInt();
                    return send(false, b -> b.op(Op.CREATE_SESSION, a -> {
                        a.writeLong(clientId).writeInt(seq).writeInt(0);
                        for (int ch = 0; ch < 2; ch++) a.writeInt(0).writeInt(MAX_READ + 4096).writeInt(MAX_READ + 4096).writeInt(8192).writeInt(64).writeInt(ch == 0 ? MAX_SLOTS : 1).writeInt(0);
                        a.writeInt(0x40000000).writeInt(1).writeInt(0);
                    }));
                }).flatMap(r -> {
                    XdrDecoder d = r.get(0);
                    session = d.readFixedOpaque(16);
                    d.readInt(); // sequence
                    d.readInt(); // flags
                    for (int i = 0; i < 5; i++) d.readInt(); // header padding, request and reply sizes, cached reply size, operations
                    int slots = Math.max(1, Math.min(MAX_SLOTS, d.readInt()));
                    slotSeqs = new int[slots];
                    java.util.Arrays.fill(slotSeqs, 1);
                    slotBusy = new boolean[slots];
                    return send(true, b -> b.op(Op.RECLAIM_COMPLETE, a -> a.writeBoolean(false)));
                }).then((r, e) -> {
                    // the server already holds this client's reclaim as complete (the same owner and verifier, on a new
                    // connection after an error): nothing to reclaim, which is the point (RFC 8881 §18.51.3); the Linux
                    // client takes it so too
                    if (e == null || e instanceof NfsException n && n.status == dev.cairn.nfs.v4.Nfs4Status.COMPLETE_ALREADY) return Promise.completed(null);
                    return Promise.failed(e);
                });
    }

    /** The handle of a path from the root ("" or "/" is the root). */
    public Promise<byte[]> lookup(String path) {
        return send(true, b -> {
            b.op(Op.PUTROOTFH, a -> {});
            for (String name : path.split("/")) if (!name.isEmpty()) b.op(Op.LOOKUP, a -> a.writeString(name));
            b.op(Op.GETFH, a -> {});
        }).map(r -> r.last().readOpaque(MAX_FH));
    }

    /** OPEN by name in a directory, creating the file (UNCHECKED, mode 0644) if {@code create}, for reading and writing. */
    public Promise<OpenFile> open(byte[] dir, String name, boolean create) {
        return open(dir, name, create, ACCESS_BOTH, 0, "open-" + name);
    }

    public static final int SHARE_ACCESS_READ = 1, SHARE_ACCESS_WRITE = 2, SHARE_ACCESS_BOTH = 3;
    public static final int SHARE_DENY_NONE = 0, SHARE_DENY_READ = 1, SHARE_DENY_WRITE = 2, SHARE_DENY_BOTH = 3;

    /** OPEN with this share access and deny, for open-owner {@code openOwner}. */
    public Promise<OpenFile> open(byte[] dir, String name, boolean create, int access, int deny, String openOwner) {
        return send(true, b -> {
            b.putFh(dir);
            b.op(Op.OPEN, a -> {
                a.writeInt(0).writeInt(access).writeInt(deny).writeLong(clientId).writeOpaque(openOwner.getBytes(StandardCharsets.UTF_8));
                if (create) {
                    a.writeInt(1).writeInt(0); // OPEN4_CREATE, UNCHECKED4
                    a.writeInt(2).writeInt(0).writeInt(1 << 1); // bitmap: word 1 bit 1 = mode (attribute 33)
                    a.writeOpaque(new XdrEncoder().writeInt(0644).toByteArray());
                } else {
                    a.writeInt(0);
                }
                a.writeInt(0).writeString(name); // CLAIM_NULL
            });
            b.op(Op.GETFH, a -> {});
        }).map(r -> {
            XdrDecoder o = r.get(1);
            byte[] sid = o.readFixedOpaque(16);
            return new OpenFile(r.last().readOpaque(MAX_FH), sid);
        });
    }

    /** What an OPEN reply said of a delegation: its open_delegation_type4, and for OPEN_DELEGATE_NONE_EXT (3) why none (else -1). */
    public record Delegation(int type, int whyNone) {}

    /**
     * OPEN of an existing file with {@code shareAccess} sent as given (a 4.1 client's delegation "want" bits and flags
     * included, RFC 8881 §18.16.1), deny none: what the reply says of a delegation. The open is left open.
     */
    public Promise<Delegation> openDelegation(byte[] dir, String name, int shareAccess, String openOwner) {
        return send(true, b -> {
            b.putFh(dir);
            b.op(Op.OPEN, a -> {
                a.writeInt(0).writeInt(shareAccess).writeInt(SHARE_DENY_NONE).writeLong(clientId).writeOpaque(openOwner.getBytes(StandardCharsets.UTF_8));
                a.writeInt(0); // OPEN4_NOCREATE
                a.writeInt(0).writeString(name); // CLAIM_NULL
            });
        }).map(r -> {
            XdrDecoder o = r.last();
            o.readFixedOpaque(16); // stateid
            o.readBoolean(); // change_info4
            o.readLong();
            o.readLong();
            o.readInt(); // rflags
            int words = o.readInt();
            for (int i = 0; i < words; i++) o.readInt(); // attrset
            int type = o.readInt();
            return new Delegation(type, type == 3 ? o.readInt() : -1);
        });
    }

    public Promise<WriteResult> write(OpenFile f, long offset, byte[] data, int stable) {
        return send(true, b -> {
            b.putFh(f.fh());
            b.op(Op.WRITE, a -> a.writeFixedOpaque(f.stateId()).writeLong(offset).writeInt(stable).writeOpaque(data));
        }).map(r -> {
            XdrDecoder d = r.last();
            return new WriteResult(d.readInt(), d.readInt(), d.readLong());
        });
    }

    /** COMMIT of the whole file: answers the write verifier. */
    public Promise<Long> commit(byte[] fh) {
        return send(true, b -> {
            b.putFh(fh);
            b.op(Op.COMMIT, a -> a.writeLong(0).writeInt(0));
        }).map(r -> r.last().readLong());
    }

    /** Up to {@code count} bytes at {@code offset} (fewer at the end of the file). */
    public Promise<byte[]> read(OpenFile f, long offset, int count) {
        return send(true, b -> {
            b.putFh(f.fh());
            b.op(Op.READ, a -> a.writeFixedOpaque(f.stateId()).writeLong(offset).writeInt(count));
        }).map(r -> {
            XdrDecoder d = r.last();
            d.readBoolean(); // eof
            return d.readOpaque(MAX_READ);
        });
    }

    /** A READ_PLUS answer: one segment at most, data ({@code data} set) or a hole of {@code holeLength} bytes. */
    public record ReadPlusResult(boolean eof, long offset, byte[] data, long holeLength) {
        public boolean hole() { return data == null && holeLength > 0; }
    }

    /** READ_PLUS (4.2): the bytes at {@code offset}, or the hole there. */
    public Promise<ReadPlusResult> readPlus(OpenFile f, long offset, int count) {
        return send(true, b -> {
            b.putFh(f.fh());
            b.op(Op.READ_PLUS, a -> a.writeFixedOpaque(f.stateId()).writeLong(offset).writeInt(count));
        }).map(r -> {
            XdrDecoder d = r.last();
            boolean eof = d.readBoolean();
            int segments = d.readInt();
            if (segments == 0) return new ReadPlusResult(eof, offset, new byte[0], 0);
            if (segments != 1) throw new IllegalStateException("READ_PLUS answered " + segments + " segments");
            int what = d.readInt();
            long at = d.readLong();
            return what == 0 ? new ReadPlusResult(eof, at, d.readOpaque(MAX_READ), 0) : new ReadPlusResult(eof, at, null, d.readLong());
        });
    }

    /** Where SEEK found it: {@code offset}, and whether that is the end of the file. */
    public record SeekResult(long offset, boolean eof) {}

    /** SEEK (4.2) for the next data ({@code data}) or hole at or after {@code offset}; NXIO as an {@link NfsException}. */
    public Promise<SeekResult> seek(OpenFile f, long offset, boolean data) {
        return send(true, b -> {
            b.putFh(f.fh());
            b.op(Op.SEEK, a -> a.writeFixedOpaque(f.stateId()).writeLong(offset).writeInt(data ? 0 : 1));
        }).map(r -> {
            XdrDecoder d = r.last();
            boolean eof = d.readBoolean();
            return new SeekResult(d.readLong(), eof);
        });
    }

    /** DEALLOCATE (4.2): {@code length} bytes at {@code offset} read as zeros, the size unchanged. */
    public Promise<Void> deallocate(OpenFile f, long offset, long length) {
        return send(true, b -> {
            b.putFh(f.fh());
            b.op(Op.DEALLOCATE, a -> a.writeFixedOpaque(f.stateId()).writeLong(offset).writeLong(length));
        }).map(r -> null);
    }

    public Promise<Void> close(OpenFile f) {
        return send(true, b -> {
            b.putFh(f.fh());
            b.op(Op.CLOSE, a -> a.writeInt(0).writeFixedOpaque(f.stateId()));
        }).map(r -> null);
    }

    /** SETATTR of the size through an open (truncate or extend). */
    public Promise<Void> truncate(OpenFile f, long size) {
        return send(true, b -> {
            b.putFh(f.fh());
            b.op(Op.SETATTR, a -> {
                a.writeFixedOpaque(f.stateId());
                a.writeInt(1).writeInt(1 << 4); // bitmap: attribute 4, size
                a.writeOpaque(new XdrEncoder().writeLong(size).toByteArray());
            });
        }).map(r -> null);
    }

    /** The file's size (GETATTR size). */
    public Promise<Long> size(byte[] fh) { return longAttribute(fh, 4); }

    /** The fileid attribute (GETATTR fileid). */
    public Promise<Long> fileId(byte[] fh) { return longAttribute(fh, 20); }

    /** One 64-bit attribute of the first bitmap word (change 3, size 4, …), as GETATTR answers it. */
    private Promise<Long> longAttribute(byte[] fh, int attribute) {
        assert attribute < 32;
        return send(true, b -> {
            b.putFh(fh);
            b.op(Op.GETATTR, a -> a.writeInt(1).writeInt(1 << attribute));
        }).map(r -> {
            XdrDecoder d = r.last();
            for (int i = 0, words = d.readInt(); i < words; i++) d.readInt();
            d.readInt(); // attribute bytes
            return d.readLong();
        });
    }

    /** RENAME in one directory: its change_info4 for the source and target, {before, after} each. */
    public Promise<long[]> rename(byte[] dir, String from, String to) {
        return send(true, b -> {
            b.putFh(dir);
            b.op(Op.SAVEFH, a -> { });
            b.putFh(dir);
            b.op(Op.RENAME, a -> a.writeString(from).writeString(to));
        }).map(r -> {
            XdrDecoder d = r.last();
            long[] out = new long[4];
            for (int i = 0; i < 2; i++) {
                d.readBoolean();
                out[2 * i] = d.readLong();
                out[2 * i + 1] = d.readLong();
            }
            return out;
        });
    }

    /** LINK: a second name {@code name} in {@code dir} for the file {@code fh}. */
    public Promise<Void> link(byte[] fh, byte[] dir, String name) {
        return send(true, b -> {
            b.putFh(fh);
            b.op(Op.SAVEFH, a -> { });
            b.putFh(dir);
            b.op(Op.LINK, a -> a.writeString(name));
        }).map(r -> null);
    }

    /** ACCESS of the rights in {@code mask}: {supported, granted}. */
    public Promise<int[]> access(byte[] fh, int mask) {
        return send(true, b -> {
            b.putFh(fh);
            b.op(Op.ACCESS, a -> a.writeInt(mask));
        }).map(r -> {
            XdrDecoder d = r.last();
            return new int[] {d.readInt(), d.readInt()};
        });
    }

    /** The change attribute (GETATTR change). */
    public Promise<Long> change(byte[] fh) { return longAttribute(fh, 3); }

    /** The bitmap of attributes the server supports (GETATTR supported_attrs) and the xattr_support attribute (RFC 8276), if answered. */
    public record Supported(int[] attributes, Boolean xattrSupport) {}

    public Promise<Supported> supported(byte[] fh) {
        return send(true, b -> {
            b.putFh(fh);
            b.op(Op.GETATTR, a -> a.writeInt(3).writeInt(1).writeInt(0).writeInt(1 << (82 - 64))); // attributes 0 and 82
        }).map(r -> {
            XdrDecoder d = r.last();
            int[] answered = new int[d.readInt()];
            for (int i = 0; i < answered.length; i++) answered[i] = d.readInt();
            d.readInt(); // attribute bytes
            int[] words = new int[d.readInt()];
            for (int i = 0; i < words.length; i++) words[i] = d.readInt();
            boolean hasXattr = answered.length > 2 && (answered[2] & (1 << (82 - 64))) != 0;
            return new Supported(words, hasXattr ? d.readBoolean() : null);
        });
    }

    /** GETXATTR (RFC 8276): the value of extended attribute {@code name}; NOXATTR as an {@link NfsException}. */
    public Promise<byte[]> getXattr(byte[] fh, String name) {
        return send(true, b -> {
            b.putFh(fh);
            b.op(Op.GETXATTR, a -> a.writeString(name));
        }).map(r -> r.last().readOpaque(MAX_READ));
    }

    /** SETXATTR with {@code option} (0 either, 1 create, 2 replace): the object's change_info4 {before, after}. */
    public Promise<long[]> setXattr(byte[] fh, String name, byte[] value, int option) {
        return send(true, b -> {
            b.putFh(fh);
            b.op(Op.SETXATTR, a -> a.writeInt(option).writeString(name).writeOpaque(value));
        }).map(r -> changeInfo(r.last()));
    }

    /** REMOVEXATTR: the object's change_info4 {before, after}. */
    public Promise<long[]> removeXattr(byte[] fh, String name) {
        return send(true, b -> {
            b.putFh(fh);
            b.op(Op.REMOVEXATTR, a -> a.writeString(name));
        }).map(r -> changeInfo(r.last()));
    }

    /** One page of LISTXATTRS: the names, the cookie for the next page, and whether this was the last. */
    public record XattrNames(List<String> names, long cookie, boolean eof) {}

    public Promise<XattrNames> listXattrs(byte[] fh, long cookie, int maxCount) {
        return send(true, b -> {
            b.putFh(fh);
            b.op(Op.LISTXATTRS, a -> a.writeLong(cookie).writeInt(maxCount));
        }).map(r -> {
            XdrDecoder d = r.last();
            long next = d.readLong();
            List<String> names = new ArrayList<>();
            for (int i = 0, n = d.readInt(); i < n; i++) names.add(d.readString(MAX_NAME));
            return new XattrNames(names, next, d.readBoolean());
        });
    }

    private static long[] changeInfo(XdrDecoder d) {
        d.readBoolean();
        return new long[] {d.readLong(), d.readLong()};
    }

    /** The cluster's space as GETATTR space_total, space_free, space_avail and files_total answer it, in that order. */
    public Promise<long[]> space(byte[] fh) {
        return send(true, b -> {
            b.putFh(fh);
            b.op(Op.GETATTR, a -> a.writeInt(2).writeInt(1 << 23).writeInt((1 << (42 - 32)) | (1 << (43 - 32)) | (1 << (44 - 32))));
        }).map(r -> {
            XdrDecoder d = r.last();
            int words = d.readInt();
            for (int i = 0; i < words; i++) d.readInt();
            d.readInt(); // attribute bytes
            long filesTotal = d.readLong(), avail = d.readLong(), free = d.readLong(), total = d.readLong();
            return new long[] {total, free, avail, filesTotal};
        });
    }

    /**
     * LOCK for a new lock owner through an open: answers the lock stateid, or fails with status DENIED
     * (another owner holds a conflicting lock).
     */
    public Promise<byte[]> lock(OpenFile f, String lockOwner, int type, long offset, long length) {
        return send(true, b -> {
            b.putFh(f.fh());
            b.op(Op.LOCK, a -> {
                a.writeInt(type).writeBoolean(false).writeLong(offset).writeLong(length).writeBoolean(true);
                a.writeInt(0).writeFixedOpaque(f.stateId()).writeInt(0).writeLong(clientId).writeOpaque(lockOwner.getBytes(StandardCharsets.UTF_8));
            });
        }).map(r -> r.last().readFixedOpaque(16));
    }

    /** LOCKT: true if the lock would be granted to {@code lockOwner}. */
    public Promise<Boolean> lockFree(byte[] fh, String lockOwner, int type, long offset, long length) {
        return send(true, b -> {
            b.putFh(fh);
            b.op(Op.LOCKT, a -> a.writeInt(type).writeLong(offset).writeLong(length).writeLong(clientId).writeOpaque(lockOwner.getBytes(StandardCharsets.UTF_8)));
        }).then((r, e) -> {
            if (e instanceof NfsException n && n.status == Nfs4Status.DENIED) return Promise.completed(false);
            return e == null ? Promise.completed(true) : Promise.failed(e);
        });
    }

    /** LOCKU: answers the lock stateid's next version. */
    public Promise<byte[]> unlock(byte[] fh, byte[] lockStateId, long offset, long length) {
        return send(true, b -> {
            b.putFh(fh);
            b.op(Op.LOCKU, a -> a.writeInt(WRITE_LT).writeInt(0).writeFixedOpaque(lockStateId).writeLong(offset).writeLong(length));
        }).map(r -> r.last().readFixedOpaque(16));
    }

    /** mkdir: the new directory's handle. */
    public Promise<byte[]> mkdir(byte[] dir, String name) {
        return create(dir, name, NF4DIR, 0, 0, 0755);
    }

    /** nfs_ftype4 values (RFC 7530 §3.2). */
    public static final int NF4REG = 1, NF4DIR = 2, NF4BLK = 3, NF4CHR = 4, NF4LNK = 5, NF4SOCK = 6, NF4FIFO = 7;

    /** CREATE of a directory or a special file (devices take {@code major}:{@code minor}); the new object's handle. */
    public Promise<byte[]> create(byte[] dir, String name, int type, int major, int minor, int mode) {
        return send(true, b -> {
            b.putFh(dir);
            b.op(Op.CREATE, a -> {
                a.writeInt(type);
                if (type == NF4BLK || type == NF4CHR) a.writeInt(major).writeInt(minor);
                a.writeString(name).writeInt(2).writeInt(0).writeInt(1 << 1).writeOpaque(new XdrEncoder().writeInt(mode).toByteArray());
            });
            b.op(Op.GETFH, a -> {});
        }).map(r -> r.last().readOpaque(MAX_FH));
    }

    /** What kind of object a handle names: its nfs_ftype4 and (for a device) its number. */
    public record Kind(int type, int major, int minor) {}

    /** GETATTR type and rawdev. */
    public Promise<Kind> kind(byte[] fh) {
        return send(true, b -> {
            b.putFh(fh);
            b.op(Op.GETATTR, a -> a.writeInt(2).writeInt(1 << 1).writeInt(1 << (41 - 32))); // attributes 1 (type), 41 (rawdev)
        }).map(r -> {
            XdrDecoder d = r.last();
            int words = d.readInt();
            for (int i = 0; i < words; i++) d.readInt();
            d.readInt(); // attribute bytes
            return new Kind(d.readInt(), d.readInt(), d.readInt());
        });
    }

    public Promise<Void> remove(byte[] dir, String name) {
        return send(true, b -> {
            b.putFh(dir);
            b.op(Op.REMOVE, a -> a.writeString(name));
        }).map(r -> null);
    }

    /** Every name in a directory (READDIR with no attributes, page by page). */
    public Promise<List<String>> list(byte[] dir) {
        List<String> names = new ArrayList<>();
        return listFrom(dir, 0, new byte[8], names).map(v -> names);
    }

    private Promise<Void> listFrom(byte[] dir, long cookie, byte[] verifier, List<String> names) {
        return send(true, b -> {
            b.putFh(dir);
            b.op(Op.READDIR, a -> a.writeLong(cookie).writeFixedOpaque(verifier).writeInt(8192).writeInt(32768).writeInt(0));
        }).flatMap(r -> {
            XdrDecoder d = r.last();
            byte[] verf = d.readFixedOpaque(8);
            long last = cookie;
            while (d.readBoolean()) {
                last = d.readLong();
                names.add(d.readString(MAX_NAME));
                int words = d.readInt();
                for (int i = 0; i < words; i++) d.readInt();
                d.readOpaque(1 << 16);
            }
            boolean eof = d.readBoolean();
            return eof ? Promise.<Void>completed(null) : listFrom(dir, last, verf, names);
        });
    }

    // ---------------------------------------------------------------- COMPOUND plumbing

    /** Builds a COMPOUND's operations. */
    public final class Builder {
        final XdrEncoder ops = new XdrEncoder();
        final List<Integer> numbers = new ArrayList<>();

        public Builder op(int op, Consumer<XdrEncoder> args) {
            ops.writeInt(op);
            args.accept(ops);
            numbers.add(op);
            return this;
        }

        public Builder putFh(byte[] fh) { return op(Op.PUTFH, a -> a.writeOpaque(fh)); }

        /**
         * {@code count} operations already encoded, numbers and arguments, as they come (a probe or a fuzzer's input):
         * the COMPOUND counts them, but this client cannot read their results past an operation it does not know.
         */
        public Builder raw(int count, byte[] encoded) {
            ops.writeRaw(encoded);
            for (int i = 0; i < count; i++) numbers.add(-1);
            return this;
        }
    }

    /**
     * Sends any operations (after SEQUENCE) and answers the COMPOUND's status, for probing the server's
     * rules; results the client cannot read past end the reading, not the call.
     */
    public Promise<Integer> statusOf(Consumer<Builder> build) {
        return send(true, build).then((r, e) -> {
            if (e instanceof NfsException n) return Promise.completed(n.status);
            return e == null ? Promise.completed(Nfs4Status.NFS4_OK) : Promise.failed(e);
        });
    }

    /** A successful COMPOUND's results: one decoder per operation (SEQUENCE left out), positioned at its body. */
    record Results(List<XdrDecoder> bodies) {
        XdrDecoder get(int i) { return bodies.get(i); }

        XdrDecoder last() { return bodies.get(bodies.size() - 1); }
    }

    /**
     * Sends one COMPOUND (led by SEQUENCE when {@code sequenced}); fails with {@link NfsException} unless it
     * ends NFS4_OK. Each result body is skipped by its known shape, so every operation's body gets its own
     * decoder.
     */
    private Promise<Results> send(boolean sequenced, Consumer<Builder> build) {
        if (!sequenced) return send(-1, build);
        assert session != null : "connect() first";
        for (int slot = 0; slot < slotBusy.length; slot++) if (!slotBusy[slot]) return send(slot, build);
        // every slot is in use: this COMPOUND goes when one is free
        Promise<Results> out = new Promise<>();
        waitingForSlot.add(() -> send(true, build).onComplete((r, e) -> {
            if (e != null) out.fail(e); else out.complete(r);
        }));
        return out;
    }

    private Promise<Results> send(int slot, Consumer<Builder> build) {
        boolean sequenced = slot >= 0;
        Builder b = new Builder();
        if (sequenced) {
            int highest = slotBusy.length - 1;
            b.op(Op.SEQUENCE, a -> a.writeFixedOpaque(session).writeInt(slotSeqs[slot]).writeInt(slot).writeInt(highest).writeBoolean(false));
            slotBusy[slot] = true;
        }
        build.accept(b);
        XdrEncoder call = new XdrEncoder(b.ops.size() + 128);
        call.writeInt(xid++).writeInt(0).writeInt(2).writeInt(NfsService.NFS_PROGRAM).writeInt(NfsService.NFS_V4).writeInt(NfsService.PROC_COMPOUND);
        XdrEncoder cred = new XdrEncoder().writeInt(0).writeString("cairn-client").writeInt(uid).writeInt(gid).writeInt(0);
        call.writeInt(1).writeOpaque(cred.toByteArray()).writeInt(0).writeInt(0);
        call.writeString("").writeInt(MINOR_VERSION).writeInt(b.numbers.size()).writeRaw(b.ops);
        byte[] sessionAtSend = session;
        return channel.call(call.toByteArray()).then((reply, e) -> {
            boolean sameSession = sequenced && sessionAtSend == session && slot < slotBusy.length;
            try {
                if (e != null) return Promise.failed(e);
                Results r = parse(reply, b.numbers, sequenced);
                if (sameSession) slotSeqs[slot]++;
                return Promise.completed(r);
            } catch (NfsException n) {
                if (sameSession && n.op != Op.SEQUENCE) slotSeqs[slot]++; // SEQUENCE took it: the slot moved on
                return Promise.failed(n);
            } finally {
                if (sameSession) {
                    slotBusy[slot] = false;
                    Runnable next = waitingForSlot.poll();
                    if (next != null) next.run();
                }
            }
        });
    }

    private static Results parse(byte[] reply, List<Integer> numbers, boolean sequenced) {
        XdrDecoder d = new XdrDecoder(reply);
        d.readInt(); // xid
        d.readInt(); // REPLY
        if (d.readInt() != 0) throw new NfsException(Nfs4Status.ACCESS, -1); // MSG_DENIED
        d.readInt();
        d.readOpaque(400);
        int accept = d.readInt();
        if (accept != 0) throw new NfsException(Nfs4Status.BADXDR, -1);
        int status = d.readInt();
        d.readOpaque(MAX_REPLY_TAG);
        int n = d.readInt();
        List<XdrDecoder> bodies = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            int op = d.readInt();
            int s = d.readInt();
            if (s != Nfs4Status.NFS4_OK) throw new NfsException(s, op);
            int start = d.position();
            skip(d, op);
            if (!(sequenced && i == 0)) bodies.add(new XdrDecoder(reply, start, d.position() - start));
        }
        if (status != Nfs4Status.NFS4_OK) throw new NfsException(status, numbers.get(Math.min(n, numbers.size() - 1)));
        return new Results(bodies);
    }

    /** Moves past an operation's NFS4_OK result body (the operations this client sends). */
    private static void skip(XdrDecoder d, int op) {
        switch (op) {
            case Op.SEQUENCE -> d.skip(16 + 5 * 4);
            case Op.EXCHANGE_ID -> {
                d.readLong();
                d.readInt();
                d.readInt();
                d.readInt(); // SP4_NONE
                d.readLong();
                d.readOpaque(MAX_NAME);
                d.readOpaque(MAX_NAME);
                int impls = d.readInt();
                for (int i = 0; i < impls; i++) {
                    d.readOpaque(MAX_NAME);
                    d.readOpaque(MAX_NAME);
                    d.readLong();
                    d.readInt();
                }
            }
            case Op.CREATE_SESSION -> {
                d.skip(16 + 8);
                for (int ch = 0; ch < 2; ch++) {
                    d.skip(6 * 4);
                    int rdma = d.readInt();
                    d.skip(4 * rdma);
                }
            }
            case Op.GETFH -> d.readOpaque(MAX_FH);
            case Op.OPEN -> {
                d.skip(16 + 4 + 16 + 4); // stateid, change_info4, rflags
                int words = d.readInt();
                d.skip(4 * words);
                int deleg = d.readInt();
                if (deleg == 3) { // OPEN_DELEGATE_NONE_EXT: why, and for two reasons a bool
                    int why = d.readInt();
                    if (why == 1 || why == 2) d.readBoolean();
                } else if (deleg != 0) {
                    throw new NfsException(Nfs4Status.NOTSUPP, op); // this client takes no delegations
                }
            }
            case Op.WRITE -> d.skip(4 + 4 + 8);
            case Op.COMMIT -> d.skip(8);
            case Op.SEEK -> d.skip(4 + 8);
            case Op.READ -> {
                d.readBoolean();
                d.readOpaque(MAX_READ);
            }
            case Op.READ_PLUS -> {
                d.readBoolean();
                for (int i = 0, n = d.readInt(); i < n; i++) {
                    int what = d.readInt();
                    d.readLong();
                    if (what == 0) d.readOpaque(MAX_READ); else d.readLong();
                }
            }
            case Op.CLOSE, Op.LOCK, Op.LOCKU -> d.skip(16);
            case Op.GETATTR -> {
                int words = d.readInt();
                d.skip(4 * words);
                d.readOpaque(1 << 16);
            }
            case Op.CREATE -> {
                d.skip(4 + 16);
                int words = d.readInt();
                d.skip(4 * words);
            }
            case Op.REMOVE, Op.SETXATTR, Op.REMOVEXATTR -> d.skip(4 + 16);
            case Op.GETXATTR -> d.readOpaque(MAX_READ);
            case Op.LISTXATTRS -> {
                d.readLong();
                for (int i = 0, n = d.readInt(); i < n; i++) d.readOpaque(MAX_NAME);
                d.readBoolean();
            }
            case Op.ACCESS -> d.skip(8);
            case Op.RENAME -> d.skip(2 * (4 + 16));
            case Op.LINK -> d.skip(4 + 16);
            case Op.READDIR -> {
                d.skip(8);
                while (d.readBoolean()) {
                    d.readLong();
                    d.readOpaque(MAX_NAME);
                    int words = d.readInt();
                    d.skip(4 * words);
                    d.readOpaque(1 << 16);
                }
                d.readBoolean();
            }
            default -> { } // PUTFH, PUTROOTFH, LOOKUP, RECLAIM_COMPLETE, LOCKT: no body
        }
    }
}
