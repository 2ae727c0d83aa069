package dev.cairn.sim;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.cairn.core.proto.Types.FileType;
import dev.cairn.nfs.NfsGateway;
import dev.cairn.nfs.client.Nfs4Client;
import dev.cairn.nfs.client.Nfs4Client.OpenFile;
import dev.cairn.nfs.v4.CompoundState;
import dev.cairn.nfs.v4.Nfs4Status;
import dev.cairn.nfs.v4.Op;
import dev.cairn.nfs.v4.state.ClientTable;
import dev.cairn.sim.workload.Oracle;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The NFS gateway in the simulator, driven by {@link Nfs4Client}: the file operations end to end over a
 * simulated cluster (so they run in every build, kernel client or not), COMMIT's durability across a lost
 * chunkserver, byte-range locks between two clients, and a gateway that dies mid-write: committed data
 * survives, and uncommitted data is resent because the write verifier changed.
 */
class NfsGatewaySimTest extends NfsScenario {
    static final int PIECE = 64 * 1024;

    @BeforeEach void start() { startWithGateway(5); }

    /** Writes {@code data} UNSTABLE in pieces; answers the verifier the writes carried. */
    long writeUnstable(Nfs4Client c, OpenFile f, byte[] data) {
        long verifier = 0;
        for (int off = 0; off < data.length; off += PIECE) {
            byte[] piece = Arrays.copyOfRange(data, off, Math.min(data.length, off + PIECE));
            long at = off;
            Nfs4Client.WriteResult w = nfs(() -> c.write(f, at, piece, Nfs4Client.UNSTABLE));
            assertThat(w.count()).isEqualTo(piece.length);
            verifier = w.verifier();
        }
        return verifier;
    }

    byte[] readAll(Nfs4Client c, OpenFile f, int length) {
        byte[] out = new byte[length];
        int at = 0;
        while (at < length) {
            int off = at;
            byte[] got = nfs(() -> c.read(f, off, PIECE * 4));
            if (got.length == 0) break;
            System.arraycopy(got, 0, out, at, got.length);
            at += got.length;
        }
        return Arrays.copyOf(out, at);
    }

    @Test void filesWrittenOverNfsAreCommittedToTheClusterAndReadBack() {
        Nfs4Client c = client("alice");
        byte[] root = nfs(() -> c.lookup("/"));
        byte[] dir = nfs(() -> c.mkdir(root, "d"));
        OpenFile f = nfs(() -> c.open(dir, "data", true));
        byte[] data = Oracle.content(7, 3 * 1024 * 1024 + 12345);
        long writeVerifier = writeUnstable(c, f, data);
        long commitVerifier = nfs(() -> c.commit(f.fh()));
        assertThat(commitVerifier).isEqualTo(writeVerifier);
        // a chunkserver dies after the COMMIT: every copy was fsynced, so the data is all still there
        this.c.chunkservers().get(0).crash();
        assertThat(readAll(c, f, data.length + 10)).isEqualTo(data);
        assertThat(read("/d/data")).as("read through the cluster's own client").isEqualTo(data);
        assertThat(nfs(() -> c.size(f.fh()))).isEqualTo((long) data.length);
        nfs(() -> c.close(f));

        List<String> names = new ArrayList<>();
        for (int i = 0; i < 40; i++) {
            String name = "f" + i;
            names.add(name);
            OpenFile g = nfs(() -> c.open(dir, name, true));
            nfs(() -> c.write(g, 0, name.getBytes(), Nfs4Client.FILE_SYNC));
            nfs(() -> c.close(g));
        }
        List<String> listed = nfs(() -> c.list(dir));
        assertThat(listed).containsAll(names).contains("data").hasSize(41);
        for (String name : names) nfs(() -> c.remove(dir, name));
        assertThat(nfs(() -> c.list(dir))).containsExactly("data");
    }

    @Test void specialFilesAreNamesWithAttributesAndNoData() {
        Nfs4Client c = client("alice");
        byte[] root = nfs(() -> c.lookup("/"));
        byte[] fifo = nfs(() -> c.create(root, "fifo", Nfs4Client.NF4FIFO, 0, 0, 0600));
        byte[] sock = nfs(() -> c.create(root, "sock", Nfs4Client.NF4SOCK, 0, 0, 0644));
        byte[] chr = nfs(() -> c.create(root, "null", Nfs4Client.NF4CHR, 1, 3, 0666));
        byte[] blk = nfs(() -> c.create(root, "loop0", Nfs4Client.NF4BLK, 7, 0xfffff, 0660));
        assertThat(nfs(() -> c.kind(fifo))).isEqualTo(new Nfs4Client.Kind(Nfs4Client.NF4FIFO, 0, 0));
        assertThat(nfs(() -> c.kind(sock))).isEqualTo(new Nfs4Client.Kind(Nfs4Client.NF4SOCK, 0, 0));
        assertThat(nfs(() -> c.kind(chr))).isEqualTo(new Nfs4Client.Kind(Nfs4Client.NF4CHR, 1, 3));
        assertThat(nfs(() -> c.kind(blk))).isEqualTo(new Nfs4Client.Kind(Nfs4Client.NF4BLK, 7, 0xfffff));
        // the cluster keeps them like any other name
        var attr = run(() -> this.c.client().lookup("/loop0"));
        assertThat(attr.type()).isEqualTo(FileType.BLOCK_DEVICE);
        assertThat(attr.target()).isEqualTo("7:1048575");
        assertThat(attr.mode()).isEqualTo(0660);
        // no data: OPEN answers WRONG_TYPE (4.1), and the names go like files
        assertThatThrownBy(() -> nfs(() -> c.open(root, "fifo", false)))
                .isInstanceOfSatisfying(Nfs4Client.NfsException.class, n -> assertThat(n.status).isEqualTo(Nfs4Status.WRONG_TYPE));
        for (String name : List.of("fifo", "sock", "null", "loop0")) nfs(() -> c.remove(root, name));
        assertThat(nfs(() -> c.list(root))).isEmpty();
    }

