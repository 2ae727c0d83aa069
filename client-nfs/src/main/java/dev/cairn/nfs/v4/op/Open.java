package dev.cairn.nfs.v4.op;

import dev.cairn.core.async.Promise;
import dev.cairn.core.proto.Types.AttrChange;
import dev.cairn.core.proto.Types.FileAttr;
import dev.cairn.core.proto.Types.FileType;
import dev.cairn.nfs.v4.CompoundState;
import dev.cairn.nfs.v4.Fattr;
import dev.cairn.nfs.v4.Nfs4Status;
import dev.cairn.nfs.v4.Operation;
import dev.cairn.nfs.v4.state.OwnerSequences;
import dev.cairn.nfs.v4.state.StateTable;
import dev.cairn.nfs.v4.state.StateTable.StateId;
import dev.cairn.nfs.xdr.XdrDecoder;
import dev.cairn.nfs.xdr.XdrEncoder;

/**
 * OPEN (RFC 8881 §18.16, RFC 7530 §16.16): CLAIM_NULL (by name in the current directory, creating with
 * UNCHECKED4, GUARDED4, EXCLUSIVE4 or EXCLUSIVE4_1), CLAIM_FH and CLAIM_PREVIOUS (the current handle is the
 * file; reclaims after a gateway restart, whose open state was in memory). No delegations are given.
 * Access is checked against the mode bits, except for a file this OPEN created.
 */
public final class Open implements Operation {
    static final int NOCREATE = 0, CREATE = 1;
    static final int UNCHECKED4 = 0, GUARDED4 = 1, EXCLUSIVE4 = 2, EXCLUSIVE4_1 = 3;
    static final int CLAIM_NULL = 0, CLAIM_PREVIOUS = 1, CLAIM_DELEGATE_CUR = 2, CLAIM_DELEGATE_PREV = 3, CLAIM_FH = 4,
            CLAIM_DELEG_CUR_FH = 5, CLAIM_DELEG_PREV_FH = 6;
    static final int OPEN4_RESULT_CONFIRM = 2, OPEN4_RESULT_LOCKTYPE_POSIX = 4;
    static final int OPEN_DELEGATE_NONE = 0, OPEN_DELEGATE_NONE_EXT = 3;
    /** RFC 8881 §18.16.1: the "want" field of a 4.1 share_access (bits 8-15), and the flags above it. */
    static final int WANT_DELEG_MASK = 0xFF00, WANT_NO_PREFERENCE = 0, WANT_NO_DELEG = 0x0400, WANT_CANCEL = 0x0500;
    /** WANT_SIGNAL_DELEG_WHEN_RESRC_AVAIL, WANT_PUSH_DELEG_WHEN_UNCONTENDED, and the delstid draft's two (RFC 9754). */
    static final int WANT_FLAGS = 0x10000 | 0x20000 | 0x100000 | 0x200000;
    /** why_no_delegation4: the client asked for no delegation; one could not be given; the want was a cancel. */
    static final int WND4_NOT_WANTED = 0, WND4_RESOURCE = 2, WND4_CANCELLED = 7;

    /** What the arguments asked for. */
    private record Request(int seqid, int access, int deny, long clientId, byte[] owner, boolean create, int how, Fattr.Settable attrs, long verifier,
                           int claim, String name) {}

