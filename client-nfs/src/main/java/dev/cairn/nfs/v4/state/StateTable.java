package dev.cairn.nfs.v4.state;

import dev.cairn.nfs.v4.Nfs4Status;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Open state (RFC 8881 §9): one stateid per (client, open-owner, file), carrying the union of the share
 * access and deny modes of its OPENs. A stateid's {@code other} holds this gateway's boot id, so one from
 * before a restart is told apart (STALE_STATEID in 4.0, BAD_STATEID in 4.1) from one never issued.
 * Share reservations are enforced between different owners: an OPEN denying what another open holds, or
 * asking for what another denies, gets SHARE_DENIED.
 *
 * <p>Lock state (RFC 8881 §8.2.1): one lock stateid per (open, lock owner), from the same key space as
 * opens, so a stateid names one or the other. The ranges themselves are in {@link ByteRangeLocks}, held by
 * the lock owner on the file. READ and WRITE may present either kind.
 */
public final class StateTable {
    /** Open stateids held at most (all clients); past it an OPEN gets RESOURCE-like DELAY until some close. */
    public static final int MAX_OPENS = 65_536;
    public static final int MAX_OWNER_BYTES = 1024;
    public static final int ACCESS_READ = 1, ACCESS_WRITE = 2, ACCESS_BOTH = 3;

    /** A stateid4: sequence number and 12 opaque bytes. */
    public record StateId(int seqid, byte[] other) {
        public static final StateId ANONYMOUS = new StateId(0, new byte[12]);
        public static final StateId BYPASS = new StateId(-1, filled((byte) 0xff));
        /** RFC 8881 §8.2.3: seqid 1, other all zeros: "the current stateid" (resolved by the COMPOUND). */
        public static final StateId CURRENT = new StateId(1, new byte[12]);

        public boolean isAnonymous() { return seqid == 0 && allBytes((byte) 0); }

        public boolean isBypass() { return seqid == -1 && allBytes((byte) 0xff); }

        public boolean isCurrent() { return seqid == 1 && allBytes((byte) 0); }

        public boolean isSpecial() { return isAnonymous() || isBypass() || isCurrent(); }

        private boolean allBytes(byte b) {
            for (byte x : other) if (x != b) return false;
            return true;
        }

        private static byte[] filled(byte b) {
            byte[] o = new byte[12];
            java.util.Arrays.fill(o, b);
            return o;
        }
    }

    /** One open: who, which file, the share modes it holds. */
    public static final class Open {
        final long key;
        public final long clientId;
        final String owner;
        /** Its open-owner in {@link OwnerSequences} (4.0). */
        public final OwnerSequences.Owner sequenceOwner;
        public final long inode;
        public int access;
        public int deny;
        public int seqid = 1;
        /**
         * False for a 4.0 open of an open-owner not yet confirmed (RFC 7530 §16.16.5, §16.18): its stateid serves
         * only OPEN_CONFIRM until that confirms the owner. Always true in 4.1, which has no OPEN_CONFIRM.
         */
        public boolean confirmed = true;
        /**
         * The (access, deny) pairs of the OPENs in effect, bit {@code access * 4 + deny}: what an OPEN_DOWNGRADE may
         * go back to (the union of some of them; RFC 7530 §16.19.4, RFC 8881 §18.18.3).
         */
        int pairs;
        /** The lock states made from this open, by lock owner (they end with it). */
        final Map<ByteRangeLocks.Owner, LockState> locks = new HashMap<>(2);

        Open(long key, long clientId, String owner, OwnerSequences.Owner sequenceOwner, long inode) {
            this.key = key;
            this.clientId = clientId;
            this.owner = owner;
            this.sequenceOwner = sequenceOwner;
            this.inode = inode;
        }
    }

    /** One lock stateid: a lock owner's locking state on the file of one open. */
    public static final class LockState {
        final long key;
        public final Open open;
        public final ByteRangeLocks.Owner owner;
        /** 0 until its first LOCK succeeds (the stateid a client first sees has seqid 1); each LOCK and LOCKU adds one. */
        public int seqid;

        LockState(long key, Open open, ByteRangeLocks.Owner owner) {
            this.key = key;
            this.open = open;
            this.owner = owner;
        }
    }

    /** Lock stateids held at most (all clients); past it a LOCK by a new lock owner gets DELAY. */
    public static final int MAX_LOCK_STATES = 65_536;

