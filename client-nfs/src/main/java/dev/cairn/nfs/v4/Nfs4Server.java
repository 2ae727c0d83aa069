package dev.cairn.nfs.v4;

import dev.cairn.nfs.fs.ClusterFs;

import dev.cairn.core.async.Promise;
import dev.cairn.core.env.Clock;
import dev.cairn.core.env.Log;
import dev.cairn.nfs.rpc.Credentials;
import dev.cairn.nfs.v4.op.BindConnToSession;
import dev.cairn.nfs.v4.op.CreateSession;
import dev.cairn.nfs.v4.op.DestroyClientId;
import dev.cairn.nfs.v4.op.DestroySession;
import dev.cairn.nfs.v4.op.ExchangeId;
import dev.cairn.nfs.v4.op.GetFh;
import dev.cairn.nfs.v4.op.PutFh;
import dev.cairn.nfs.v4.op.PutRootFh;
import dev.cairn.nfs.v4.op.ReclaimComplete;
import dev.cairn.nfs.v4.op.Renew;
import dev.cairn.nfs.v4.op.RestoreFh;
import dev.cairn.nfs.v4.op.SaveFh;
import dev.cairn.nfs.v4.op.SecInfoNoName;
import dev.cairn.nfs.v4.op.Sequence;
import dev.cairn.nfs.v4.op.SetClientId;
import dev.cairn.nfs.v4.op.SetClientIdConfirm;
import dev.cairn.nfs.v4.state.ClientTable;
import dev.cairn.nfs.xdr.XdrDecoder;
import dev.cairn.nfs.v4.state.Grace;
import dev.cairn.nfs.xdr.XdrEncoder;
import dev.cairn.nfs.xdr.XdrException;
import java.util.random.RandomGenerator;

/**
 * Runs COMPOUND procedures (RFC 7530 §15.2 for 4.0, RFC 8881 §16.2 for 4.1): decodes each operation in
 * turn, runs it, stops at the first error, and for 4.1 keeps the reply in the session slot's cache.
 * Single-threaded like every node; operations that reach the cluster return promises.
 */
public final class Nfs4Server {
    /** Hard limit on operations in one COMPOUND, whatever a session negotiated (RFC 7530: NFS4ERR_RESOURCE). */
    public static final int MAX_OPS = 64;
    /** COMPOUND tags are echoed back; nobody needs a long one. */
    public static final int MAX_TAG = 1024;
    /**
     * Minor versions served: 0, 1 and 2. Minor version 2 is 4.1 with optional extras (RFC 7862 §1.4: every
     * operation and attribute it adds is OPTIONAL), so it is served as 4.1 with its new operations answered
     * NFS4ERR_NOTSUPP (SEEK, READ_PLUS, DEALLOCATE and RFC 8276's xattr operations excepted); clients then use their 4.1 paths (no server-side COPY, ALLOCATE). A client
     * mounting with vers=4.2 would otherwise get no mount at all: only vers=4 falls back on its own.
     */
    public static final int MAX_MINOR = 2;

    private final Clock clock;
    private final Log log;
    private final ClientTable clients;
    private final ServerIdentity identity;
    private final Operation[] ops = new Operation[Op.LAST_V42 + 1];

    /** Who this server is to clients: EXCHANGE_ID's server owner and scope. */
    public record ServerIdentity(String owner, String scope) {}

    /** The root file handle: inode 1 of file system {@code fsid}. */
    private final FileHandle root;

    private final dev.cairn.nfs.fs.ClusterFs fs;
    private final dev.cairn.nfs.Exports exports;
    private final dev.cairn.nfs.v4.state.StateTable states;
    private final Grace grace;
    /** WRITE and COMMIT's verifier: new at every start, so clients resend what they had not seen committed. */
    private final byte[] writeVerifier = new byte[8];

    /** The session and client machinery only (no file system): what the protocol tests use. */
    public Nfs4Server(Clock clock, RandomGenerator random, Log log, ServerIdentity identity, long fsid) {
        this(clock, random, log, identity, fsid, null);
    }