    @Override public Promise<Integer> execute(CompoundState st, XdrDecoder d, XdrEncoder res) {
        Request r = decode(st, d);
        if (st.current == null) return Operation.status(Nfs4Status.NOFILEHANDLE);
        long clientId;
        if (st.minorVersion >= 1) {
            clientId = st.client().id();
        } else {
            int cs = st.server.checkClient40(r.clientId());
            if (cs != Nfs4Status.NFS4_OK) return Operation.status(cs);
            clientId = r.clientId();
            Promise<Integer> answered = Sequencing.check(st, OwnerSequences.openOwner(clientId, r.owner()), dev.cairn.nfs.v4.Op.OPEN, r.seqid(), res);
            if (answered != null) return answered;
        }
        int g = st.server.grace().admit(st.minorVersion >= 1 ? st.client() : st.server.clients().client(clientId), r.claim() == CLAIM_PREVIOUS);
        if (g != Nfs4Status.NFS4_OK) return Operation.status(g);
        // RFC 8881 §18.51.3: a 4.1 client sends RECLAIM_COMPLETE before its first non-reclaim OPEN, even with
        // nothing to reclaim; until then new opens get GRACE (as knfsd does)
        if (st.minorVersion >= 1 && r.claim() != CLAIM_PREVIOUS && !st.client().reclaimComplete()) return Operation.status(Nfs4Status.GRACE);
        if (r.attrs() != null && r.attrs().status() != Nfs4Status.NFS4_OK) return Operation.status(r.attrs().status());
        int access = r.access() & StateTable.ACCESS_BOTH;
        if (access == 0 || r.deny() < 0 || r.deny() > StateTable.ACCESS_BOTH) return Operation.status(Nfs4Status.INVAL);
        if (st.minorVersion >= 1) {
            // 4.1's delegation wants: a want past WANT_CANCEL, or a flag no version defines, is not a request at all
            int rest = r.access() & ~(StateTable.ACCESS_BOTH | WANT_DELEG_MASK | WANT_FLAGS);
            if (rest != 0 || (r.access() & WANT_DELEG_MASK) > WANT_CANCEL) return Operation.status(Nfs4Status.INVAL);
        }
        if (st.export.readOnly() && (r.create() || (access & StateTable.ACCESS_WRITE) != 0)) return Operation.status(Nfs4Status.ROFS);
        return switch (r.claim()) {
            case CLAIM_NULL -> byName(st, res, r, access, clientId);
            case CLAIM_FH, CLAIM_PREVIOUS -> {
                if (r.create()) yield Operation.status(Nfs4Status.INVAL);
                long ino = st.current.inode();
                yield Files.fs(st).attrForOpen(ino).then((a, e) -> e != null ? Operation.status(Files.status(e))
                        : Promise.completed(opened(st, res, r, access, clientId, a, null, false, new int[3])));
            }
            case CLAIM_DELEGATE_CUR, CLAIM_DELEGATE_PREV, CLAIM_DELEG_CUR_FH, CLAIM_DELEG_PREV_FH ->
                    Operation.status(st.minorVersion == 0 ? Nfs4Status.RECLAIM_BAD : Nfs4Status.NOTSUPP);
            default -> Operation.status(Nfs4Status.INVAL);
        };
    }

    private Request decode(CompoundState st, XdrDecoder d) {
        int seqid = d.readInt(); // 4.0: the open-owner's sequence (Sequencing); ignored in 4.1
        int access = d.readInt();
        int deny = d.readInt();
        long clientId = d.readLong();
        byte[] owner = d.readOpaque(StateTable.MAX_OWNER_BYTES);
        boolean create = false;
        int how = -1;
        Fattr.Settable attrs = null;
        long verifier = 0;
        int opentype = d.readInt();
        if (opentype == CREATE) {
            create = true;
            how = d.readInt();
            long now = st.server.clock().wallMillis();
            switch (how) {
                case UNCHECKED4, GUARDED4 -> attrs = Fattr.decodeSettable(d, now, false);
                case EXCLUSIVE4 -> verifier = d.readLong();
                case EXCLUSIVE4_1 -> {
                    verifier = d.readLong();
                    attrs = Fattr.decodeSettable(d, now, true);
                }
                default -> throw new dev.cairn.nfs.xdr.XdrException("createmode4 " + how);
            }
        } else if (opentype != NOCREATE) {
            throw new dev.cairn.nfs.xdr.XdrException("opentype4 " + opentype);
        }
        int claim = d.readInt();
        String name = null;
        switch (claim) {
            case CLAIM_NULL, CLAIM_DELEGATE_PREV -> name = Files.readName(d);
            case CLAIM_PREVIOUS -> d.readInt();
            case CLAIM_DELEGATE_CUR -> { Files.readStateId(d); name = Files.readName(d); }
            case CLAIM_DELEG_CUR_FH -> Files.readStateId(d);
            case CLAIM_FH, CLAIM_DELEG_PREV_FH -> { }
            default -> throw new dev.cairn.nfs.xdr.XdrException("open_claim_type4 " + claim);
        }
        // a verifier of 0 would mean "no verifier" at the master: make it non-zero, deterministically
        if ((how == EXCLUSIVE4 || how == EXCLUSIVE4_1) && verifier == 0) verifier = 1;
        return new Request(seqid, access, deny, clientId, owner, create, how, attrs, verifier, claim, name);
    }