    private final int bootId;
    private long nextKey = 1;
    private final Map<Long, Open> byKey = new HashMap<>();
    private final Map<String, Open> byOwnerFile = new HashMap<>();
    /**
     * The opens of each file and of each client, and the lock states of each lock owner: what an OPEN's share check,
     * a READ with a special stateid, a lease's end and a 4.0 LOCK look at, so that each costs what that file, client or
     * owner holds, never a walk over every open of the gateway (up to {@link #MAX_OPENS}, which a client could fill).
     */
    private final Map<Long, List<Open>> byInode = new HashMap<>();
    private final Map<Long, java.util.Set<Open>> byClient = new HashMap<>();
    private final Map<Long, LockState> locksByKey = new HashMap<>();
    private final Map<ByteRangeLocks.Owner, List<LockState>> locksByOwner = new HashMap<>();
    private final ByteRangeLocks ranges = new ByteRangeLocks();
    private final OwnerSequences sequences = new OwnerSequences();
    /**
     * Keys of states dropped with their client (lease expired, client rebooted or destroyed), most recent
     * last: a stateid naming one gets EXPIRED rather than BAD_STATEID (RFC 7530 §9.1.4), so the client
     * knows to recover rather than suspect itself. Bounded: the oldest are forgotten.
     */
    private final java.util.LinkedHashSet<Long> expired = new java.util.LinkedHashSet<>();
    public static final int MAX_EXPIRED_KEYS = 16_384;

    /** The client id that stands for "any client" where a request does not say which client sends it (4.0). */
    public static final long ANY_CLIENT = -1;

    public StateTable(int bootId) { this.bootId = bootId; }

    /** Told the client id of a 4.0 request's stateid that names live state of it (the client's lease is then renewed). */
    private java.util.function.LongConsumer used40 = id -> { };

    /**
     * RFC 7530 §9.6: in 4.0 an operation presenting a stateid of the client's renews its lease, as RENEW does. A 4.0
     * client busy with READs and WRITEs sends no RENEW (Linux counts each reply as a renewal): without this its lease
     * ran out under it, and its opens and locks went in the middle of its writes. (4.1 renews with every SEQUENCE.)
     */
    public void onUse40(java.util.function.LongConsumer listener) { this.used40 = listener; }

    public int size() { return byKey.size(); }

    public ByteRangeLocks ranges() { return ranges; }

    public OwnerSequences sequences() { return sequences; }

    /**
     * 4.0: the owner whose sequence a request presenting {@code id} belongs to (the open's open-owner, or
     * the lock state's lock-owner), whatever seqid the stateid carries; null if it names nothing of this
     * boot (the request then fails on the stateid, which does not move any sequence on).
     */
    public OwnerSequences.Owner sequenceOwner(StateId id) {
        if (id.isSpecial()) return null;
        ByteBuffer b = ByteBuffer.wrap(id.other());
        if (b.getInt() != bootId) return null;
        long key = b.getLong();
        Open o = byKey.get(key);
        if (o != null) return o.sequenceOwner;
        LockState l = locksByKey.get(key);
        if (l != null) return OwnerSequences.lockOwner(l.owner);
        return closedOwners.get(key); // a retransmitted CLOSE: its owner's last reply answers it
    }

    /**
     * Open key -> its open-owner, for opens closed lately: a CLOSE whose reply was lost comes again naming a
     * stateid that is gone, and must still find its owner's sequence to get the first reply (RFC 7530 §9.1.7).
     * Bounded: the oldest are forgotten (a retransmission that late gets BAD_STATEID).
     */
    private final java.util.LinkedHashMap<Long, OwnerSequences.Owner> closedOwners = new java.util.LinkedHashMap<>();
    public static final int MAX_CLOSED_OWNERS = 16_384;

    public StateId stateId(Open o) { return stateId(o.key, o.seqid); }

    public StateId stateId(LockState l) { return stateId(l.key, l.seqid); }

    private StateId stateId(long key, int seqid) {
        return new StateId(seqid, ByteBuffer.allocate(12).putInt(bootId).putLong(key).array());
    }

    private static String ownerKey(long clientId, byte[] owner, long inode) {
        return clientId + "/" + java.util.HexFormat.of().formatHex(owner) + "/" + inode;
    }