    /** A server of the files in {@code fs} (null: no file operations, every one is NOTSUPP). */
    public Nfs4Server(Clock clock, RandomGenerator random, Log log, ServerIdentity identity, long fsid, dev.cairn.nfs.fs.ClusterFs fs) {
        this(clock, random, log, identity, fsid, fs, dev.cairn.nfs.Exports.parse(dev.cairn.nfs.Exports.DEFAULT));
    }

    /** ... exported to the clients {@code exports} names, as its rules say; no record of clients kept, so no grace period. */
    public Nfs4Server(Clock clock, RandomGenerator random, Log log, ServerIdentity identity, long fsid, dev.cairn.nfs.fs.ClusterFs fs,
                      dev.cairn.nfs.Exports exports) {
        this(clock, random, log, identity, fsid, fs, exports, null);
    }

    /** ... keeping the record of its clients in {@code stable}, for the grace period after a restart ({@link Grace}). */
    public Nfs4Server(Clock clock, RandomGenerator random, Log log, ServerIdentity identity, long fsid, dev.cairn.nfs.fs.ClusterFs fs,
                      dev.cairn.nfs.Exports exports, dev.cairn.core.env.KvStore stable) {
        this.exports = exports;
        this.root = new FileHandle(fsid, dev.cairn.nfs.v4.FileHandle.ROOT_INODE, 0);
        this.clock = clock;
        this.log = log;
        this.identity = identity;
        this.fs = fs;
        int bootId = random.nextInt();
        random.nextBytes(writeVerifier);
        this.clients = new ClientTable(bootId, random);
        this.states = new dev.cairn.nfs.v4.state.StateTable(bootId);
        this.grace = new Grace(stable, clock, log, ClientTable.LEASE_NANOS, owner -> {
            return clients.confirmedByOwner(owner) != null;
        });
        states.onUse40(id -> {
            dev.cairn.nfs.v4.state.Client c = clients.client(id);
            if (c != null && c.minorVersion() == 0 && c.confirmed()) clients.renew(c, clock.nanoTime());
        });
        clients.onRemove(id -> {
            states.dropClient(id);
            dev.cairn.nfs.v4.state.Client c = clients.client(id);
            if (c != null) grace.removed(c);
        });
        register(Op.EXCHANGE_ID, new ExchangeId());
        register(Op.CREATE_SESSION, new CreateSession());
        register(Op.DESTROY_SESSION, new DestroySession());
        register(Op.DESTROY_CLIENTID, new DestroyClientId());
        register(Op.SEQUENCE, new Sequence());
        register(Op.RECLAIM_COMPLETE, new ReclaimComplete());
        register(Op.BIND_CONN_TO_SESSION, new BindConnToSession());
        register(Op.SECINFO_NO_NAME, new SecInfoNoName());
        register(Op.SETCLIENTID, new SetClientId());
        register(Op.SETCLIENTID_CONFIRM, new SetClientIdConfirm());
        register(Op.RENEW, new Renew());
        register(Op.PUTROOTFH, new PutRootFh());
        register(Op.PUTPUBFH, new PutRootFh());
        register(Op.PUTFH, new PutFh());
        register(Op.GETFH, new GetFh());
        register(Op.SAVEFH, new SaveFh());
        register(Op.RESTOREFH, new RestoreFh());
        if (fs != null) registerFileOperations();
    }