    @Test void shareReservationsHoldOffOthersTheOwnersUpgradeAndSpecialStateids() {
        Nfs4Client c = client("alice");
        byte[] root = nfs(() -> c.lookup("/"));
        OpenFile f = nfs(() -> c.open(root, "shared", true, Nfs4Client.SHARE_ACCESS_BOTH, Nfs4Client.SHARE_DENY_WRITE, "o1"));
        nfs(() -> c.write(f, 0, "data".getBytes(), Nfs4Client.FILE_SYNC));
        OpenFile anonymous = new OpenFile(f.fh(), new byte[16]);
        assertThat(status(() -> c.write(anonymous, 0, "more".getBytes(), Nfs4Client.FILE_SYNC))).isEqualTo(Nfs4Status.LOCKED);
        assertThat(nfs(() -> c.read(anonymous, 0, 100))).as("reading is not denied").isEqualTo("data".getBytes());
        assertThat(status(() -> c.open(root, "shared", false, Nfs4Client.SHARE_ACCESS_WRITE, Nfs4Client.SHARE_DENY_NONE, "o2")))
                .isEqualTo(Nfs4Status.SHARE_DENIED);
        assertThat(status(() -> c.open(root, "shared", false, Nfs4Client.SHARE_ACCESS_WRITE, Nfs4Client.SHARE_DENY_NONE, "o1")))
                .as("its own deny holds against the owner's upgrade").isEqualTo(Nfs4Status.SHARE_DENIED);
        OpenFile reader = nfs(() -> c.open(root, "shared", false, Nfs4Client.SHARE_ACCESS_READ, Nfs4Client.SHARE_DENY_NONE, "o2"));
        assertThat(nfs(() -> c.read(reader, 0, 100))).isEqualTo("data".getBytes());
        nfs(() -> c.close(f));
        nfs(() -> c.write(anonymous, 0, "more".getBytes(), Nfs4Client.FILE_SYNC));
    }

    /**
     * No delegation is given (the gateway makes no callbacks), and a 4.1 client that said what it wants hears why
     * (RFC 8881 §18.16.3, as knfsd answers): OPEN_DELEGATE_NONE_EXT with WND4_RESOURCE for a read, write or any
     * delegation wanted, WND4_NOT_WANTED for none wanted, WND4_CANCELLED for a cancel; a plain OPEN_DELEGATE_NONE when
     * it said nothing. A want past WANT_CANCEL, or a flag no version defines, is INVAL.
     */
    @Test void delegationWantsAreAnsweredWithWhyNoneIsGiven() {
        Nfs4Client c = client("alice");
        byte[] root = nfs(() -> c.lookup("/"));
        nfs(() -> c.close(nfs(() -> c.open(root, "wanted", true))));
        int read = Nfs4Client.SHARE_ACCESS_READ;
        assertThat(nfs(() -> c.openDelegation(root, "wanted", read, "o0"))).isEqualTo(new Nfs4Client.Delegation(0, -1));
        assertThat(nfs(() -> c.openDelegation(root, "wanted", read | 0x0100, "o1"))).as("WANT_READ_DELEG").isEqualTo(new Nfs4Client.Delegation(3, 2));
        assertThat(nfs(() -> c.openDelegation(root, "wanted", read | 0x0200, "o2"))).as("WANT_WRITE_DELEG").isEqualTo(new Nfs4Client.Delegation(3, 2));
        assertThat(nfs(() -> c.openDelegation(root, "wanted", read | 0x0300 | 0x10000, "o3"))).as("WANT_ANY_DELEG, signal when available")
                .isEqualTo(new Nfs4Client.Delegation(3, 2));
        assertThat(nfs(() -> c.openDelegation(root, "wanted", read | 0x0400, "o4"))).as("WANT_NO_DELEG").isEqualTo(new Nfs4Client.Delegation(3, 0));
        assertThat(nfs(() -> c.openDelegation(root, "wanted", read | 0x0500, "o5"))).as("WANT_CANCEL").isEqualTo(new Nfs4Client.Delegation(3, 7));
        assertThat(status(() -> c.openDelegation(root, "wanted", read | 0x0600, "o6"))).as("no such want").isEqualTo(Nfs4Status.INVAL);
        assertThat(status(() -> c.openDelegation(root, "wanted", read | 0x400000, "o7"))).as("no such flag").isEqualTo(Nfs4Status.INVAL);
    }

    @Test void theCurrentStateidFollowsTheCurrentFileHandle() {
        Nfs4Client c = client("alice");
        byte[] root = nfs(() -> c.lookup("/"));
        OpenFile f = nfs(() -> c.open(root, "cur", true));
        nfs(() -> c.close(f));
        byte[] current = new byte[16];
        current[3] = 1; // seqid 1, other all zeros: "the current stateid"
        java.util.function.Consumer<dev.cairn.nfs.xdr.XdrEncoder> open = a -> {
            a.writeInt(0).writeInt(3).writeInt(0).writeLong(0).writeOpaque("cur-owner".getBytes());
            a.writeInt(0).writeInt(0).writeString("cur"); // NOCREATE, CLAIM_NULL
        };
        java.util.function.Consumer<dev.cairn.nfs.xdr.XdrEncoder> close = a -> a.writeInt(0).writeFixedOpaque(current);
        // OPEN then CLOSE of the current stateid in one COMPOUND
        assertThat(nfs(() -> c.statusOf(b -> b.putFh(root).op(Op.OPEN, open).op(Op.CLOSE, close)))).isEqualTo(Nfs4Status.NFS4_OK);
        // a handle put after the OPEN unsets it: nothing to close
        assertThat(nfs(() -> c.statusOf(b -> b.putFh(root).op(Op.OPEN, open).putFh(root).op(Op.CLOSE, close)))).isEqualTo(Nfs4Status.BAD_STATEID);
        // ... unless SAVEFH kept it with its handle and RESTOREFH brought both back
        assertThat(nfs(() -> c.statusOf(b -> b.putFh(root).op(Op.OPEN, open).op(Op.SAVEFH, a -> { }).putFh(root).op(Op.RESTOREFH, a -> { })
                .op(Op.CLOSE, close)))).isEqualTo(Nfs4Status.NFS4_OK);
        // none set at all
        assertThat(nfs(() -> c.statusOf(b -> b.putFh(f.fh()).op(Op.CLOSE, close)))).isEqualTo(Nfs4Status.BAD_STATEID);
        assertThat(nfs(() -> c.statusOf(b -> b.putFh(f.fh()).op(Op.WRITE, a -> a.writeFixedOpaque(current).writeLong(0).writeInt(2).writeOpaque(new byte[1])))))
                .isEqualTo(Nfs4Status.BAD_STATEID);
    }