    /**
     * OPEN: a new open or an upgrade of the owner's open of that file. Answers the open, or null with
     * {@code status[0]} set (SHARE_DENIED, INVAL, DELAY).
     */
    public Open open(long clientId, byte[] owner, long inode, int access, int deny, int minorVersion, int[] status) {
        if (access < ACCESS_READ || access > ACCESS_BOTH || deny < 0 || deny > ACCESS_BOTH) {
            status[0] = Nfs4Status.INVAL;
            return null;
        }
        if (shareDenied(clientId, owner, inode, access, deny)) {
            status[0] = Nfs4Status.SHARE_DENIED;
            return null;
        }
        String k = ownerKey(clientId, owner, inode);
        Open o = byOwnerFile.get(k);
        if (o == null) {
            if (byKey.size() >= MAX_OPENS) {
                status[0] = Nfs4Status.DELAY;
                return null;
            }
            o = new Open(nextKey++, clientId, k, OwnerSequences.openOwner(clientId, owner), inode);
            // 4.0: a new open-owner (or one forgotten with its client) confirms itself with OPEN_CONFIRM first
            o.confirmed = minorVersion >= 1 || confirmedOwners.contains(o.sequenceOwner);
            byKey.put(o.key, o);
            byOwnerFile.put(k, o);
            byInode.computeIfAbsent(inode, i -> new ArrayList<>(1)).add(o);
            byClient.computeIfAbsent(clientId, c -> new java.util.LinkedHashSet<>()).add(o);
        } else {
            o.seqid++;
        }
        o.access |= access;
        o.deny |= deny;
        o.pairs |= 1 << pairBit(access, deny);
        status[0] = Nfs4Status.NFS4_OK;
        return o;
    }

    /**
     * Whether an OPEN of {@code inode} by this owner with these share modes meets another open's reservation
     * (SHARE_DENIED): asked by {@link #open}, and by an OPEN before it truncates the file it opens.
     */
    public boolean shareDenied(long clientId, byte[] owner, long inode, int access, int deny) {
        String k = ownerKey(clientId, owner, inode);
        for (Open o : byInode.getOrDefault(inode, List.of())) {
            // the owner's own deny holds against its own upgrade too (RFC 7530 §9.9, §16.16.5), as knfsd has it
            boolean own = o.owner.equals(k);
            if ((o.deny & access) != 0 || (!own && (o.access & deny) != 0)) return true;
        }
        return false;
    }

    /**
     * The open a stateid names, for a client; null with {@code status[0]} set: BAD_STATEID (never issued,
     * or closed), STALE_STATEID (4.0: issued before this gateway started), OLD_STATEID (an older seqid).
     * In 4.1 seqid 0 means "whatever is current".
     */
    public Open find(StateId id, int minorVersion, long clientId, int[] status) {
        Open o = findAny(id, minorVersion, clientId, status);
        if (o != null && !o.confirmed) return neverIssued(status); // usable once OPEN_CONFIRM confirms its owner
        return o;
    }

    /** The open a stateid names, confirmed or not (for OPEN_CONFIRM); checked like {@link #find}. */
    public Open findAny(StateId id, int minorVersion, long clientId, int[] status) {
        return lookup(byKey, o -> o.seqid, o -> o.clientId, id, minorVersion, clientId, status);
    }

    /** OPEN_CONFIRM: the open's owner is confirmed (its later opens need none) and the stateid moves on; BAD_STATEID if it was already. */
    public int confirm(Open o) {
        if (o.confirmed) return Nfs4Status.BAD_STATEID;
        o.confirmed = true;
        o.seqid++;
        confirmedOwners.add(o.sequenceOwner);
        for (Open other : byClient.get(o.clientId)) if (other.sequenceOwner.equals(o.sequenceOwner)) other.confirmed = true;
        return Nfs4Status.NFS4_OK;
    }

    /** 4.0 open-owners confirmed by an OPEN_CONFIRM (forgotten with their client). */
    private final java.util.Set<OwnerSequences.Owner> confirmedOwners = new java.util.HashSet<>();

    /** The lock state a stateid names, checked like {@link #find}. */
    public LockState findLock(StateId id, int minorVersion, long clientId, int[] status) {
        return lookup(locksByKey, l -> l.seqid, l -> l.open.clientId, id, minorVersion, clientId, status);
    }

    /**
     * The state a stateid names in {@code table}: of this boot, issued to {@code clientId} (unless it is
     * {@link #ANY_CLIENT}) and not gone, at its current seqid. Another client's state is BAD_STATEID, as one
     * never issued: a client must not learn, let alone use, what another holds (RFC 8881 §8.2.4).
     */
    private <T> T lookup(Map<Long, T> table, java.util.function.ToIntFunction<T> seqidOf, java.util.function.ToLongFunction<T> clientOf,
                         StateId id, int minorVersion, long clientId, int[] status) {
        Long key = key(id, minorVersion, status);
        if (key == null) return null;
        T state = table.get(key);
        if (state == null) {
            if (!expired.contains(key)) return neverIssued(status);
            status[0] = Nfs4Status.EXPIRED;
            return null;
        }
        if (clientId != ANY_CLIENT && clientOf.applyAsLong(state) != clientId) return neverIssued(status);
        if (minorVersion == 0) used40.accept(clientOf.applyAsLong(state));
        return seqidMatches(id, seqidOf.applyAsInt(state), minorVersion, status) ? state : null;
    }