    private void registerFileOperations() {
        register(Op.GETATTR, new dev.cairn.nfs.v4.op.GetAttr());
        register(Op.LOOKUP, new dev.cairn.nfs.v4.op.Lookup());
        register(Op.LOOKUPP, new dev.cairn.nfs.v4.op.LookupP());
        register(Op.ACCESS, new dev.cairn.nfs.v4.op.Access());
        register(Op.READDIR, new dev.cairn.nfs.v4.op.ReadDir());
        register(Op.READLINK, new dev.cairn.nfs.v4.op.ReadLink());
        register(Op.OPEN, new dev.cairn.nfs.v4.op.Open());
        register(Op.OPEN_CONFIRM, new dev.cairn.nfs.v4.op.OpenConfirm());
        register(Op.OPEN_DOWNGRADE, new dev.cairn.nfs.v4.op.OpenDowngrade());
        register(Op.CLOSE, new dev.cairn.nfs.v4.op.Close());
        register(Op.READ, new dev.cairn.nfs.v4.op.Read());
        register(Op.WRITE, new dev.cairn.nfs.v4.op.Write());
        register(Op.COMMIT, new dev.cairn.nfs.v4.op.Commit());
        register(Op.CREATE, new dev.cairn.nfs.v4.op.Create());
        register(Op.REMOVE, new dev.cairn.nfs.v4.op.Remove());
        register(Op.RENAME, new dev.cairn.nfs.v4.op.Rename());
        register(Op.LINK, new dev.cairn.nfs.v4.op.Link());
        register(Op.SETATTR, new dev.cairn.nfs.v4.op.SetAttr());
        register(Op.VERIFY, dev.cairn.nfs.v4.op.Verify.verify());
        register(Op.NVERIFY, dev.cairn.nfs.v4.op.Verify.nverify());
        register(Op.TEST_STATEID, new dev.cairn.nfs.v4.op.TestStateId());
        register(Op.FREE_STATEID, new dev.cairn.nfs.v4.op.FreeStateId());
        register(Op.SECINFO, new dev.cairn.nfs.v4.op.SecInfo());
        register(Op.DELEGRETURN, new dev.cairn.nfs.v4.op.DelegReturn());
        register(Op.RELEASE_LOCKOWNER, new dev.cairn.nfs.v4.op.ReleaseLockOwner());
        register(Op.LOCK, new dev.cairn.nfs.v4.op.Lock());
        register(Op.LOCKT, new dev.cairn.nfs.v4.op.LockT());
        register(Op.LOCKU, new dev.cairn.nfs.v4.op.LockU());
        register(Op.SEEK, new dev.cairn.nfs.v4.op.Seek());
        register(Op.READ_PLUS, new dev.cairn.nfs.v4.op.ReadPlus());
        register(Op.DEALLOCATE, new dev.cairn.nfs.v4.op.Deallocate());
        register(Op.GETXATTR, new dev.cairn.nfs.v4.op.GetXattr());
        register(Op.SETXATTR, new dev.cairn.nfs.v4.op.SetXattr());
        register(Op.LISTXATTRS, new dev.cairn.nfs.v4.op.ListXattrs());
        register(Op.REMOVEXATTR, new dev.cairn.nfs.v4.op.RemoveXattr());
    }

    public dev.cairn.nfs.fs.ClusterFs fs() { return fs; }

    public dev.cairn.nfs.v4.state.StateTable states() { return states; }

    public Grace grace() { return grace; }

    public byte[] writeVerifier() { return writeVerifier.clone(); }

    /** Only for the simulator's planted bug ({@link dev.cairn.core.env.Plant#GATEWAY_VERIFIER_REUSED}): a verifier a restart does not change. */
    public void plantFixedWriteVerifier(long v) { java.nio.ByteBuffer.wrap(writeVerifier).putLong(v); }

    /** What attribute encoding needs of this server for one file. */
    public Fattr.Context attrContext(FileHandle fh, int minorVersion) {
        return new Fattr.Context(root.fsid(), ClientTable.LEASE_SECONDS, fh.encode(), minorVersion, fs == null ? () -> ClusterFs.Space.UNKNOWN : fs::space);
    }

    /** A 4.0 client id an operation names: STALE_CLIENTID unless it is a confirmed 4.0 client; renews its lease. */
    public int checkClient40(long clientId) {
        var c = clients.client(clientId);
        if (c == null || c.minorVersion() != 0 || !c.confirmed()) return Nfs4Status.STALE_CLIENTID;
        clients.renew(c, clock.nanoTime());
        return Nfs4Status.NFS4_OK;
    }