    /**
     * RFC 8881 §8.2.4: a stateid belongs to the client it was issued to; presented on another client's session it
     * is BAD_STATEID for every operation (it names nothing that client holds), so one client can neither write
     * through, read through, nor close another's open. RFC 8881 §8.2.2: an older seqid of one's own is OLD_STATEID.
     * RFC 7530 §9.1.4.3: a special stateid names no state, so CLOSE and OPEN_DOWNGRADE of one are BAD_STATEID.
     */
    @Test void aStateidServesOnlyItsOwnClientAtItsCurrentSeqid() {
        Nfs4Client alice = client("alice"), mallory = client("mallory");
        byte[] root = nfs(() -> alice.lookup("/"));
        OpenFile f = nfs(() -> alice.open(root, "private", true, Nfs4Client.SHARE_ACCESS_BOTH, Nfs4Client.SHARE_DENY_NONE, "o1"));
        nfs(() -> alice.write(f, 0, "secret".getBytes(), Nfs4Client.FILE_SYNC));
        assertThat(status(() -> mallory.write(f, 0, "owned!".getBytes(), Nfs4Client.FILE_SYNC))).isEqualTo(Nfs4Status.BAD_STATEID);
        assertThat(status(() -> mallory.read(f, 0, 100))).isEqualTo(Nfs4Status.BAD_STATEID);
        assertThat(status(() -> mallory.close(f))).isEqualTo(Nfs4Status.BAD_STATEID);
        assertThat(nfs(() -> alice.read(f, 0, 100))).as("untouched, still open").isEqualTo("secret".getBytes());

        // the same owner opening again moves the stateid's seqid on: the first one is old now
        OpenFile again = nfs(() -> alice.open(root, "private", false, Nfs4Client.SHARE_ACCESS_READ, Nfs4Client.SHARE_DENY_NONE, "o1"));
        assertThat(again.stateId()).isNotEqualTo(f.stateId());
        assertThat(status(() -> alice.write(f, 0, "stale".getBytes(), Nfs4Client.FILE_SYNC))).isEqualTo(Nfs4Status.OLD_STATEID);
        assertThat(status(() -> alice.read(f, 0, 10))).isEqualTo(Nfs4Status.OLD_STATEID);

        java.util.function.Function<byte[], java.util.function.Consumer<dev.cairn.nfs.xdr.XdrEncoder>> closeOf = sid -> a -> a.writeInt(0).writeFixedOpaque(sid);
        assertThat(nfs(() -> alice.statusOf(b -> b.putFh(f.fh()).op(Op.CLOSE, closeOf.apply(f.stateId()))))).isEqualTo(Nfs4Status.OLD_STATEID);
        assertThat(nfs(() -> alice.statusOf(b -> b.putFh(f.fh()).op(Op.CLOSE, closeOf.apply(new byte[16]))))).as("anonymous").isEqualTo(Nfs4Status.BAD_STATEID);
        byte[] bypass = new byte[16];
        Arrays.fill(bypass, (byte) 0xff);
        assertThat(nfs(() -> alice.statusOf(b -> b.putFh(f.fh()).op(Op.CLOSE, closeOf.apply(bypass))))).as("bypass").isEqualTo(Nfs4Status.BAD_STATEID);
        nfs(() -> alice.close(again));
    }

    /**
     * RFC 7530 §16.19.4 (RFC 8881 §18.18.3): OPEN_DOWNGRADE goes to exactly the union of the share modes of some of
     * the owner's OPENs of the file; a mode never opened (READ after only BOTH) is INVAL, and a downgrade drops the
     * OPENs outside the new modes.
     */
    @Test void anOpenDowngradesOnlyToModesItsOpensMade() {
        Nfs4Client c = client("alice");
        byte[] root = nfs(() -> c.lookup("/"));
        OpenFile both = nfs(() -> c.open(root, "modes", true, Nfs4Client.SHARE_ACCESS_BOTH, Nfs4Client.SHARE_DENY_NONE, "o1"));
        java.util.function.BiFunction<byte[], int[], Integer> downgrade = (sid, modes) -> nfs(() -> c.statusOf(b -> b.putFh(both.fh())
                .op(Op.OPEN_DOWNGRADE, a -> a.writeFixedOpaque(sid).writeInt(0).writeInt(modes[0]).writeInt(modes[1]))));
        assertThat(downgrade.apply(both.stateId(), new int[] {Nfs4Client.SHARE_ACCESS_READ, 0})).as("READ never opened").isEqualTo(Nfs4Status.INVAL);
        OpenFile read = nfs(() -> c.open(root, "modes", false, Nfs4Client.SHARE_ACCESS_READ, Nfs4Client.SHARE_DENY_NONE, "o1"));
        assertThat(downgrade.apply(read.stateId(), new int[] {Nfs4Client.SHARE_ACCESS_WRITE, 0})).as("WRITE never opened").isEqualTo(Nfs4Status.INVAL);
        assertThat(downgrade.apply(read.stateId(), new int[] {Nfs4Client.SHARE_ACCESS_BOTH, Nfs4Client.SHARE_DENY_WRITE})).as("a deny never asked").isEqualTo(Nfs4Status.INVAL);
        assertThat(downgrade.apply(read.stateId(), new int[] {Nfs4Client.SHARE_ACCESS_READ, 0})).isEqualTo(Nfs4Status.NFS4_OK);
        byte[] now = read.stateId().clone();
        now[3]++; // the downgrade moved the seqid on
        assertThat(status(() -> c.write(new OpenFile(both.fh(), now), 0, "x".getBytes(), Nfs4Client.FILE_SYNC))).isEqualTo(Nfs4Status.OPENMODE);
        assertThat(downgrade.apply(now, new int[] {Nfs4Client.SHARE_ACCESS_BOTH, 0})).as("BOTH was given up").isEqualTo(Nfs4Status.INVAL);
    }

    /**
     * ACCESS (RFC 7530 §16.1.4) calls a right "supported" only where it means something for the object: LOOKUP and
     * DELETE on a directory, EXECUTE on a file. GETATTR's space_* (what df shows) are the live chunkservers' space.
     */
    @Test void accessRightsFitTheObjectAndDfSeesTheClustersSpace() {
        Nfs4Client c = client("alice");
        byte[] root = nfs(() -> c.lookup("/"));
        OpenFile f = nfs(() -> c.open(root, "plain", true));
        nfs(() -> c.write(f, 0, new byte[200_000], Nfs4Client.FILE_SYNC));
        nfs(() -> c.close(f));
        int all = 0x3f, lookup = 0x02, delete = 0x10, execute = 0x20;
        int[] dir = nfs(() -> c.access(root, all));
        assertThat(dir[0]).isEqualTo(all & ~execute);
        assertThat(dir[1]).as("root may do all it may ask").isEqualTo(all & ~execute);
        int[] file = nfs(() -> c.access(f.fh(), all));
        assertThat(file[0]).isEqualTo(all & ~(lookup | delete));
        assertThat(file[1] & ~file[0]).as("granted within supported").isZero();

        sim.runUntil(sim.now() + 3 * SECOND); // the chunkservers' heartbeats carry the space the file takes
        nfs(() -> c.space(root)); // the first query asks the master; its answer comes in the background
        sim.runUntil(sim.now() + SECOND);
        long[] space = nfs(() -> c.space(root));
        assertThat(space[0]).as("space_total: five chunkservers").isEqualTo(5 * SimCluster.CAPACITY_BYTES);
        assertThat(space[1]).as("space_free").isPositive().isLessThan(space[0]);
        assertThat(space[2]).as("space_avail").isEqualTo(space[1]);
        assertThat(space[3]).as("files_total").isPositive();
    }