    private Promise<Integer> byName(CompoundState st, XdrEncoder res, Request r, int access, long clientId) {
        Integer bad = Files.badName(r.name());
        if (bad != null) return Operation.status(bad);
        long dir = st.current.inode();
        return Files.fs(st).getAttr(dir).then((da, e) -> {
            if (e != null) return Operation.status(Files.status(e));
            if (da.type() == FileType.SYMLINK) return Operation.status(Nfs4Status.SYMLINK);
            if (da.type() != FileType.DIR) return Operation.status(Nfs4Status.NOTDIR);
            if (!Files.maySearch(st.credentials, da)) return Operation.status(Nfs4Status.ACCESS);
            if (!r.create()) {
                return Files.fs(st).lookupForOpen(dir, r.name()).then((a, e2) -> e2 != null ? Operation.status(Files.status(e2))
                        : Promise.completed(opened(st, res, r, access, clientId, a, da, false, new int[3])));
            }
            if (!Files.mayWrite(st.credentials, da)) {
                // no right to create: an existing file may still be opened (UNCHECKED4)
                return Files.fs(st).lookup(dir, r.name()).then((a, e2) -> e2 != null ? Operation.status(Nfs4Status.ACCESS)
                        : r.how() == UNCHECKED4 ? truncateThenOpen(st, res, r, access, clientId, a, da) : Operation.status(Nfs4Status.EXIST));
            }
            AttrChange c = r.attrs() == null ? AttrChange.NONE : r.attrs().change();
            if (!Files.mayCreateOwned(st.credentials, c.uid(), c.gid())) return Operation.status(Nfs4Status.PERM);
            int mode = c.mode() != AttrChange.KEEP ? c.mode() : 0644;
            int uid = c.uid() != AttrChange.KEEP ? c.uid() : st.credentials.uid();
            int gid = c.gid() != AttrChange.KEEP ? c.gid() : st.credentials.gid();
            boolean exclusive = r.how() == EXCLUSIVE4 || r.how() == EXCLUSIVE4_1;
            return Files.fs(st).create(dir, r.name(), FileType.FILE, mode, uid, gid, "", exclusive ? r.verifier() : 0).then((cr, e2) -> {
                if (e2 == null) {
                    int[] set = r.attrs() == null ? new int[3] : r.attrs().bitmap();
                    // what the create itself does not take (a size, times) is set on the new file before it is opened:
                    // createattrs are the file's attributes once OPEN answers, and attrset says they all were
                    AttrChange rest = new AttrChange(AttrChange.KEEP, AttrChange.KEEP, AttrChange.KEEP, c.size() > 0 ? c.size() : AttrChange.KEEP,
                            c.atimeMillis(), c.mtimeMillis());
                    if (rest.equals(AttrChange.NONE)) return Promise.completed(opened(st, res, r, access, clientId, cr.attr(), cr.dirs().get(0), true, set));
                    return Files.fs(st).setAttr(cr.attr().inode(), rest).then((t, e3) -> e3 != null ? Operation.status(Files.status(e3))
                            : Promise.completed(opened(st, res, r, access, clientId, t, cr.dirs().get(0), true, set)));
                }
                int s = Files.status(e2);
                if (s != Nfs4Status.EXIST || r.how() != UNCHECKED4) return Operation.status(s);
                // UNCHECKED4 over an existing file: open it (with a size of 0 in the attributes: truncate it)
                return Files.fs(st).lookupForOpen(dir, r.name()).then((a, e3) -> e3 != null ? Operation.status(Files.status(e3))
                        : truncateThenOpen(st, res, r, access, clientId, a, da));
            });
        });
    }