    public void register(int op, Operation impl) {
        assert ops[op] == null : "operation " + op + " registered twice";
        ops[op] = impl;
    }

    public ClientTable clients() { return clients; }

    public FileHandle rootHandle() { return root; }

    public Clock clock() { return clock; }

    public ServerIdentity identity() { return identity; }

    public Log log() { return log; }

    /** Runs one COMPOUND; the promise holds the COMPOUND4res bytes (the RPC header is the caller's). */
    public Promise<byte[]> compound(XdrDecoder args, Credentials cred, CompoundState.Connection conn) { return compound(args, cred, conn, 0); }

    /**
     * As {@link #compound(XdrDecoder, Credentials, CompoundState.Connection)}, the COMPOUND4res after {@code headroom}
     * zero bytes left for the caller's RPC header: a READ's MiB is then written once, where it is sent from (putting the
     * header in front afterwards cost a MiB allocated and copied per READ).
     */
    public Promise<byte[]> compound(XdrDecoder args, Credentials cred, CompoundState.Connection conn, int headroom) {
        if (headroom < 0 || headroom % 4 != 0) throw new IllegalArgumentException("headroom " + headroom);
        byte[] tag = args.readOpaque(MAX_TAG); // an undecodable header is GARBAGE_ARGS: the caller catches it
        int minor = args.readInt();
        long numOps = args.readUnsignedInt();
        if (minor < 0 || minor > MAX_MINOR) return Promise.completed(reply(Nfs4Status.MINOR_VERS_MISMATCH, tag, 0, new XdrEncoder(), headroom));
        dev.cairn.nfs.Exports.Rule rule = exports.match(conn.peerAddress());
        CompoundState st = new CompoundState(this, rule == null ? cred : rule.squash(cred), minor, conn, rule);
        st.requestBytes = args.position() + args.remaining();
        st.operationCount = (int) Math.min(numOps, Integer.MAX_VALUE);
        st.replyOverhead = dev.cairn.nfs.rpc.RpcReply.ACCEPTED_HEADER_BYTES + 12 + (tag.length + 3) / 4 * 4;
        if (numOps > MAX_OPS) {
            XdrEncoder res = new XdrEncoder();
            int first = args.remaining() >= 4 ? args.readInt() : Op.ILLEGAL;
            int status = minor == 0 ? Nfs4Status.RESOURCE : Nfs4Status.TOO_MANY_OPS;
            res.writeInt(first).writeInt(status);
            return Promise.completed(reply(status, tag, 1, res, headroom));
        }
        Promise<byte[]> done = new Promise<>();
        new Run(st, args, (int) numOps, tag, done, headroom).next();
        return done;
    }

    /** COMPOUND4res, assembled at its exact size with one copy of the results (a READ's are a MiB). */
    private static byte[] reply(int status, byte[] tag, int count, XdrEncoder results, int headroom) {
        int tagBytes = (tag.length + 3) & ~3;
        byte[] out = new byte[headroom + 4 + 4 + tagBytes + 4 + results.size()];
        java.nio.ByteBuffer b = java.nio.ByteBuffer.wrap(out).position(headroom);
        b.putInt(status).putInt(tag.length).put(tag).position(headroom + 8 + tagBytes);
        b.putInt(count);
        results.copyTo(out, b.position());
        return out;
    }

    /** One COMPOUND in progress: operation {@code index} of {@code numOps}. */
    private final class Run {
        final CompoundState st;
        final XdrDecoder args;
        final int numOps;
        final byte[] tag;
        final Promise<byte[]> done;
        /**
         * The reply: COMPOUND4res's status, tag and result count reserved at its front ({@link #headerBytes}), the
         * results after. Filled in place at the end, so the reply is not copied to put its header in front.
         */
        final XdrEncoder results = new XdrEncoder(512);
        /** Zero bytes ahead of COMPOUND4res, for the caller's RPC header. */
        final int headroom;
        final int headerBytes;
        int index;
        /** When the operation running now began (operations of one COMPOUND run one after the other). */
        long opStartNanos;