    /**
     * The open behind a stateid READ or WRITE presents: an open's own, or the open a lock stateid was made
     * from. Null with the status as {@link #find} sets it.
     */
    public Open resolve(StateId id, int minorVersion, long clientId, int[] status) {
        Long key = key(id, minorVersion, status);
        if (key == null) return null;
        if (locksByKey.containsKey(key)) {
            LockState l = findLock(id, minorVersion, clientId, status);
            return l == null ? null : l.open;
        }
        return find(id, minorVersion, clientId, status);
    }

    /**
     * This gateway's key in a stateid, or null: BAD_STATEID for a special stateid (it names no state: where one
     * reaches a lookup, CLOSE, OPEN_DOWNGRADE, LOCK and the like, it is not allowed; RFC 7530 §9.1.4.3), STALE_STATEID
     * in 4.0 and BAD_STATEID in 4.1 for another boot's.
     */
    private Long key(StateId id, int minorVersion, int[] status) {
        if (id.isSpecial()) return neverIssued(status);
        ByteBuffer b = ByteBuffer.wrap(id.other());
        int boot = b.getInt();
        long key = b.getLong();
        if (boot != bootId) {
            status[0] = minorVersion == 0 ? Nfs4Status.STALE_STATEID : Nfs4Status.BAD_STATEID;
            return null;
        }
        return key;
    }

    private static boolean seqidMatches(StateId id, int seqid, int minorVersion, int[] status) {
        if (!(minorVersion >= 1 && id.seqid() == 0) && id.seqid() != seqid) {
            status[0] = Integer.compareUnsigned(id.seqid(), seqid) < 0 ? Nfs4Status.OLD_STATEID : Nfs4Status.BAD_STATEID;
            return false;
        }
        status[0] = Nfs4Status.NFS4_OK;
        return true;
    }

    /** A stateid of this boot that names nothing (never issued, or closed or freed since). */
    private static <T> T neverIssued(int[] status) {
        status[0] = Nfs4Status.BAD_STATEID;
        return null;
    }

    /** Ends an open, with the lock states made from it (the caller has checked {@link #locksHeld}). */
    public void close(Open o) {
        assert !locksHeld(o) : "closing an open whose lock owners still hold locks";
        forget(o);
        closedOwners.put(o.key, o.sequenceOwner);
        if (closedOwners.size() > MAX_CLOSED_OWNERS) closedOwners.remove(closedOwners.keySet().iterator().next());
    }

    /** Removes an open from every index, with the lock states made from it. */
    private void forget(Open o) {
        byKey.remove(o.key);
        byOwnerFile.remove(o.owner);
        removeFrom(byInode, o.inode, o);
        removeFrom(byClient, o.clientId, o);
        for (LockState l : List.copyOf(o.locks.values())) forget(l);
        assert o.locks.isEmpty();
    }

    /** Removes a lock state from every index. */
    private void forget(LockState l) {
        locksByKey.remove(l.key);
        l.open.locks.remove(l.owner, l);
        removeFrom(locksByOwner, l.owner, l);
    }

    private static <K, V> void removeFrom(Map<K, ? extends java.util.Collection<V>> index, K key, V value) {
        java.util.Collection<V> values = index.get(key);
        boolean removed = values != null && values.remove(value);
        assert removed : "state missing from its index under " + key;
        if (values != null && values.isEmpty()) index.remove(key);
    }

    /** Whether a lock owner that locked through this open still holds locks on its file (CLOSE is then LOCKS_HELD). */
    public boolean locksHeld(Open o) {
        for (LockState l : o.locks.values()) if (ranges.holds(o.inode, l.owner)) return true;
        return false;
    }