    private Promise<Integer> truncateThenOpen(CompoundState st, XdrEncoder res, Request r, int access, long clientId, FileAttr a, FileAttr dir) {
        // RFC 7530 §16.16.5: UNCHECKED4 over an existing file ignores the attributes, except that a size of 0 truncates
        long size = r.attrs() == null ? AttrChange.KEEP : r.attrs().change().size();
        if (size != 0 || a.type() != FileType.FILE) return Promise.completed(opened(st, res, r, access, clientId, a, dir, false, new int[3]));
        // nothing is cut before the OPEN is known to succeed: not for a caller who may not open the file so, nor under
        // another open's share reservation (DENY_WRITE) — Linux checks both before it truncates (open(2) with O_TRUNC)
        int refused = refusal(st, access, a, false);
        if (refused != Nfs4Status.NFS4_OK) return Operation.status(refused);
        if (!Files.mayWrite(st.credentials, a)) return Operation.status(Nfs4Status.ACCESS);
        if (st.server.states().shareDenied(clientId, r.owner(), a.inode(), access | StateTable.ACCESS_WRITE, r.deny())) {
            return Operation.status(Nfs4Status.SHARE_DENIED);
        }
        int[] set = new int[3];
        set[0] = 1 << Fattr.SIZE;
        AttrChange cut = SetAttr.droppingSetIdOnTruncate(AttrChange.NONE.withSize(size), a.type(), a.mode(), st.credentials.uid());
        return Files.fs(st).setAttr(a.inode(), cut).then((t, e) -> e != null ? Operation.status(Files.status(e))
                : Promise.completed(opened(st, res, r, access, clientId, t, dir, false, set)));
    }

    /**
     * The open_delegation4 of a reply: this gateway gives no delegation (it makes no callbacks). A 4.1 client that said
     * what it wants hears why not (RFC 8881 §18.16.3, as knfsd answers): not wanted, cancelled, or none to be had
     * (WND4_RESOURCE, with no promise to signal one later); one that said nothing gets a plain OPEN_DELEGATE_NONE.
     */
    static void writeNoDelegation(XdrEncoder res, int want) {
        if (want == WANT_NO_PREFERENCE) {
            res.writeInt(OPEN_DELEGATE_NONE);
            return;
        }
        res.writeInt(OPEN_DELEGATE_NONE_EXT);
        int why = want == WANT_NO_DELEG ? WND4_NOT_WANTED : want == WANT_CANCEL ? WND4_CANCELLED : WND4_RESOURCE;
        res.writeInt(why);
        if (why == WND4_RESOURCE) res.writeBoolean(false); // ond_server_will_signal_avail
    }

    /** Why the caller may not open {@code a} with {@code access}, or NFS4_OK: its type, and (unless the OPEN made it) its mode. */
    private static int refusal(CompoundState st, int access, FileAttr a, boolean created) {
        if (a.type() == FileType.DIR) return Nfs4Status.ISDIR;
        if (a.type() == FileType.SYMLINK) return Nfs4Status.SYMLINK;
        // a special file: 4.1 has WRONG_TYPE for it; 4.0 has nothing fitting, and SYMLINK (what knfsd answers)
        // is the error that makes Linux 4.0 clients fall back to opening the device or FIFO locally
        if (a.type() != FileType.FILE) return st.minorVersion >= 1 ? Nfs4Status.WRONG_TYPE : Nfs4Status.SYMLINK;
        if (!created) {
            if ((access & StateTable.ACCESS_READ) != 0 && !Files.mayRead(st.credentials, a) && st.credentials.uid() != a.uid()) return Nfs4Status.ACCESS;
            if ((access & StateTable.ACCESS_WRITE) != 0 && !Files.mayWrite(st.credentials, a)) return Nfs4Status.ACCESS;
        }
        return Nfs4Status.NFS4_OK;
    }

    /** The file is found (or made): check it, take the open state, write OPEN4resok. */
    private int opened(CompoundState st, XdrEncoder res, Request r, int access, long clientId, FileAttr a, FileAttr dir, boolean created, int[] attrset) {
        int refused = refusal(st, access, a, created);
        if (refused != Nfs4Status.NFS4_OK) return refused;
        int[] status = new int[1];
        StateTable.Open o = st.server.states().open(clientId, r.owner(), a.inode(), access, r.deny(), st.minorVersion, status);
        if (o == null) return status[0];
        StateId sid = st.server.states().stateId(o);
        st.currentStateId = sid;
        Files.writeStateId(res, sid);
        if (dir != null) Files.writeChangeInfo(res, dir);
        else res.writeBoolean(false).writeLong(0).writeLong(0);
        res.writeInt(OPEN4_RESULT_LOCKTYPE_POSIX | (o.confirmed ? 0 : OPEN4_RESULT_CONFIRM));
        Fattr.writeBitmap(res, attrset);
        writeNoDelegation(res, st.minorVersion >= 1 ? r.access() & WANT_DELEG_MASK : WANT_NO_PREFERENCE);
        st.current = Files.handle(st, a.inode());
        return Nfs4Status.NFS4_OK;
    }
}