    /**
     * RFC 7530 §16.26.4: a rename of a name onto itself, or onto another name of the same file, succeeds and does
     * nothing: both names stay, and the directory's change_info says it did not change. A real rename moves it.
     */
    @Test void aRenameOntoTheSameFileIsANoOp() {
        Nfs4Client c = client("alice");
        byte[] root = nfs(() -> c.lookup("/"));
        OpenFile f = nfs(() -> c.open(root, "one", true));
        nfs(() -> c.close(f));
        nfs(() -> c.link(f.fh(), root, "two"));
        for (String[] names : new String[][] {{"one", "one"}, {"one", "two"}, {"two", "one"}}) {
            long[] info = nfs(() -> c.rename(root, names[0], names[1]));
            assertThat(info[0]).as("%s -> %s: source unchanged", names[0], names[1]).isEqualTo(info[1]);
            assertThat(info[2]).as("target unchanged").isEqualTo(info[3]);
        }
        assertThat(nfs(() -> c.list(root))).contains("one", "two");
        long[] moved = nfs(() -> c.rename(root, "two", "three"));
        assertThat(moved[0]).isLessThan(moved[1]);
        assertThat(nfs(() -> c.list(root))).contains("one", "three").doesNotContain("two");
    }

    /** RFC 7530 §16.16.4: the createattrs of an OPEN that creates are the new file's, its size included. */
    @Test void anOpenCreatingAFileSetsTheSizeItAsks() {
        Nfs4Client c = client("alice");
        byte[] root = nfs(() -> c.lookup("/"));
        byte[] sizeAttr = new dev.cairn.nfs.xdr.XdrEncoder().writeLong(32).toByteArray();
        assertThat(nfs(() -> c.statusOf(b -> b.putFh(root).op(Op.OPEN, a -> {
            a.writeInt(0).writeInt(3).writeInt(0).writeLong(0).writeOpaque("sized-owner".getBytes());
            a.writeInt(1).writeInt(0); // OPEN4_CREATE, UNCHECKED4
            a.writeInt(1).writeInt(1 << dev.cairn.nfs.v4.Fattr.SIZE).writeOpaque(sizeAttr);
            a.writeInt(0).writeString("sized"); // CLAIM_NULL
        })))).isEqualTo(Nfs4Status.NFS4_OK);
        byte[] fh = nfs(() -> c.lookup("/sized"));
        assertThat(nfs(() -> c.size(fh))).isEqualTo(32);
    }

    /**
     * RFC 7530 §3.1.1: a 4.0 client that lost a reply resends the call with its xid, and a non-idempotent
     * operation must not run twice: a retransmitted mkdir gets the first reply (OK), not EXIST; a new call
     * (another xid) doing the same is EXIST.
     */
    @Test void aRetransmitted40CreateIsAnsweredFromTheReplyCache() {
        client("alice"); // the export's root exists once a client has looked
        CompoundState.Connection conn = new CompoundState.Connection(77, "127.0.0.1");
        java.util.function.IntFunction<byte[]> mkdir = xid -> {
            dev.cairn.nfs.xdr.XdrEncoder e = new dev.cairn.nfs.xdr.XdrEncoder();
            e.writeInt(xid).writeInt(0).writeInt(2).writeInt(100003).writeInt(4).writeInt(1);
            byte[] cred = new dev.cairn.nfs.xdr.XdrEncoder().writeInt(0).writeString("host").writeInt(0).writeInt(0).writeInt(0).toByteArray();
            e.writeInt(1).writeOpaque(cred).writeInt(0).writeOpaque(new byte[0]); // AUTH_SYS root, AUTH_NONE verifier
            e.writeOpaque(new byte[0]).writeInt(0).writeInt(2); // tag, minor version 0, two operations
            e.writeInt(Op.PUTROOTFH);
            e.writeInt(Op.CREATE).writeInt(2).writeString("made-once").writeInt(0).writeOpaque(new byte[0]); // NF4DIR, no attributes
            return e.toByteArray();
        };
        java.util.function.Function<byte[], byte[]> send = record -> nfs(() -> ((NfsGateway) gateway.node()).service().handle(record, conn));
        java.util.function.ToIntFunction<byte[]> status = reply -> java.nio.ByteBuffer.wrap(reply, 24, 4).getInt(); // after the RPC header
        byte[] first = send.apply(mkdir.apply(9001));
        assertThat(status.applyAsInt(first)).isEqualTo(Nfs4Status.NFS4_OK);
        byte[] again = send.apply(mkdir.apply(9001));
        assertThat(again).as("the retransmission's reply is the first one's").isEqualTo(first);
        assertThat(status.applyAsInt(send.apply(mkdir.apply(9002)))).as("a new call").isEqualTo(Nfs4Status.EXIST);
    }

    /** A 4.0 client over this gateway, on a connection of its own. */
    Raw40 raw40() {
        CompoundState.Connection conn = new CompoundState.Connection(40, "127.0.0.1");
        return new Raw40(record -> nfs(() -> ((NfsGateway) gateway.node()).service().handle(record, conn)), 40_000);
    }