        Run(CompoundState st, XdrDecoder args, int numOps, byte[] tag, Promise<byte[]> done, int headroom) {
            this.st = st;
            this.args = args;
            this.numOps = numOps;
            this.tag = tag;
            this.done = done;
            this.headroom = headroom;
            headerBytes = 4 + 4 + ((tag.length + 3) & ~3) + 4;
            results.reserve(headroom + headerBytes);
        }

        /** The results' bytes so far (after the header), as the reply size limits count them. */
        private int resultBytes() { return results.size() - headroom - headerBytes; }

        void next() {
            while (index < numOps) {
                int op;
                try {
                    op = args.readInt();
                } catch (XdrException e) {
                    finish(Op.ILLEGAL, Nfs4Status.BADXDR); // the op number itself is missing
                    return;
                }
                int refusal = admissible(op);
                if (refusal != Nfs4Status.NFS4_OK) {
                    finish(refusal == Nfs4Status.OP_ILLEGAL ? Op.ILLEGAL : op, refusal);
                    return;
                }
                Operation impl = ops[op];
                if (impl == null) {
                    finish(op, Nfs4Status.NOTSUPP);
                    return;
                }
                int start = results.size();
                opCalls[op]++;
                opStartNanos = clock.nanoTime();
                st.opIndex = index;
                results.writeInt(op);
                int statusAt = results.mark();
                Promise<Integer> p;
                try {
                    p = impl.execute(st, args, results);
                } catch (XdrException e) {
                    p = Promise.completed(Nfs4Status.BADXDR);
                } catch (RuntimeException e) {
                    log.warn("NFS operation {} failed unexpectedly: {}", op, e.toString());
                    dev.cairn.core.async.Unexpected.report(e);
                    p = Promise.completed(Nfs4Status.SERVERFAULT);
                }
                int opIndex = index;
                Promise<Integer> outcome = p;
                if (outcome.isDone()) {
                    if (!settle(op, opIndex, start, statusAt, outcome)) return;
                    continue; // stay in the loop: no recursion for synchronous operations
                }
                outcome.onComplete((s, e) -> {
                    if (settle(op, opIndex, start, statusAt, outcome)) next();
                });
                return;
            }
            complete(Nfs4Status.NFS4_OK);
        }

        /** Records operation {@code op}'s outcome; false if the COMPOUND ends here. */
        private boolean settle(int op, int opIndex, int start, int statusAt, Promise<Integer> p) {
            opLatency(op).record(clock.nanoTime() - opStartNanos);
            int status = p.isFailed() ? Nfs4Status.SERVERFAULT : p.value();
            if (p.isFailed()) {
                log.warn("NFS operation {} failed unexpectedly: {}", op, String.valueOf(p.error()));
                dev.cairn.core.async.Unexpected.report(p.error());
            }
            if (status == Nfs4Status.BADXDR || status == Nfs4Status.SERVERFAULT) {
                results.truncate(start); // whatever the operation wrote before failing is not a result
                results.writeInt(op).writeInt(status);
            } else {
                results.patchInt(statusAt, status);
            }
            if (!st.sequenced.isEmpty()) { // 4.0: the owners' numbers move on, and this reply answers a retransmission
                byte[] body = results.copyFrom(statusAt + 4);
                for (var t : st.sequenced) states.sequences().settle(t, status, body, st.current, st.currentStateId);
                st.sequenced.clear();
            }
            index = opIndex + 1;
            if (status == Nfs4Status.NFS4_OK && Op.replacesCurrentFh(op)) st.currentStateId = null;
            if (op == Op.SEQUENCE && st.replay != null) {
                byte[] again = new byte[headroom + st.replay.length]; // a cached reply is small (the session's limit)
                System.arraycopy(st.replay, 0, again, headroom, st.replay.length);
                done.complete(again);
                return false;
            }
            if (st.replyOverhead + resultBytes() > st.replyLimit) {
                // RFC 8881 §2.10.6.4: the operation whose result does not fit gets the error in its place
                status = st.replyOverhead + resultBytes() > st.session.fore().maxResponseSize() ? Nfs4Status.REP_TOO_BIG : Nfs4Status.REP_TOO_BIG_TO_CACHE;
                results.truncate(start);
                results.writeInt(op).writeInt(status);
            }
            if (status != Nfs4Status.NFS4_OK) {
                complete(status);
                return false;
            }
            return true;
        }