    /** The lock state of {@code owner} on an open's file, made on first use; null (DELAY) past {@link #MAX_LOCK_STATES}. */
    public LockState lockState(Open o, ByteRangeLocks.Owner owner, int[] status) {
        LockState l = o.locks.get(owner);
        if (l == null) {
            if (locksByKey.size() >= MAX_LOCK_STATES) {
                status[0] = Nfs4Status.DELAY;
                return null;
            }
            l = new LockState(nextKey++, o, owner);
            locksByKey.put(l.key, l);
            o.locks.put(owner, l);
            locksByOwner.computeIfAbsent(owner, w -> new ArrayList<>(1)).add(l);
        }
        status[0] = Nfs4Status.NFS4_OK;
        return l;
    }

    /** Whether a lock-owner holds a lock stateid that was handed out (a LOCK of it was granted). */
    public boolean lockOwnerEstablished(ByteRangeLocks.Owner owner) {
        for (LockState l : locksByOwner.getOrDefault(owner, List.of())) if (l.seqid > 0) return true;
        return false;
    }

    /** FREE_STATEID of a lock stateid: LOCKS_HELD while its owner holds locks on the file. */
    public int freeLock(LockState l) {
        if (ranges.holds(l.open.inode, l.owner)) return Nfs4Status.LOCKS_HELD;
        forget(l);
        return Nfs4Status.NFS4_OK;
    }

    /** RELEASE_LOCKOWNER (4.0): forgets a lock owner's lock states, unless it still holds locks. */
    public int releaseLockOwner(ByteRangeLocks.Owner owner) {
        if (ranges.holdsAny(owner)) return Nfs4Status.LOCKS_HELD;
        for (LockState l : List.copyOf(locksByOwner.getOrDefault(owner, List.of()))) forget(l);
        return Nfs4Status.NFS4_OK;
    }

    /**
     * OPEN_DOWNGRADE: to exactly the union of the share modes of some of the owner's OPENs of the file (as if the
     * others were closed); INVAL otherwise (RFC 7530 §16.19.4: a downgrade to a mode never opened, READ after only
     * BOTH was opened say, is refused). The OPENs kept are those within the new modes.
     */
    public int downgrade(Open o, int access, int deny) {
        if (access < ACCESS_READ || access > ACCESS_BOTH || deny < 0 || deny > ACCESS_BOTH) return Nfs4Status.INVAL;
        // the unions some subset of the OPENs makes: at most 16 pairs, so at most 16 distinct unions
        int reachable = 0;
        for (int p = 0; p < 16; p++) {
            if ((o.pairs & (1 << p)) == 0) continue;
            int next = reachable | (1 << p);
            for (int r = 0; r < 16; r++) if ((reachable & (1 << r)) != 0) next |= 1 << (r | p);
            reachable = next;
        }
        if ((reachable & (1 << pairBit(access, deny))) == 0) return Nfs4Status.INVAL;
        int kept = 0;
        for (int p = 0; p < 16; p++) if ((o.pairs & (1 << p)) != 0 && ((p >> 2) & ~access) == 0 && ((p & 3) & ~deny) == 0) kept |= 1 << p;
        o.pairs = kept;
        o.access = access;
        o.deny = deny;
        o.seqid++;
        return Nfs4Status.NFS4_OK;
    }

    /** An (access, deny) pair's bit in {@link Open#pairs}: the union of two pairs is the OR of their indices. */
    private static int pairBit(int access, int deny) { return access << 2 | deny; }

    /** Every open and lock of a client whose lease ended, or that destroyed itself. */
    public int dropClient(long clientId) {
        ranges.dropClient(clientId);
        sequences.dropClient(clientId);
        closedOwners.values().removeIf(owner -> owner.clientId() == clientId);
        confirmedOwners.removeIf(owner -> owner.clientId() == clientId);
        java.util.Set<Open> opens = byClient.get(clientId);
        if (opens == null) return 0;
        int n = 0;
        for (Open o : List.copyOf(opens)) {
            for (LockState l : o.locks.values()) expired(l.key);
            forget(o);
            expired(o.key);
            n++;
        }
        assert !byClient.containsKey(clientId);
        return n;
    }

    private void expired(long key) {
        expired.add(key);
        if (expired.size() > MAX_EXPIRED_KEYS) expired.remove(expired.iterator().next());
    }

    /** Whether an open of the file denies {@code access} to others (what READ and WRITE with a special stateid meet: LOCKED). */
    public boolean denied(long inode, int access) {
        for (Open o : byInode.getOrDefault(inode, List.of())) if ((o.deny & access) != 0) return true;
        return false;
    }

    public boolean holds(long clientId) {
        return byClient.containsKey(clientId);
    }

    /** Opens of a file (for tests and diagnostics). */
    public List<Open> opens(long inode) {
        return List.copyOf(byInode.getOrDefault(inode, List.of()));
    }
}