    /**
     * RFC 7530 §16.16.5, §16.18: the first OPEN of a new 4.0 open-owner asks for OPEN_CONFIRM, and until then its
     * stateid serves nothing else (BAD_STATEID); the confirmation moves the seqid on; a second one is BAD_STATEID;
     * the confirmed owner's later OPENs need none.
     */
    @Test void aNew40OpenOwnerConfirmsItsFirstOpen() {
        client("alice");
        Raw40 raw = raw40();
        int[] status = new int[1];
        long clientId = client40(raw, "c40");

        java.util.function.BiFunction<Integer, String, java.util.function.Consumer<dev.cairn.nfs.xdr.XdrEncoder>> open = (seqid, name) -> e -> {
            e.writeInt(Op.PUTROOTFH);
            e.writeInt(Op.OPEN).writeInt(seqid).writeInt(3).writeInt(0).writeLong(clientId).writeOpaque("o40".getBytes());
            e.writeInt(1).writeInt(0).writeInt(0).writeOpaque(new byte[0]); // CREATE UNCHECKED4, no attributes
            e.writeInt(0).writeString(name); // CLAIM_NULL
            e.writeInt(Op.GETFH);
        };
        // the reply of PUTROOTFH, OPEN, GETFH: {rflags} and the stateid and handle
        java.util.function.Function<dev.cairn.nfs.xdr.XdrDecoder, Object[]> opened = r -> {
            r.readInt(); r.readInt(); // PUTROOTFH OK
            r.readInt(); r.readInt(); // OPEN OK
            byte[] sid = r.readFixedOpaque(16);
            r.skip(4 + 8 + 8);
            int rflags = r.readInt();
            r.skip(4 * r.readInt());
            r.readInt(); // OPEN_DELEGATE_NONE
            r.readInt(); r.readInt(); // GETFH OK
            return new Object[] {rflags, sid, r.readOpaque(128)};
        };
        var firstReply = raw.run(status, open.apply(0, "f40"), 3);
        assertThat(status[0]).isEqualTo(Nfs4Status.NFS4_OK);
        Object[] first = opened.apply(firstReply);
        assertThat((int) first[0] & 2).as("OPEN4_RESULT_CONFIRM").isEqualTo(2);
        byte[] sid = (byte[]) first[1], fh = (byte[]) first[2];
        java.util.function.Function<byte[], java.util.function.Consumer<dev.cairn.nfs.xdr.XdrEncoder>> write = id -> e -> e.writeInt(Op.PUTFH).writeOpaque(fh)
                .writeInt(Op.WRITE).writeFixedOpaque(id).writeLong(0).writeInt(2).writeOpaque("x".getBytes());
        raw.run(status, write.apply(sid), 2);
        assertThat(status[0]).as("unconfirmed").isEqualTo(Nfs4Status.BAD_STATEID);

        var c = raw.run(status, e -> e.writeInt(Op.PUTFH).writeOpaque(fh).writeInt(Op.OPEN_CONFIRM).writeFixedOpaque(sid).writeInt(1), 2);
        assertThat(status[0]).isEqualTo(Nfs4Status.NFS4_OK);
        c.readInt(); c.readInt(); c.readInt(); c.readInt();
        byte[] confirmed = c.readFixedOpaque(16);
        assertThat(java.nio.ByteBuffer.wrap(confirmed).getInt()).as("seqid moved on").isEqualTo(java.nio.ByteBuffer.wrap(sid).getInt() + 1);
        raw.run(status, e -> e.writeInt(Op.PUTFH).writeOpaque(fh).writeInt(Op.OPEN_CONFIRM).writeFixedOpaque(confirmed).writeInt(2), 2);
        assertThat(status[0]).as("confirmed already").isEqualTo(Nfs4Status.BAD_STATEID);
        raw.run(status, write.apply(confirmed), 2);
        assertThat(status[0]).isEqualTo(Nfs4Status.NFS4_OK);

        var secondReply = raw.run(status, open.apply(2, "g40"), 3); // the refused confirmation left the sequence at 1
        assertThat(status[0]).isEqualTo(Nfs4Status.NFS4_OK);
        Object[] second = opened.apply(secondReply);
        assertThat((int) second[0] & 2).as("the owner is confirmed").isZero();
    }

    /**
     * RFC 7530 §9.6: a 4.0 client's READs and WRITEs with its stateid renew its lease — a busy Linux 4.0 client sends no
     * RENEW. Writing every half lease for three leases keeps its open; silent for a lease, its state is gone (EXPIRED).
     */
    @Test void a40ClientsWritesRenewItsLease() {
        client("alice");
        Raw40 raw = raw40();
        int[] status = new int[1];
        long clientId = client40(raw, "busy40");
        var r = raw.run(status, e -> {
            e.writeInt(Op.PUTROOTFH);
            e.writeInt(Op.OPEN).writeInt(0).writeInt(3).writeInt(0).writeLong(clientId).writeOpaque("busy-owner".getBytes());
            e.writeInt(1).writeInt(0).writeInt(0).writeOpaque(new byte[0]); // CREATE UNCHECKED4, no attributes
            e.writeInt(0).writeString("busy40"); // CLAIM_NULL
            e.writeInt(Op.GETFH);
        }, 3);
        assertThat(status[0]).isEqualTo(Nfs4Status.NFS4_OK);
        r.readInt(); r.readInt(); r.readInt(); r.readInt();
        byte[] sid = r.readFixedOpaque(16);
        r.skip(4 + 8 + 8 + 4);
        r.skip(4 * r.readInt());
        r.readInt(); r.readInt(); r.readInt();
        byte[] fh = r.readOpaque(128);
        var c = raw.run(status, e -> e.writeInt(Op.PUTFH).writeOpaque(fh).writeInt(Op.OPEN_CONFIRM).writeFixedOpaque(sid).writeInt(1), 2);
        assertThat(status[0]).isEqualTo(Nfs4Status.NFS4_OK);
        c.readInt(); c.readInt(); c.readInt(); c.readInt();
        byte[] confirmed = c.readFixedOpaque(16);
        for (int i = 0; i < 6; i++) {
            sim.runUntil(sim.now() + ClientTable.LEASE_NANOS / 2);
            long at = i;
            raw.run(status, e -> e.writeInt(Op.PUTFH).writeOpaque(fh).writeInt(Op.WRITE).writeFixedOpaque(confirmed).writeLong(at)
                    .writeInt(2).writeOpaque("x".getBytes()), 2);
            assertThat(status[0]).as("a write %d half-leases in, no RENEW sent", i + 1).isEqualTo(Nfs4Status.NFS4_OK);
        }
        sim.runUntil(sim.now() + ClientTable.LEASE_NANOS + 20 * SECOND);
        raw.run(status, e -> e.writeInt(Op.PUTFH).writeOpaque(fh).writeInt(Op.WRITE).writeFixedOpaque(confirmed).writeLong(0)
                .writeInt(2).writeOpaque("x".getBytes()), 2);
        assertThat(status[0]).as("silent for a lease").isEqualTo(Nfs4Status.EXPIRED);
    }

    /** A confirmed 4.0 client id (SETCLIENTID, SETCLIENTID_CONFIRM) for {@code id}. */
    static long client40(Raw40 raw, String id) {
        int[] status = new int[1];
        var d = raw.run(status, e -> e.writeInt(Op.SETCLIENTID).writeFixedOpaque(new byte[8]).writeOpaque(id.getBytes())
                .writeInt(0x40000000).writeString("tcp").writeString("127.0.0.1.0.0").writeInt(1), 1);
        assertThat(status[0]).isEqualTo(Nfs4Status.NFS4_OK);
        d.readInt();
        d.readInt();
        long clientId = d.readLong();
        byte[] confirm = d.readFixedOpaque(8);
        raw.run(status, e -> e.writeInt(Op.SETCLIENTID_CONFIRM).writeLong(clientId).writeFixedOpaque(confirm), 1);
        assertThat(status[0]).isEqualTo(Nfs4Status.NFS4_OK);
        return clientId;
    }