        /** The COMPOUND-level rules on where an operation may appear (sessions, minor versions). */
        private int admissible(int op) {
            // the xattr operations extend 4.2 (RFC 8276), but a 4.1 COMPOUND may carry them too: a client that mounted
            // with 4.1 never sends them, and conformance suites run at 4.1 do
            boolean known = op <= (st.minorVersion >= 2 ? Op.LAST_V42 : Op.LAST_V41) || (Op.xattr(op) && st.minorVersion >= 1);
            if (op < Op.ACCESS || !known) return Nfs4Status.OP_ILLEGAL;
            if (st.minorVersion == 0) {
                if (op > Op.RELEASE_LOCKOWNER) return Nfs4Status.OP_ILLEGAL;
                return st.export != null && st.export.readOnly() && Op.changesFiles(op) ? Nfs4Status.ROFS : Nfs4Status.NFS4_OK;
            }
            if (Op.v40Only(op)) return Nfs4Status.NOTSUPP;
            if (index == 0) {
                if (op == Op.SEQUENCE) return Nfs4Status.NFS4_OK;
                if (Op.sessionless(op)) return numOps == 1 ? Nfs4Status.NFS4_OK : Nfs4Status.NOT_ONLY_OP;
                return Nfs4Status.OP_NOT_IN_SESSION;
            }
            if (op == Op.SEQUENCE) return Nfs4Status.SEQUENCE_POS;
            if (st.export != null && st.export.readOnly() && Op.changesFiles(op)) return Nfs4Status.ROFS;
            if (st.session == null && !Op.sessionless(op)) return Nfs4Status.OP_NOT_IN_SESSION;
            return Nfs4Status.NFS4_OK;
        }

        private void finish(int op, int status) {
            results.writeInt(op).writeInt(status);
            index++;
            complete(status);
        }

        private void complete(int status) {
            if (status != Nfs4Status.NFS4_OK) compoundErrors++;
            results.patchInt(headroom, status);
            results.patchInt(headroom + 4, tag.length);
            results.patchFixedOpaque(headroom + 8, tag);
            results.patchInt(headroom + headerBytes - 4, index);
            byte[] out = results.finish();
            if (st.slot != null) st.session.finish(st.slot, out, headroom);
            done.complete(out);
        }
    }

    /** Operations run, by operation number (what {@code --metrics} reports), and COMPOUNDs that ended in an error. */
    private final long[] opCalls = new long[Op.LAST_V42 + 1];
    private long compoundErrors;

    /** How long each operation took, by number (made when first run). */
    private final dev.cairn.core.metrics.LatencyHistogram[] opLatency = new dev.cairn.core.metrics.LatencyHistogram[Op.LAST_V42 + 1];

    private dev.cairn.core.metrics.LatencyHistogram opLatency(int op) {
        if (opLatency[op] == null) opLatency[op] = new dev.cairn.core.metrics.LatencyHistogram();
        return opLatency[op];
    }

    /** The latency histogram of operation {@code op}, or null if it never ran. */
    public dev.cairn.core.metrics.LatencyHistogram opLatencyOrNull(int op) { return op >= 0 && op < opLatency.length ? opLatency[op] : null; }

    /** Operations run so far, by number (a copy). */
    public long[] opCalls() { return opCalls.clone(); }

    public long compoundErrors() { return compoundErrors; }

    /** Lease upkeep: drops clients whose lease ran out. Called now and then by the gateway. */
    public int expireClients() {
        int n = clients.expire(clock.nanoTime());
        if (n > 0) log.info("{} NFS client(s) let their lease expire: their state is gone", n);
        return n;
    }

}