    /** The status an NFS call failed with. */
    @Test void byteRangeLocksAreSharedBetweenClients() {
        Nfs4Client a = client("alice"), b = client("bob");
        byte[] root = nfs(() -> a.lookup("/"));
        OpenFile fa = nfs(() -> a.open(root, "locked", true));
        OpenFile fb = nfs(() -> b.open(root, "locked", false));
        byte[] lock = nfs(() -> a.lock(fa, "a-owner", Nfs4Client.WRITE_LT, 100, 50));
        assertThat(nfs(() -> b.lockFree(fb.fh(), "b-owner", Nfs4Client.READ_LT, 149, 1))).isFalse();
        assertThat(nfs(() -> b.lockFree(fb.fh(), "b-owner", Nfs4Client.WRITE_LT, 150, -1))).as("just past it").isTrue();
        assertThatThrownBy(() -> nfs(() -> b.lock(fb, "b-owner", Nfs4Client.READ_LT, 0, 101)))
                .satisfies(e -> assertThat(status(e)).isEqualTo(Nfs4Status.DENIED));
        assertThatThrownBy(() -> nfs(() -> a.close(fa))).as("CLOSE while a lock is held")
                .satisfies(e -> assertThat(status(e)).isEqualTo(Nfs4Status.LOCKS_HELD));
        nfs(() -> a.unlock(fa.fh(), lock, 0, -1));
        byte[] shared = nfs(() -> b.lock(fb, "b-owner", Nfs4Client.READ_LT, 0, 101));
        assertThat(shared).hasSize(16);
        assertThat(nfs(() -> a.lockFree(fa.fh(), "a-owner", Nfs4Client.READ_LT, 0, 1))).as("read locks share").isTrue();
        assertThat(nfs(() -> a.lockFree(fa.fh(), "a-owner", Nfs4Client.WRITE_LT, 0, 1))).isFalse();
        nfs(() -> a.close(fa));
    }

    /**
     * A client that stops renewing its lease (RFC 8881 §8.3) loses its opens and locks once the lease ends: the share
     * reservation and the byte-range lock it held no longer keep another client out, and its own next call hears that
     * its session is gone; a client that keeps renewing keeps its state.
     */
    @Test void anExpiredClientsOpensAndLocksHoldNoOneOff() {
        Nfs4Client a = client("alice"), b = client("bob");
        byte[] root = nfs(() -> a.lookup("/"));
        OpenFile fa = nfs(() -> a.open(root, "held", true, Nfs4Client.SHARE_ACCESS_BOTH, Nfs4Client.SHARE_DENY_WRITE, "a-owner"));
        nfs(() -> a.lock(fa, "a-lock", Nfs4Client.WRITE_LT, 0, 100));
        OpenFile fb = nfs(() -> b.open(root, "held", false, Nfs4Client.SHARE_ACCESS_READ, Nfs4Client.SHARE_DENY_NONE, "b-owner"));
        nfs(() -> b.lock(fb, "b-lock", Nfs4Client.READ_LT, 200, 10));
        assertThat(status(() -> b.open(root, "held", false, Nfs4Client.SHARE_ACCESS_WRITE, Nfs4Client.SHARE_DENY_NONE, "b-writer")))
                .isEqualTo(Nfs4Status.SHARE_DENIED);
        assertThat(nfs(() -> b.lockFree(fb.fh(), "b-other", Nfs4Client.READ_LT, 50, 1))).isFalse();
        // alice goes silent; bob renews twice a lease-time
        for (int i = 0; i < 5; i++) {
            sim.runUntil(sim.now() + ClientTable.LEASE_NANOS / 2);
            nfs(() -> b.lookup("/"));
        }
        OpenFile writer = nfs(() -> b.open(root, "held", false, Nfs4Client.SHARE_ACCESS_WRITE, Nfs4Client.SHARE_DENY_NONE, "b-writer"));
        nfs(() -> b.lock(writer, "b-writer-lock", Nfs4Client.WRITE_LT, 0, 100));
        assertThat(nfs(() -> b.lockFree(fb.fh(), "b-other", Nfs4Client.WRITE_LT, 205, 1))).as("bob's own lock stayed").isFalse();
        assertThat(status(() -> a.read(fa, 0, 10))).isEqualTo(Nfs4Status.BADSESSION);
    }

    /**
     * A small file's OPEN-create, WRITE, COMMIT and CLOSE cost five master round trips (the create, the directory's
     * attributes for its permission check, the file's for the first WRITE, the lease, the commit, whose answer carries
     * the attributes): the small-file rate is bound by them. It cost seven when the first WRITE fetched the same
     * attributes twice and a GetAttr followed every commit. Each file still reads back.
     */
    @Test void aSmallFileCostsFiveMasterRoundTrips() {
        Nfs4Client c = client("alice");
        byte[] root = nfs(() -> c.lookup("/"));
        sim.runUntil(sim.now() + SECOND);
        dev.cairn.master.Master master = this.c.servingMaster();
        String[] kinds = {"CreateIn", "GetAttr", "LookupIn", "WriteLease", "CommitLength", "GetChunks"};
        long before = 0;
        for (String k : kinds) before += master.requestsAnswered(k);
        int files = 10;
        for (int i = 0; i < files; i++) {
            int k = i;
            OpenFile f = nfs(() -> c.open(root, "small" + k, true));
            nfs(() -> c.write(f, 0, ("file " + k).getBytes(), Nfs4Client.UNSTABLE));
            nfs(() -> c.commit(f.fh()));
            nfs(() -> c.close(f));
        }
        long after = 0;
        for (String k : kinds) after += master.requestsAnswered(k);
        assertThat(after - before).as("master round trips for %d small files", files).isEqualTo(5L * files);
        for (int i = 0; i < files; i++) {
            int k = i;
            OpenFile f = nfs(() -> c.open(root, "small" + k, false));
            assertThat(nfs(() -> c.read(f, 0, 100))).isEqualTo(("file " + k).getBytes());
            nfs(() -> c.close(f));
        }
    }

    @Test void aGatewayKilledMidWriteKeepsCommittedDataAndTheVerifierMakesClientsResend() {
        Nfs4Client c = client("carol");
        byte[] root = nfs(() -> c.lookup("/"));
        OpenFile f = nfs(() -> c.open(root, "journal", true));
        byte[] first = Oracle.content(11, 1024 * 1024);
        long v1 = writeUnstable(c, f, first);
        assertThat(nfs(() -> c.commit(f.fh()))).isEqualTo(v1);
        byte[] second = Oracle.content(12, 512 * 1024);
        byte[] both = new byte[first.length + second.length];
        System.arraycopy(first, 0, both, 0, first.length);
        System.arraycopy(second, 0, both, first.length, second.length);
        OpenFile g = f;
        for (int off = 0; off < second.length; off += PIECE) {
            int at = off;
            nfs(() -> c.write(g, first.length + at, Arrays.copyOfRange(second, at, at + PIECE), Nfs4Client.UNSTABLE));
        }

        gateway.crash(); // mid-write: the second part was never committed, and the gateway's memory is gone
        sim.runUntil(sim.now() + 5 * SECOND);
        gateway.start();
        sim.runUntil(sim.now() + SECOND);

        assertThatThrownBy(() -> nfs(() -> c.commit(g.fh()))).as("the old session is gone").isInstanceOf(RuntimeException.class);
        // grace period: carol is on the gateway's record of clients, so until she is back (or a lease
        // period has passed) a client that held nothing may not take new state she might want to reclaim
        Nfs4Client newcomer = client("dave");
        assertThatThrownBy(() -> nfs(() -> newcomer.open(root, "other", true)))
                .satisfies(e -> assertThat(status(e)).isEqualTo(dev.cairn.nfs.v4.Nfs4Status.GRACE));
        nfs(c::connect); // her RECLAIM_COMPLETE: every recorded client is back, the grace period ends early
        nfs(() -> newcomer.open(root, "other", true));
        // the handle outlived the gateway; the open state did not, so the client opens again
        OpenFile again = nfs(() -> c.open(root, "journal", false));
        assertThat(again.fh()).isEqualTo(f.fh());
        assertThat(readAll(c, again, both.length)).as("committed data survived; the uncommitted part is gone").isEqualTo(first);
        long v2 = nfs(() -> c.commit(again.fh()));
        assertThat(v2).as("a new verifier tells the client its uncommitted writes are lost").isNotEqualTo(v1);
        // ... so it resends them, and commits again
        for (int off = 0; off < second.length; off += PIECE) {
            int at = off;
            Nfs4Client.WriteResult w = nfs(() -> c.write(again, first.length + at, Arrays.copyOfRange(second, at, at + PIECE), Nfs4Client.UNSTABLE));
            assertThat(w.verifier()).isEqualTo(v2);
        }
        assertThat(nfs(() -> c.commit(again.fh()))).isEqualTo(v2);
        assertThat(read("/journal")).isEqualTo(both);
    }

    static int status(Throwable e) {
        for (Throwable t = e; t != null; t = t.getCause()) if (t instanceof Nfs4Client.NfsException n) return n.status;
        throw new AssertionError("not an NFS error", e);
    }

    /**
     * RFC 8276: extended attributes set (either, create, replace), read, listed in pages and removed, each rule's
     * status; the change attribute moves with each change; readers need read and writers write permission, as ACCESS's
     * XA bits say; an acknowledged change survives the master losing power; they go with their file.
     */
    @Test void extendedAttributesFollowRfc8276AndSurviveAMasterPowerLoss() {
        Nfs4Client c = client("alice");
        byte[] root = nfs(() -> c.lookup("/"));
        OpenFile f = nfs(() -> c.open(root, "tagged", true));
        nfs(() -> c.close(f));
        byte[] fh = f.fh();
        Nfs4Client.Supported sup = nfs(() -> c.supported(root));
        assertThat(dev.cairn.nfs.v4.Fattr.isSet(sup.attributes(), 82)).as("xattr_support listed as supported (§8.2)").isTrue();
        assertThat(sup.xattrSupport()).isTrue();
        int either = 0, create = 1, replace = 2;
        byte[] one = "one".getBytes(java.nio.charset.StandardCharsets.UTF_8);
        assertThat(status(() -> c.getXattr(fh, "user.a"))).isEqualTo(Nfs4Status.NOXATTR);
        long before = nfs(() -> c.change(fh));
        long[] info = nfs(() -> c.setXattr(fh, "user.a", one, create));
        long after = nfs(() -> c.change(fh));
        assertThat(after).as("the change attribute moves").isGreaterThan(before);
        assertThat(info[1]).as("change_info's after").isEqualTo(after);
        assertThat(nfs(() -> c.getXattr(fh, "user.a"))).isEqualTo(one);
        assertThat(status(() -> c.setXattr(fh, "user.a", one, create))).as("CREATE of a set one").isEqualTo(Nfs4Status.EXIST);
        assertThat(status(() -> c.setXattr(fh, "user.b", one, replace))).as("REPLACE of an unset one").isEqualTo(Nfs4Status.NOXATTR);
        nfs(() -> c.setXattr(fh, "user.a", new byte[] {2}, replace));
        assertThat(nfs(() -> c.getXattr(fh, "user.a"))).containsExactly(2);
        nfs(() -> c.setXattr(fh, "user.a", new byte[0], either));
        assertThat(nfs(() -> c.getXattr(fh, "user.a"))).as("an empty value is a value").isEmpty();
        // limits: a value Linux can set (64 KiB) fits, one byte more is XATTR2BIG; names as component4s
        byte[] max = Oracle.content(3, 64 * 1024);
        nfs(() -> c.setXattr(fh, "user.max", max, either));
        assertThat(nfs(() -> c.getXattr(fh, "user.max"))).isEqualTo(max);
        assertThat(status(() -> c.setXattr(fh, "user.big", new byte[64 * 1024 + 1], either))).isEqualTo(Nfs4Status.XATTR2BIG);
        assertThat(status(() -> c.setXattr(fh, "", one, either))).isEqualTo(Nfs4Status.INVAL);
        assertThat(status(() -> c.setXattr(fh, "n".repeat(256), one, either))).isEqualTo(Nfs4Status.NAMETOOLONG);
        assertThat(status(() -> c.setXattr(fh, "user.x", one, 7))).as("no such setxattr_option4").isEqualTo(Nfs4Status.INVAL);
        assertThat(status(() -> c.getXattr(fh, "user.big"))).as("a refused set leaves nothing").isEqualTo(Nfs4Status.NOXATTR);

        // LISTXATTRS in pages: maxcount covers the cookie, the count, the names and eof (16 bytes and 12 a name here)
        List<String> expected = new ArrayList<>(List.of("user.a", "user.max"));
        for (int i = 0; i < 9; i++) {
            int k = i;
            nfs(() -> c.setXattr(fh, "user.k" + k, new byte[] {(byte) k}, create));
            expected.add("user.k" + k);
        }
        java.util.Collections.sort(expected);
        assertThat(status(() -> c.listXattrs(fh, 0, 16 + 11))).as("not even one name fits").isEqualTo(Nfs4Status.TOOSMALL);
        List<String> paged = new ArrayList<>();
        long cookie = 0;
        for (int pages = 0; ; pages++) {
            long from = cookie;
            Nfs4Client.XattrNames page = nfs(() -> c.listXattrs(fh, from, 16 + 2 * 12));
            assertThat(page.names()).hasSizeBetween(1, 2);
            paged.addAll(page.names());
            cookie = page.cookie();
            assertThat(pages).isLessThan(expected.size());
            if (page.eof()) break;
        }
        assertThat(paged).isEqualTo(expected);
        Nfs4Client.XattrNames all = nfs(() -> c.listXattrs(fh, 0, 65536));
        assertThat(all.names()).isEqualTo(expected);
        assertThat(all.eof()).isTrue();

        // another user: may read and list (the file is 0644) but not change, and ACCESS says so
        Nfs4Client bob = client("bob", 1000);
        int xaRead = 0x40, xaWrite = 0x80, xaList = 0x100;
        assertThat(nfs(() -> bob.getXattr(fh, "user.k1"))).containsExactly(1);
        assertThat(status(() -> bob.setXattr(fh, "user.k1", one, either))).isEqualTo(Nfs4Status.ACCESS);
        assertThat(status(() -> bob.removeXattr(fh, "user.k1"))).isEqualTo(Nfs4Status.ACCESS);
        assertThat(nfs(() -> bob.access(fh, xaRead | xaWrite | xaList))).containsExactly(xaRead | xaWrite | xaList, xaRead | xaList);
        assertThat(nfs(() -> c.access(fh, xaRead | xaWrite | xaList))).containsExactly(xaRead | xaWrite | xaList, xaRead | xaWrite | xaList);

        nfs(() -> c.removeXattr(fh, "user.k0"));
        assertThat(status(() -> c.removeXattr(fh, "user.k0"))).isEqualTo(Nfs4Status.NOXATTR);
        assertThat(status(() -> c.getXattr(fh, "user.k0"))).isEqualTo(Nfs4Status.NOXATTR);
        expected.remove("user.k0");

        // acknowledged means durable: the master loses power at once and comes back with every change
        nfs(() -> c.setXattr(fh, "user.last", one, create));
        expected.add("user.last");
        java.util.Collections.sort(expected);
        this.c.master().powerLoss();
        sim.runUntil(sim.now() + SECOND);
        this.c.master().start();
        sim.runUntil(sim.now() + 10 * SECOND);
        assertThat(nfs(() -> c.listXattrs(fh, 0, 65536)).names()).isEqualTo(expected);
        assertThat(nfs(() -> c.getXattr(fh, "user.last"))).isEqualTo(one);

        // they are the file's: gone with its last name, a new file of the same name has none
        nfs(() -> c.remove(root, "tagged"));
        OpenFile g = nfs(() -> c.open(root, "tagged", true));
        Nfs4Client.XattrNames none = nfs(() -> c.listXattrs(g.fh(), 0, 16));
        assertThat(none.names()).isEmpty();
        assertThat(none.eof()).isTrue();
        assertThat(status(() -> c.getXattr(fh, "user.last"))).as("the old handle").isEqualTo(Nfs4Status.STALE);
    }

    @Test void aNameThatIsNotUtf8IsInvalForItsOperationNotBadXdr() {
        Nfs4Client c = client("alice");
        byte[] root = nfs(() -> c.lookup("/"));
        byte[] notUtf8 = {(byte) 0xff, (byte) 0xfe}; // RFC 8881 §14.4, RFC 7530 §12.7: INVAL
        for (int op : new int[] {Op.LOOKUP, Op.REMOVE}) {
            assertThat(nfs(() -> c.statusOf(b -> b.putFh(root).op(op, a -> a.writeOpaque(notUtf8))))).as("op " + op).isEqualTo(Nfs4Status.INVAL);
        }
        assertThat(nfs(() -> c.statusOf(b -> b.putFh(root).op(Op.SAVEFH, a -> { }).op(Op.RENAME, a -> a.writeOpaque(notUtf8).writeString("b")))))
                .isEqualTo(Nfs4Status.INVAL);
        // the XDR layer still refuses such a string where no operation status covers it
        assertThat(new dev.cairn.nfs.xdr.XdrDecoder(new dev.cairn.nfs.xdr.XdrEncoder().writeOpaque(notUtf8).toByteArray()).readUtf8OrNull(16)).isNull();
    }

    @Test void dotAndDotDotAreBadNamesForEveryOperationThatTakesAName() {
        Nfs4Client c = client("alice");
        byte[] root = nfs(() -> c.lookup("/"));
        byte[] dir = nfs(() -> c.mkdir(root, "d"));
        for (String dots : new String[] {".", ".."}) {
            // NFSv4 directories hold no "." or ".." (RFC 8881 §6.3.2 for LOOKUP): such a name is BADNAME, not NOENT
            for (int op : new int[] {Op.LOOKUP, Op.REMOVE}) {
                assertThat(nfs(() -> c.statusOf(b -> b.putFh(dir).op(op, a -> a.writeString(dots))))).as(op + " " + dots).isEqualTo(Nfs4Status.BADNAME);
            }
            assertThat(nfs(() -> c.statusOf(b -> b.putFh(root).op(Op.SAVEFH, a -> { }).putFh(dir).op(Op.RENAME, a -> a.writeString("d").writeString(dots)))))
                    .as("rename onto " + dots).isEqualTo(Nfs4Status.BADNAME);
        }
        // and the directory is untouched: still there, still empty
        assertThat(nfs(() -> c.list(dir))).isEmpty();
        assertThat(nfs(() -> c.list(root))).contains("d");
    }

    @Test void aReaddirTooSmallForOneEntryIsTooSmallButAnEmptyDirectoryFitsInSixteenBytes() {
        Nfs4Client c = client("alice");
        byte[] root = nfs(() -> c.lookup("/"));
        byte[] empty = nfs(() -> c.mkdir(root, "empty"));
        byte[] full = nfs(() -> c.mkdir(root, "full"));
        nfs(() -> c.mkdir(full, "an-entry"));
        java.util.function.BiFunction<byte[], Integer, Integer> readdir = (dir, maxcount) -> nfs(() -> c.statusOf(b -> b.putFh(dir)
                .op(Op.READDIR, a -> a.writeLong(0).writeFixedOpaque(new byte[8]).writeInt(maxcount).writeInt(maxcount).writeInt(1).writeInt(1 << 1))));
        // RFC 8881 §18.23.3: the verifier, the end of the list and eof take 16 bytes
        assertThat(readdir.apply(empty, 0)).isEqualTo(Nfs4Status.TOOSMALL);
        assertThat(readdir.apply(empty, 15)).isEqualTo(Nfs4Status.TOOSMALL);
        assertThat(readdir.apply(empty, 16)).isEqualTo(Nfs4Status.NFS4_OK);
        assertThat(readdir.apply(full, 16)).isEqualTo(Nfs4Status.TOOSMALL);
        assertThat(readdir.apply(full, 24)).isEqualTo(Nfs4Status.TOOSMALL);
        assertThat(readdir.apply(full, 4096)).isEqualTo(Nfs4Status.NFS4_OK);
    }
}
