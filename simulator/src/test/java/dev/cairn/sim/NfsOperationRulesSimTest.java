package dev.cairn.sim;

import static org.assertj.core.api.Assertions.assertThat;

import dev.cairn.nfs.client.Nfs4Client;
import dev.cairn.nfs.client.Nfs4Client.OpenFile;
import dev.cairn.nfs.v4.Nfs4Status;
import dev.cairn.nfs.v4.Op;
import dev.cairn.nfs.xdr.XdrEncoder;
import java.nio.charset.StandardCharsets;
import java.util.function.Consumer;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * One RFC or POSIX rule per assertion for the operations that decide what a caller may see and change: VERIFY and
 * NVERIFY, LOOKUPP, SETATTR's ownership and permission rules, ACCESS by owner, group and others, what a create may make
 * and give, sticky directories, OPEN's checks and arguments, READ and WRITE without an open, and argument limits (RFC
 * 7530 for 4.0, RFC 8881 for 4.1). Attributes are checked with VERIFY itself, once its own rules are shown. Written
 * from the mutants no earlier test killed (docs/benchmarks.md); three of these tests found bugs.
 */
class NfsOperationRulesSimTest extends NfsScenario {
    static final int SIZE = 4, RDATTR_ERROR = 11, ACL = 12, FILEID = 20, MODE = 33, OWNER = 36, OWNER_GROUP = 37, TIME_MODIFY_SET = 54;
    static final int ACCESS4_READ = 0x01, ACCESS4_LOOKUP = 0x02, ACCESS4_MODIFY = 0x04, ACCESS4_EXTEND = 0x08, ACCESS4_DELETE = 0x10,
            ACCESS4_EXECUTE = 0x20;
    static final byte[] ANONYMOUS = new byte[16];

    Nfs4Client root;
    byte[] top;

    @BeforeEach void start() {
        startWithGateway(3);
        root = client("root");
        top = nfs(() -> root.lookup("/"));
    }

    /** A fattr4 naming the attributes {@code attrs} (ascending), their values written by {@code values} in that order. */
    static Consumer<XdrEncoder> fattr(int[] attrs, Consumer<XdrEncoder> values) {
        return e -> {
            int words = attrs[attrs.length - 1] / 32 + 1;
            int[] bitmap = new int[words];
            for (int a : attrs) bitmap[a / 32] |= 1 << (a % 32);
            e.writeInt(words);
            for (int w : bitmap) e.writeInt(w);
            XdrEncoder v = new XdrEncoder();
            values.accept(v);
            e.writeOpaque(v.toByteArray());
        };
    }

    static Consumer<XdrEncoder> fattr(int attr, Consumer<XdrEncoder> value) { return fattr(new int[] {attr}, value); }

    int verify(Nfs4Client c, byte[] fh, int attr, Consumer<XdrEncoder> value) {
        return nfs(() -> c.statusOf(b -> b.putFh(fh).op(Op.VERIFY, fattr(attr, value))));
    }

    int nverify(Nfs4Client c, byte[] fh, int attr, Consumer<XdrEncoder> value) {
        return nfs(() -> c.statusOf(b -> b.putFh(fh).op(Op.NVERIFY, fattr(attr, value))));
    }

    /** SETATTR4args: {@code stateId} and one attribute. */
    static Consumer<XdrEncoder> setAttrArgs(byte[] stateId, int attr, Consumer<XdrEncoder> value) {
        return a -> {
            a.writeFixedOpaque(stateId);
            fattr(attr, value).accept(a);
        };
    }

    int setAttr(Nfs4Client c, byte[] fh, byte[] stateId, int attr, Consumer<XdrEncoder> value) {
        return nfs(() -> c.statusOf(b -> b.putFh(fh).op(Op.SETATTR, setAttrArgs(stateId, attr, value))));
    }

    int setMode(Nfs4Client c, byte[] fh, int mode) { return setAttr(c, fh, ANONYMOUS, MODE, v -> v.writeInt(mode)); }

    boolean hasMode(byte[] fh, int mode) { return verify(root, fh, MODE, v -> v.writeInt(mode)) == Nfs4Status.NFS4_OK; }

    /** A file of {@code length} bytes made by {@code c} in {@code dir}, closed; its handle. */
    byte[] file(Nfs4Client c, byte[] dir, String name, int length) {
        OpenFile f = nfs(() -> c.open(dir, name, true));
        if (length > 0) nfs(() -> c.write(f, 0, new byte[length], Nfs4Client.FILE_SYNC));
        nfs(() -> c.close(f));
        return f.fh();
    }

    /** A directory everyone may create in (mode 0777), made by root. */
    byte[] sharedDirectory(String name) {
        byte[] d = nfs(() -> root.mkdir(top, name));
        assertThat(setMode(root, d, 0777)).isEqualTo(Nfs4Status.NFS4_OK);
        return d;
    }

    /**
     * RFC 8881 §18.31 / §18.15 (RFC 7530 §16.35 / §16.15): VERIFY goes on only if every named attribute equals the
     * server's, else NOT_SAME and the COMPOUND stops there; NVERIFY the other way round (SAME). Write-only attributes and
     * rdattr_error are INVAL, an attribute the server does not support ATTRNOTSUPP, no current handle NOFILEHANDLE.
     */
    @Test void verifyAndNverifyCompareAttributesAndStopTheCompound() {
        byte[] f = file(root, top, "sized", 100);
        assertThat(verify(root, f, SIZE, v -> v.writeLong(100))).isEqualTo(Nfs4Status.NFS4_OK);
        assertThat(verify(root, f, SIZE, v -> v.writeLong(99))).isEqualTo(Nfs4Status.NOT_SAME);
        assertThat(nverify(root, f, SIZE, v -> v.writeLong(100))).isEqualTo(Nfs4Status.SAME);
        assertThat(nverify(root, f, SIZE, v -> v.writeLong(99))).isEqualTo(Nfs4Status.NFS4_OK);
        // several attributes: all must match (size, then mode: the order of their numbers)
        int[] sizeAndMode = {SIZE, MODE};
        assertThat(nfs(() -> root.statusOf(b -> b.putFh(f).op(Op.VERIFY, fattr(sizeAndMode, v -> v.writeLong(100).writeInt(0644))))))
                .isEqualTo(Nfs4Status.NFS4_OK);
        assertThat(nfs(() -> root.statusOf(b -> b.putFh(f).op(Op.VERIFY, fattr(sizeAndMode, v -> v.writeLong(100).writeInt(0600))))))
                .isEqualTo(Nfs4Status.NOT_SAME);
        assertThat(nfs(() -> root.statusOf(b -> b.putFh(f).op(Op.NVERIFY, fattr(sizeAndMode, v -> v.writeLong(100).writeInt(0600))))))
                .as("NVERIFY goes on when any attribute differs").isEqualTo(Nfs4Status.NFS4_OK);
        // the COMPOUND stops at a failed VERIFY: the SETATTR after it does not run
        assertThat(nfs(() -> root.statusOf(b -> b.putFh(f).op(Op.VERIFY, fattr(SIZE, v -> v.writeLong(7)))
                .op(Op.SETATTR, setAttrArgs(ANONYMOUS, MODE, v -> v.writeInt(0600)))))).isEqualTo(Nfs4Status.NOT_SAME);
        assertThat(hasMode(f, 0644)).as("the SETATTR after a failed VERIFY did not run").isTrue();
        assertThat(hasMode(f, 0600)).isFalse();
        assertThat(nfs(() -> root.statusOf(b -> b.putFh(f).op(Op.NVERIFY, fattr(SIZE, v -> v.writeLong(100)))
                .op(Op.SETATTR, setAttrArgs(ANONYMOUS, MODE, v -> v.writeInt(0600)))))).isEqualTo(Nfs4Status.SAME);
        assertThat(hasMode(f, 0644)).as("nor after a failed NVERIFY").isTrue();

        assertThat(verify(root, f, TIME_MODIFY_SET, v -> v.writeInt(0))).as("a write-only attribute").isEqualTo(Nfs4Status.INVAL);
        assertThat(nverify(root, f, TIME_MODIFY_SET, v -> v.writeInt(0))).isEqualTo(Nfs4Status.INVAL);
        assertThat(verify(root, f, RDATTR_ERROR, v -> v.writeInt(0))).isEqualTo(Nfs4Status.INVAL);
        assertThat(verify(root, f, ACL, v -> v.writeInt(0))).as("acl: not supported").isEqualTo(Nfs4Status.ATTRNOTSUPP);
        assertThat(nverify(root, f, ACL, v -> v.writeInt(0))).isEqualTo(Nfs4Status.ATTRNOTSUPP);
        assertThat(nfs(() -> root.statusOf(b -> b.op(Op.VERIFY, fattr(SIZE, v -> v.writeLong(100)))))).isEqualTo(Nfs4Status.NOFILEHANDLE);
        assertThat(nfs(() -> root.statusOf(b -> b.op(Op.NVERIFY, fattr(SIZE, v -> v.writeLong(100)))))).isEqualTo(Nfs4Status.NOFILEHANDLE);
    }

    /**
     * RFC 8881 §18.14 (RFC 7530 §16.14): LOOKUPP makes the current handle the directory's parent; at the root NOENT, on
     * a symbolic link SYMLINK, on any other non-directory NOTDIR, with no current handle NOFILEHANDLE.
     */
    @Test void lookupParentClimbsOneDirectory() {
        byte[] a = nfs(() -> root.mkdir(top, "a"));
        byte[] b = nfs(() -> root.mkdir(a, "b"));
        long topId = nfs(() -> root.fileId(top)), aId = nfs(() -> root.fileId(a)), bId = nfs(() -> root.fileId(b));
        assertThat(java.util.Set.of(topId, aId, bId)).hasSize(3);
        assertThat(nfs(() -> root.statusOf(x -> x.putFh(b).op(Op.LOOKUPP, e -> { }).op(Op.VERIFY, fattr(FILEID, v -> v.writeLong(aId))))))
                .isEqualTo(Nfs4Status.NFS4_OK);
        assertThat(nfs(() -> root.statusOf(x -> x.putFh(b).op(Op.LOOKUPP, e -> { }).op(Op.LOOKUPP, e -> { })
                .op(Op.VERIFY, fattr(FILEID, v -> v.writeLong(topId)))))).isEqualTo(Nfs4Status.NFS4_OK);
        assertThat(nfs(() -> root.statusOf(x -> x.putFh(top).op(Op.LOOKUPP, e -> { })))).isEqualTo(Nfs4Status.NOENT);
        byte[] f = file(root, a, "plain", 0);
        assertThat(nfs(() -> root.statusOf(x -> x.putFh(f).op(Op.LOOKUPP, e -> { })))).isEqualTo(Nfs4Status.NOTDIR);
        assertThat(nfs(() -> root.statusOf(x -> x.putFh(a).op(Op.CREATE, e -> {
            e.writeInt(Nfs4Client.NF4LNK).writeString("plain").writeString("link");
            fattr(MODE, v -> v.writeInt(0777)).accept(e);
        })))).isEqualTo(Nfs4Status.NFS4_OK);
        byte[] link = nfs(() -> root.lookup("/a/link"));
        assertThat(nfs(() -> root.statusOf(x -> x.putFh(link).op(Op.LOOKUPP, e -> { })))).isEqualTo(Nfs4Status.SYMLINK);
        assertThat(nfs(() -> root.statusOf(x -> x.op(Op.LOOKUPP, e -> { })))).isEqualTo(Nfs4Status.NOFILEHANDLE);
    }

    /**
     * SETATTR (RFC 8881 §18.30) with POSIX's rules, as knfsd applies them: only the owner (or root) changes the mode;
     * only root gives a file away; the owner may change its group only to one it is in; times may be set by the owner or
     * by anyone who may write; a size needs write permission (checked here for the anonymous stateid) and a regular
     * file (a directory is ISDIR, anything else INVAL).
     */
    @Test void setAttrFollowsOwnershipAndPermissionRules() {
        byte[] shared = sharedDirectory("shared");
        Nfs4Client alice = client("alice", 1000), bob = client("bob", 2000);
        byte[] f = file(alice, shared, "alices", 10);
        assertThat(hasMode(f, 0644)).isTrue();
        assertThat(setMode(bob, f, 0666)).as("not the owner").isEqualTo(Nfs4Status.PERM);
        assertThat(hasMode(f, 0644)).isTrue();
        assertThat(setMode(alice, f, 0640)).isEqualTo(Nfs4Status.NFS4_OK);
        assertThat(hasMode(f, 0640)).isTrue();
        assertThat(setMode(root, f, 0644)).as("root may").isEqualTo(Nfs4Status.NFS4_OK);
        assertThat(hasMode(f, 0644)).isTrue();

        Consumer<XdrEncoder> bobOwns = v -> v.writeString("2000");
        assertThat(setAttr(alice, f, ANONYMOUS, OWNER, bobOwns)).as("only root gives a file away").isEqualTo(Nfs4Status.PERM);
        assertThat(setAttr(bob, f, ANONYMOUS, OWNER, bobOwns)).as("nor takes one").isEqualTo(Nfs4Status.PERM);
        assertThat(verify(root, f, OWNER, v -> v.writeString("1000"))).as("still alice's").isEqualTo(Nfs4Status.NFS4_OK);
        assertThat(setAttr(alice, f, ANONYMOUS, OWNER, v -> v.writeString("1000"))).as("to oneself: no change").isEqualTo(Nfs4Status.NFS4_OK);
        assertThat(setAttr(alice, f, ANONYMOUS, OWNER_GROUP, v -> v.writeString("3000"))).as("a group she is not in").isEqualTo(Nfs4Status.PERM);
        assertThat(setAttr(bob, f, ANONYMOUS, OWNER_GROUP, v -> v.writeString("2000"))).as("not the owner").isEqualTo(Nfs4Status.PERM);
        assertThat(setAttr(alice, f, ANONYMOUS, OWNER_GROUP, v -> v.writeString("1000"))).isEqualTo(Nfs4Status.NFS4_OK);

        Consumer<XdrEncoder> serverTime = v -> v.writeInt(0); // SET_TO_SERVER_TIME4
        assertThat(setAttr(bob, f, ANONYMOUS, TIME_MODIFY_SET, serverTime)).as("neither owner nor writer").isEqualTo(Nfs4Status.ACCESS);
        assertThat(setAttr(alice, f, ANONYMOUS, TIME_MODIFY_SET, serverTime)).isEqualTo(Nfs4Status.NFS4_OK);
        assertThat(setAttr(bob, f, ANONYMOUS, SIZE, v -> v.writeLong(3))).as("a size without write permission").isEqualTo(Nfs4Status.ACCESS);
        assertThat(verify(root, f, SIZE, v -> v.writeLong(10))).isEqualTo(Nfs4Status.NFS4_OK);
        assertThat(setMode(alice, f, 0666)).isEqualTo(Nfs4Status.NFS4_OK);
        assertThat(setAttr(bob, f, ANONYMOUS, TIME_MODIFY_SET, serverTime)).as("a writer may set times").isEqualTo(Nfs4Status.NFS4_OK);
        assertThat(setAttr(bob, f, ANONYMOUS, SIZE, v -> v.writeLong(3))).isEqualTo(Nfs4Status.NFS4_OK);
        assertThat(verify(root, f, SIZE, v -> v.writeLong(3))).isEqualTo(Nfs4Status.NFS4_OK);
        assertThat(setMode(bob, f, 0600)).as("writing is not owning").isEqualTo(Nfs4Status.PERM);

        assertThat(setAttr(root, shared, ANONYMOUS, SIZE, v -> v.writeLong(0))).isEqualTo(Nfs4Status.ISDIR);
        byte[] fifo = nfs(() -> root.create(top, "fifo", Nfs4Client.NF4FIFO, 0, 0, 0666));
        assertThat(setAttr(root, fifo, ANONYMOUS, SIZE, v -> v.writeLong(0))).isEqualTo(Nfs4Status.INVAL);
        assertThat(nfs(() -> root.statusOf(b -> b.op(Op.SETATTR, setAttrArgs(ANONYMOUS, MODE, v -> v.writeInt(0600))))))
                .isEqualTo(Nfs4Status.NOFILEHANDLE);
    }

    /**
     * Set-id bits go with a change their owner did not make (Linux's VFS, as knfsd applies it): a WRITE by anyone but
     * root drops the set-user-id bit, and the set-group-id bit where group execute is set (without it the bit marks
     * mandatory locking, not privilege); a change of owner or group drops them whoever makes it, off the mode given in
     * the same SETATTR if there is one. Root's writes keep them, and so does a directory's set-group-id bit (what is
     * created in it inherits its group) across a change of owner. Without this, whoever may write a set-user-id
     * program could make it run their code with its owner's privileges.
     */
    @Test void aWriteOrAChangeOfOwnerDropsSetIdBits() {
        byte[] shared = sharedDirectory("setid");
        Nfs4Client alice = client("alice", 1000);
        byte[] f = file(alice, shared, "prog", 10);
        assertThat(setMode(alice, f, 06755)).isEqualTo(Nfs4Status.NFS4_OK);
        OpenFile byRoot = nfs(() -> root.open(shared, "prog", false));
        nfs(() -> root.write(byRoot, 0, new byte[4], Nfs4Client.FILE_SYNC));
        nfs(() -> root.close(byRoot));
        assertThat(hasMode(f, 06755)).as("root's write keeps them").isTrue();
        OpenFile byAlice = nfs(() -> alice.open(shared, "prog", false));
        nfs(() -> alice.write(byAlice, 4, new byte[4], Nfs4Client.UNSTABLE));
        assertThat(hasMode(f, 0755)).as("the owner's write drops both").isTrue();
        assertThat(setMode(alice, f, 06745)).isEqualTo(Nfs4Status.NFS4_OK);
        nfs(() -> alice.write(byAlice, 8, new byte[4], Nfs4Client.FILE_SYNC));
        assertThat(hasMode(f, 02745)).as("set-group-id without group execute: a locking mark, kept").isTrue();
        nfs(() -> alice.close(byAlice));

        assertThat(setMode(root, f, 06755)).isEqualTo(Nfs4Status.NFS4_OK);
        assertThat(setAttr(root, f, ANONYMOUS, OWNER, v -> v.writeString("2000"))).isEqualTo(Nfs4Status.NFS4_OK);
        assertThat(hasMode(f, 0755)).as("given away by root: dropped").isTrue();
        int[] modeAndOwner = {MODE, OWNER};
        assertThat(nfs(() -> root.statusOf(b -> b.putFh(f).op(Op.SETATTR, a -> {
            a.writeFixedOpaque(ANONYMOUS);
            fattr(modeAndOwner, v -> v.writeInt(06711).writeString("1000")).accept(a);
        })))).isEqualTo(Nfs4Status.NFS4_OK);
        assertThat(hasMode(f, 0711)).as("with a mode in the same SETATTR: off that mode").isTrue();
        assertThat(verify(root, f, OWNER, v -> v.writeString("1000"))).isEqualTo(Nfs4Status.NFS4_OK);
        assertThat(setMode(alice, f, 02755)).isEqualTo(Nfs4Status.NFS4_OK);
        assertThat(setAttr(alice, f, ANONYMOUS, OWNER_GROUP, v -> v.writeString("1000"))).isEqualTo(Nfs4Status.NFS4_OK);
        assertThat(hasMode(f, 0755)).as("a change of group by the owner: dropped").isTrue();

        byte[] d = nfs(() -> root.mkdir(top, "inheriting"));
        assertThat(setMode(root, d, 02775)).isEqualTo(Nfs4Status.NFS4_OK);
        assertThat(setAttr(root, d, ANONYMOUS, OWNER, v -> v.writeString("1000"))).isEqualTo(Nfs4Status.NFS4_OK);
        assertThat(hasMode(d, 02775)).as("a directory's set-group-id bit stays").isTrue();
    }

    /**
     * A size set on a file by anyone but root drops its set-id bits as a WRITE does (Linux's truncate(2), which knfsd
     * applies; xfstests generic/684), the owner's truncate too; root's keeps them, as does a SETATTR that sets no size.
     */
    @Test void aTruncateByAnyoneButRootDropsSetIdBits() {
        byte[] shared = sharedDirectory("setid");
        Nfs4Client alice = client("alice", 1000), bob = client("bob", 2000);
        byte[] f = file(alice, shared, "prog", 10);
        assertThat(setMode(alice, f, 06777)).isEqualTo(Nfs4Status.NFS4_OK);
        assertThat(setAttr(root, f, ANONYMOUS, SIZE, v -> v.writeLong(8))).isEqualTo(Nfs4Status.NFS4_OK);
        assertThat(hasMode(f, 06777)).as("root's truncate keeps them").isTrue();
        assertThat(setAttr(bob, f, ANONYMOUS, TIME_MODIFY_SET, v -> v.writeInt(0))).isEqualTo(Nfs4Status.NFS4_OK);
        assertThat(hasMode(f, 06777)).as("a SETATTR without a size keeps them").isTrue();
        assertThat(setAttr(bob, f, ANONYMOUS, SIZE, v -> v.writeLong(4))).isEqualTo(Nfs4Status.NFS4_OK);
        assertThat(hasMode(f, 0777)).as("a truncate by someone else who may write it drops both").isTrue();
        assertThat(setMode(alice, f, 06767)).isEqualTo(Nfs4Status.NFS4_OK);
        assertThat(setAttr(alice, f, ANONYMOUS, SIZE, v -> v.writeLong(20))).isEqualTo(Nfs4Status.NFS4_OK);
        assertThat(hasMode(f, 02767)).as("the owner's, growing it: set-user-id dropped, set-group-id without group execute kept").isTrue();
        assertThat(verify(root, f, SIZE, v -> v.writeLong(20))).isEqualTo(Nfs4Status.NFS4_OK);
        assertThat(setMode(alice, f, 04777)).isEqualTo(Nfs4Status.NFS4_OK);
        // OPEN(create, UNCHECKED4) over the file with a size of 0: open(2) with O_TRUNC
        assertThat(nfs(() -> bob.statusOf(b -> b.putFh(shared).op(Op.OPEN, openCreate("prog", fattr(SIZE, v -> v.writeLong(0)))))))
                .isEqualTo(Nfs4Status.NFS4_OK);
        assertThat(hasMode(f, 0777)).as("a truncating OPEN by someone else drops it").isTrue();
        assertThat(verify(root, f, SIZE, v -> v.writeLong(0))).isEqualTo(Nfs4Status.NFS4_OK);
    }

    /**
     * ACCESS (RFC 8881 §18.1): what is granted follows the mode's owner, group or other bits for the caller, and root
     * may read and write anything and execute what has an execute bit; nothing outside what was asked is answered.
     */
    @Test void accessGrantsFollowTheModeForOwnerGroupAndOthers() {
        byte[] shared = sharedDirectory("shared");
        Nfs4Client alice = client("alice", 1000), bob = client("bob", 2000);
        byte[] f = file(alice, shared, "f", 1);
        int fileRights = ACCESS4_READ | ACCESS4_MODIFY | ACCESS4_EXTEND | ACCESS4_EXECUTE;
        assertThat(setMode(alice, f, 0640)).isEqualTo(Nfs4Status.NFS4_OK);
        assertThat(nfs(() -> alice.access(f, fileRights))).containsExactly(fileRights, ACCESS4_READ | ACCESS4_MODIFY | ACCESS4_EXTEND);
        assertThat(nfs(() -> bob.access(f, fileRights))).as("other: no bits").containsExactly(fileRights, 0);
        assertThat(nfs(() -> root.access(f, fileRights))).as("root, no execute bit").containsExactly(fileRights, ACCESS4_READ | ACCESS4_MODIFY | ACCESS4_EXTEND);
        assertThat(setMode(alice, f, 0754)).isEqualTo(Nfs4Status.NFS4_OK);
        assertThat(nfs(() -> alice.access(f, fileRights))).containsExactly(fileRights, fileRights);
        assertThat(nfs(() -> bob.access(f, fileRights))).as("other: r--").containsExactly(fileRights, ACCESS4_READ);
        assertThat(nfs(() -> root.access(f, fileRights))).as("root, an execute bit").containsExactly(fileRights, fileRights);
        assertThat(nfs(() -> bob.access(f, ACCESS4_MODIFY))).as("only what was asked").containsExactly(ACCESS4_MODIFY, 0);
        // the group's bits: bob made a member through the owner_group
        assertThat(setAttr(root, f, ANONYMOUS, OWNER_GROUP, v -> v.writeString("2000"))).isEqualTo(Nfs4Status.NFS4_OK);
        assertThat(nfs(() -> bob.access(f, fileRights))).as("group: r-x").containsExactly(fileRights, ACCESS4_READ | ACCESS4_EXECUTE);

        int dirRights = ACCESS4_READ | ACCESS4_LOOKUP | ACCESS4_MODIFY | ACCESS4_EXTEND | ACCESS4_DELETE;
        byte[] d = nfs(() -> alice.mkdir(shared, "d"));
        assertThat(nfs(() -> alice.access(d, dirRights))).containsExactly(dirRights, dirRights);
        assertThat(nfs(() -> bob.access(d, dirRights))).as("other: r-x").containsExactly(dirRights, ACCESS4_READ | ACCESS4_LOOKUP);
        assertThat(setMode(alice, d, 0703)).isEqualTo(Nfs4Status.NFS4_OK);
        assertThat(nfs(() -> bob.access(d, dirRights))).as("other: -wx").containsExactly(dirRights, ACCESS4_LOOKUP | ACCESS4_MODIFY | ACCESS4_EXTEND | ACCESS4_DELETE);
        assertThat(nfs(() -> bob.statusOf(b -> b.op(Op.ACCESS, a -> a.writeInt(ACCESS4_READ))))).isEqualTo(Nfs4Status.NOFILEHANDLE);
    }

    /**
     * The attributes of a create are applied as SETATTR would (RFC 7530 §16.16.4, RFC 8881 §18.4.3): a user may not
     * create a file or directory owned by someone else, or in a group it is not in (PERM, and nothing is created); its
     * own ids, and root's choice of any, are taken.
     */
    @Test void aCreateGivesNoOwnerTheCallerCouldNotSet() {
        byte[] shared = sharedDirectory("shared");
        Nfs4Client alice = client("alice", 1000);
        // OPEN(create, UNCHECKED4) whose attributes name root as the owner, with the set-user-id bit
        assertThat(nfs(() -> alice.statusOf(b -> b.putFh(shared).op(Op.OPEN, openCreate("setuid", fattr(new int[] {MODE, OWNER},
                v -> v.writeInt(04755).writeString("0"))))))).isEqualTo(Nfs4Status.PERM);
        assertThat(nfs(() -> alice.list(shared))).as("nothing was created").isEmpty();
        assertThat(nfs(() -> alice.statusOf(b -> b.putFh(shared).op(Op.OPEN, openCreate("grouped", fattr(OWNER_GROUP, v -> v.writeString("0")))))))
                .isEqualTo(Nfs4Status.PERM);
        assertThat(nfs(() -> alice.statusOf(b -> b.putFh(shared).op(Op.CREATE, mkdirAs("rootdir", "0"))))).isEqualTo(Nfs4Status.PERM);
        assertThat(nfs(() -> alice.list(shared))).isEmpty();
        // her own ids are hers to give
        assertThat(nfs(() -> alice.statusOf(b -> b.putFh(shared).op(Op.OPEN, openCreate("mine", fattr(new int[] {OWNER, OWNER_GROUP},
                v -> v.writeString("1000").writeString("1000"))))))).isEqualTo(Nfs4Status.NFS4_OK);
        assertThat(nfs(() -> alice.statusOf(b -> b.putFh(shared).op(Op.CREATE, mkdirAs("mydir", "1000"))))).isEqualTo(Nfs4Status.NFS4_OK);
        // root may create for anyone
        assertThat(nfs(() -> root.statusOf(b -> b.putFh(shared).op(Op.CREATE, mkdirAs("forbob", "2000"))))).isEqualTo(Nfs4Status.NFS4_OK);
        byte[] forBob = nfs(() -> root.lookup("/shared/forbob"));
        assertThat(verify(root, forBob, OWNER, v -> v.writeString("2000"))).isEqualTo(Nfs4Status.NFS4_OK);
        assertThat(nfs(() -> alice.list(shared))).containsExactlyInAnyOrder("mine", "mydir", "forbob");
    }

    /**
     * A sticky directory (mode 1777, as /tmp): everyone may create in it, but only root, the directory's owner and an
     * entry's owner may remove the entry, rename it away or replace it by a rename (PERM otherwise, as knfsd answers).
     */
    @Test void aStickyDirectoryKeepsEachUsersEntriesTheirs() {
        byte[] tmp = nfs(() -> root.mkdir(top, "tmp"));
        assertThat(setMode(root, tmp, 01777)).isEqualTo(Nfs4Status.NFS4_OK);
        assertThat(hasMode(tmp, 01777)).isTrue();
        Nfs4Client alice = client("alice", 1000), bob = client("bob", 2000);
        file(alice, tmp, "alices", 5);
        file(bob, tmp, "bobs", 5);
        assertThat(status(() -> bob.remove(tmp, "alices"))).isEqualTo(Nfs4Status.PERM);
        assertThat(status(() -> bob.rename(tmp, "alices", "taken"))).isEqualTo(Nfs4Status.PERM);
        assertThat(status(() -> bob.rename(tmp, "bobs", "alices"))).as("replacing hers").isEqualTo(Nfs4Status.PERM);
        assertThat(status(() -> bob.rename(tmp, "alices", "alices"))).as("onto itself: nothing changes").isEqualTo(Nfs4Status.NFS4_OK);
        assertThat(nfs(() -> root.list(tmp))).containsExactlyInAnyOrder("alices", "bobs");
        assertThat(status(() -> bob.rename(tmp, "bobs", "bobs2"))).as("his own").isEqualTo(Nfs4Status.NFS4_OK);
        assertThat(status(() -> alice.rename(tmp, "alices", "bobs2"))).as("she replaces his").isEqualTo(Nfs4Status.PERM);
        assertThat(status(() -> alice.remove(tmp, "alices"))).isEqualTo(Nfs4Status.NFS4_OK);
        assertThat(status(() -> root.remove(tmp, "bobs2"))).as("root may").isEqualTo(Nfs4Status.NFS4_OK);
        // the directory's owner may remove anyone's entry; without the sticky bit anyone who may write the directory may
        byte[] owned = nfs(() -> alice.mkdir(sharedDirectory("shared"), "alices-tmp"));
        assertThat(setMode(alice, owned, 01777)).isEqualTo(Nfs4Status.NFS4_OK);
        file(bob, owned, "bobs", 1);
        assertThat(status(() -> alice.remove(owned, "bobs"))).isEqualTo(Nfs4Status.NFS4_OK);
        file(bob, owned, "bobs", 1);
        assertThat(setMode(alice, owned, 0777)).isEqualTo(Nfs4Status.NFS4_OK);
        file(alice, owned, "hers", 1);
        assertThat(status(() -> bob.remove(owned, "hers"))).isEqualTo(Nfs4Status.NFS4_OK);
        assertThat(nfs(() -> alice.list(owned))).containsExactly("bobs");
    }

    /**
     * CREATE (RFC 8881 §18.4): it makes directories, symlinks and special files, not regular files or named-attribute
     * objects (BADTYPE) and no type outside nfs_ftype4 (INVAL); names follow the component4 rules (INVAL empty, BADNAME
     * "." or with a slash, NAMETOOLONG); a symlink needs a target; a size is no attribute of a new non-file (INVAL); an
     * attribute the server does not have is ATTRNOTSUPP. Without a mode a directory is 0755, a symlink 0777, a FIFO 0644.
     */
    @Test void createMakesOnlyWhatItMayWithTheRightDefaults() {
        java.util.function.BiFunction<Integer, String, Integer> create = (type, name) -> nfs(() -> root.statusOf(b -> b.putFh(top).op(Op.CREATE, a -> {
            a.writeInt(type);
            if (type == Nfs4Client.NF4LNK) a.writeString("target");
            a.writeString(name).writeInt(0).writeOpaque(new byte[0]); // no attributes
        })));
        assertThat(create.apply(Nfs4Client.NF4REG, "reg")).as("OPEN makes regular files").isEqualTo(Nfs4Status.BADTYPE);
        assertThat(create.apply(8, "attrdir")).isEqualTo(Nfs4Status.BADTYPE);
        assertThat(create.apply(9, "namedattr")).isEqualTo(Nfs4Status.BADTYPE);
        assertThat(create.apply(0, "zero")).isEqualTo(Nfs4Status.INVAL);
        assertThat(create.apply(10, "ten")).isEqualTo(Nfs4Status.INVAL);
        assertThat(create.apply(Nfs4Client.NF4DIR, "")).isEqualTo(Nfs4Status.INVAL);
        assertThat(create.apply(Nfs4Client.NF4DIR, ".")).isEqualTo(Nfs4Status.BADNAME);
        assertThat(create.apply(Nfs4Client.NF4DIR, "..")).isEqualTo(Nfs4Status.BADNAME);
        assertThat(create.apply(Nfs4Client.NF4DIR, "a/b")).isEqualTo(Nfs4Status.BADNAME);
        assertThat(create.apply(Nfs4Client.NF4DIR, "n".repeat(256))).isEqualTo(Nfs4Status.NAMETOOLONG);
        assertThat(nfs(() -> root.list(top))).as("nothing made so far").isEmpty();
        assertThat(nfs(() -> root.statusOf(b -> b.putFh(top).op(Op.CREATE, a -> {
            a.writeInt(Nfs4Client.NF4LNK).writeString("").writeString("dangling");
            a.writeInt(0).writeOpaque(new byte[0]);
        })))).as("a symlink to nothing").isEqualTo(Nfs4Status.INVAL);
        assertThat(nfs(() -> root.statusOf(b -> b.putFh(top).op(Op.CREATE, a -> {
            a.writeInt(Nfs4Client.NF4DIR).writeString("sized");
            fattr(SIZE, v -> v.writeLong(0)).accept(a);
        })))).isEqualTo(Nfs4Status.INVAL);
        assertThat(nfs(() -> root.statusOf(b -> b.putFh(top).op(Op.CREATE, a -> {
            a.writeInt(Nfs4Client.NF4DIR).writeString("acl");
            fattr(ACL, v -> v.writeInt(0)).accept(a);
        })))).isEqualTo(Nfs4Status.ATTRNOTSUPP);
        assertThat(nfs(() -> root.list(top))).isEmpty();
        assertThat(nfs(() -> root.statusOf(b -> b.op(Op.CREATE, a -> {
            a.writeInt(Nfs4Client.NF4DIR).writeString("nowhere");
            a.writeInt(0).writeOpaque(new byte[0]);
        })))).isEqualTo(Nfs4Status.NOFILEHANDLE);

        assertThat(create.apply(Nfs4Client.NF4DIR, "dir")).isEqualTo(Nfs4Status.NFS4_OK);
        assertThat(create.apply(Nfs4Client.NF4LNK, "link")).isEqualTo(Nfs4Status.NFS4_OK);
        assertThat(create.apply(Nfs4Client.NF4FIFO, "fifo")).isEqualTo(Nfs4Status.NFS4_OK);
        assertThat(create.apply(Nfs4Client.NF4DIR, "dir")).as("the name is taken").isEqualTo(Nfs4Status.EXIST);
        assertThat(hasMode(nfs(() -> root.lookup("/dir")), 0755)).isTrue();
        assertThat(hasMode(nfs(() -> root.lookup("/link")), 0777)).isTrue();
        assertThat(hasMode(nfs(() -> root.lookup("/fifo")), 0644)).isTrue();
    }

    /**
     * An OPEN(create, UNCHECKED4) of an existing file with a size of 0 truncates it (RFC 7530 §16.16.5) — only once the
     * OPEN is known to succeed: not under another open's DENY_WRITE (SHARE_DENIED), not for a caller who may not open
     * the file for what it asked (ACCESS), as open(2) with O_TRUNC checks both before it cuts anything.
     */
    @Test void anOpenThatFailsTruncatesNothing() {
        byte[] shared = sharedDirectory("shared");
        Nfs4Client alice = client("alice", 1000), bob = client("bob", 2000);
        byte[] f = file(alice, shared, "kept", 100);
        assertThat(setMode(alice, f, 0666)).isEqualTo(Nfs4Status.NFS4_OK);
        OpenFile held = nfs(() -> alice.open(shared, "kept", false, Nfs4Client.SHARE_ACCESS_READ, Nfs4Client.SHARE_DENY_WRITE, "holder"));
        Consumer<XdrEncoder> truncate = fattr(SIZE, v -> v.writeLong(0));
        assertThat(nfs(() -> bob.statusOf(b -> b.putFh(shared).op(Op.OPEN, openCreate("kept", truncate))))).isEqualTo(Nfs4Status.SHARE_DENIED);
        assertThat(verify(root, f, SIZE, v -> v.writeLong(100))).as("not cut under DENY_WRITE").isEqualTo(Nfs4Status.NFS4_OK);
        nfs(() -> alice.close(held));
        assertThat(setMode(alice, f, 0622)).isEqualTo(Nfs4Status.NFS4_OK);
        assertThat(nfs(() -> bob.statusOf(b -> b.putFh(shared).op(Op.OPEN, openCreate("kept", truncate))))).as("bob may write, not read")
                .isEqualTo(Nfs4Status.ACCESS);
        assertThat(verify(root, f, SIZE, v -> v.writeLong(100))).as("not cut by an OPEN refused ACCESS").isEqualTo(Nfs4Status.NFS4_OK);
        assertThat(setMode(alice, f, 0666)).isEqualTo(Nfs4Status.NFS4_OK);
        assertThat(nfs(() -> bob.statusOf(b -> b.putFh(shared).op(Op.OPEN, openCreate("kept", truncate))))).isEqualTo(Nfs4Status.NFS4_OK);
        assertThat(verify(root, f, SIZE, v -> v.writeLong(0))).as("an OPEN that succeeds cuts").isEqualTo(Nfs4Status.NFS4_OK);
    }

    /**
     * OPEN of an existing file checks the mode against what is asked (RFC 8881 §18.16.3; ACCESS otherwise): read access
     * needs the read bit and write access the write bit, for owner, group or others as the caller is; the owner may
     * open its own file for reading whatever the mode (knfsd's owner override: a file created 0444 is still written
     * and read back by its creator's open), not for writing. Only regular files open: ISDIR, SYMLINK, WRONG_TYPE.
     */
    @Test void anOpenChecksTheModeOfAnExistingFileForWhatItAsks() {
        byte[] shared = sharedDirectory("shared");
        Nfs4Client alice = client("alice", 1000), bob = client("bob", 2000);
        byte[] f = file(alice, shared, "f", 10);
        java.util.function.BiFunction<Nfs4Client, Integer, Integer> open = (c, access) -> status(() -> c.open(shared, "f", false, access,
                Nfs4Client.SHARE_DENY_NONE, "o" + access).flatMap(c::close));
        int read = Nfs4Client.SHARE_ACCESS_READ, write = Nfs4Client.SHARE_ACCESS_WRITE, both = Nfs4Client.SHARE_ACCESS_BOTH;
        assertThat(setMode(alice, f, 0640)).isEqualTo(Nfs4Status.NFS4_OK);
        assertThat(open.apply(bob, read)).isEqualTo(Nfs4Status.ACCESS);
        assertThat(open.apply(bob, write)).isEqualTo(Nfs4Status.ACCESS);
        assertThat(open.apply(alice, both)).isEqualTo(Nfs4Status.NFS4_OK);
        assertThat(open.apply(root, both)).isEqualTo(Nfs4Status.NFS4_OK);
        assertThat(setMode(alice, f, 0604)).isEqualTo(Nfs4Status.NFS4_OK);
        assertThat(open.apply(bob, read)).isEqualTo(Nfs4Status.NFS4_OK);
        assertThat(open.apply(bob, write)).isEqualTo(Nfs4Status.ACCESS);
        assertThat(open.apply(bob, both)).isEqualTo(Nfs4Status.ACCESS);
        assertThat(setMode(alice, f, 0602)).isEqualTo(Nfs4Status.NFS4_OK);
        assertThat(open.apply(bob, write)).isEqualTo(Nfs4Status.NFS4_OK);
        assertThat(open.apply(bob, read)).isEqualTo(Nfs4Status.ACCESS);
        // the group's bits when bob is in the file's group
        assertThat(setAttr(root, f, ANONYMOUS, OWNER_GROUP, v -> v.writeString("2000"))).isEqualTo(Nfs4Status.NFS4_OK);
        assertThat(setMode(alice, f, 0640)).isEqualTo(Nfs4Status.NFS4_OK);
        assertThat(open.apply(bob, read)).as("group r--").isEqualTo(Nfs4Status.NFS4_OK);
        assertThat(open.apply(bob, write)).isEqualTo(Nfs4Status.ACCESS);
        // the owner's override covers reading only
        assertThat(setMode(alice, f, 0200)).isEqualTo(Nfs4Status.NFS4_OK);
        assertThat(open.apply(alice, both)).isEqualTo(Nfs4Status.NFS4_OK);
        assertThat(setMode(alice, f, 0400)).isEqualTo(Nfs4Status.NFS4_OK);
        assertThat(open.apply(alice, write)).isEqualTo(Nfs4Status.ACCESS);
        assertThat(open.apply(root, both)).as("root").isEqualTo(Nfs4Status.NFS4_OK);

        nfs(() -> root.mkdir(top, "dir"));
        nfs(() -> root.create(top, "fifo", Nfs4Client.NF4FIFO, 0, 0, 0666));
        assertThat(status(() -> root.open(top, "dir", false))).isEqualTo(Nfs4Status.ISDIR);
        assertThat(status(() -> root.open(top, "fifo", false))).isEqualTo(Nfs4Status.WRONG_TYPE);
        assertThat(status(() -> root.open(top, "missing", false))).isEqualTo(Nfs4Status.NOENT);
    }

    /**
     * Without an open, READ and WRITE with the anonymous stateid are checked against the mode (RFC 8881 §8.2.3: ACCESS);
     * a stateid of another file is BAD_STATEID, and so is CLOSE of an open through another file's handle. A directory's
     * read bit lets one list it, its execute bit look names up in it.
     */
    @Test void stateidsAndModesGuardDataAndDirectories() {
        byte[] shared = sharedDirectory("shared");
        Nfs4Client alice = client("alice", 1000), bob = client("bob", 2000);
        byte[] f = file(alice, shared, "f", 10);
        OpenFile bobsAnonymous = new OpenFile(f, ANONYMOUS);
        assertThat(setMode(alice, f, 0640)).isEqualTo(Nfs4Status.NFS4_OK);
        assertThat(status(() -> bob.read(bobsAnonymous, 0, 10))).isEqualTo(Nfs4Status.ACCESS);
        assertThat(status(() -> bob.write(bobsAnonymous, 0, new byte[] {1}, Nfs4Client.FILE_SYNC))).isEqualTo(Nfs4Status.ACCESS);
        assertThat(setMode(alice, f, 0644)).isEqualTo(Nfs4Status.NFS4_OK);
        assertThat(nfs(() -> bob.read(bobsAnonymous, 0, 10))).hasSize(10);
        assertThat(status(() -> bob.write(bobsAnonymous, 0, new byte[] {1}, Nfs4Client.FILE_SYNC))).isEqualTo(Nfs4Status.ACCESS);
        assertThat(verify(root, f, SIZE, v -> v.writeLong(10))).isEqualTo(Nfs4Status.NFS4_OK);
        assertThat(setMode(alice, f, 0646)).isEqualTo(Nfs4Status.NFS4_OK);
        assertThat(status(() -> bob.write(bobsAnonymous, 10, new byte[] {1}, Nfs4Client.FILE_SYNC))).isEqualTo(Nfs4Status.NFS4_OK);
        assertThat(verify(root, f, SIZE, v -> v.writeLong(11))).isEqualTo(Nfs4Status.NFS4_OK);

        byte[] g = file(alice, shared, "g", 10);
        OpenFile openOfF = nfs(() -> alice.open(shared, "f", false));
        OpenFile wrongFile = new OpenFile(g, openOfF.stateId());
        assertThat(status(() -> alice.read(wrongFile, 0, 10))).isEqualTo(Nfs4Status.BAD_STATEID);
        assertThat(status(() -> alice.write(wrongFile, 0, new byte[] {1}, Nfs4Client.FILE_SYNC))).isEqualTo(Nfs4Status.BAD_STATEID);
        assertThat(status(() -> alice.close(wrongFile))).isEqualTo(Nfs4Status.BAD_STATEID);
        assertThat(status(() -> alice.close(openOfF))).isEqualTo(Nfs4Status.NFS4_OK);

        byte[] priv = nfs(() -> alice.mkdir(shared, "private"));
        file(alice, priv, "inside", 1);
        assertThat(setMode(alice, priv, 0700)).isEqualTo(Nfs4Status.NFS4_OK);
        assertThat(status(() -> bob.lookup("/shared/private/inside"))).isEqualTo(Nfs4Status.ACCESS);
        assertThat(status(() -> bob.list(priv))).isEqualTo(Nfs4Status.ACCESS);
        assertThat(setMode(alice, priv, 0711)).isEqualTo(Nfs4Status.NFS4_OK);
        assertThat(status(() -> bob.lookup("/shared/private/inside"))).as("search, not read").isEqualTo(Nfs4Status.NFS4_OK);
        assertThat(status(() -> bob.list(priv))).isEqualTo(Nfs4Status.ACCESS);
        assertThat(setMode(alice, priv, 0744)).isEqualTo(Nfs4Status.NFS4_OK);
        assertThat(nfs(() -> bob.list(priv))).as("read, not search").containsExactly("inside");
        assertThat(status(() -> bob.lookup("/shared/private/inside"))).isEqualTo(Nfs4Status.ACCESS);
    }

    /**
     * Argument limits: a WRITE past the largest file is FBIG (RFC 8881 §18.32.3), a COMMIT whose range passes 2^64 or
     * starts past 2^63 INVAL (§18.3.3), and READDIR's cookies (§18.23.3): 1 and 2 are never issued (BAD_COOKIE), a cookie
     * with another verifier is NOT_SAME, a maxcount too small for even an empty answer TOOSMALL, a file NOTDIR.
     */
    @Test void writeCommitAndReadDirArgumentsAtTheirLimits() {
        OpenFile f = nfs(() -> root.open(top, "limits", true));
        long max = dev.cairn.nfs.fs.ClusterFs.MAX_FILE_SIZE;
        assertThat(status(() -> root.write(f, max, new byte[1], Nfs4Client.UNSTABLE))).isEqualTo(Nfs4Status.FBIG);
        assertThat(status(() -> root.write(f, max - 1, new byte[2], Nfs4Client.UNSTABLE))).isEqualTo(Nfs4Status.FBIG);
        assertThat(status(() -> root.write(f, -1, new byte[1], Nfs4Client.UNSTABLE))).as("an offset of 2^64 - 1").isEqualTo(Nfs4Status.FBIG);
        java.util.function.BiFunction<Long, Integer, Integer> commit = (offset, count) -> nfs(() -> root.statusOf(b -> b.putFh(f.fh())
                .op(Op.COMMIT, a -> a.writeLong(offset).writeInt(count))));
        assertThat(commit.apply(Long.MAX_VALUE, 2)).isEqualTo(Nfs4Status.INVAL);
        assertThat(commit.apply(-1L, 0)).isEqualTo(Nfs4Status.INVAL);
        assertThat(commit.apply(Long.MAX_VALUE, 0)).as("count 0: to the end").isEqualTo(Nfs4Status.NFS4_OK);
        assertThat(commit.apply(0L, 0)).isEqualTo(Nfs4Status.NFS4_OK);
        assertThat(nfs(() -> root.statusOf(b -> b.putFh(top).op(Op.COMMIT, a -> a.writeLong(0).writeInt(0))))).isEqualTo(Nfs4Status.ISDIR);
        nfs(() -> root.close(f));

        for (int i = 0; i < 3; i++) file(root, top, "e" + i, 0);
        record ReadDirArgs(long cookie, byte[] verifier, int maxcount) {}
        java.util.function.Function<ReadDirArgs, Integer> readDir = r -> nfs(() -> root.statusOf(b -> b.putFh(top).op(Op.READDIR, a -> {
            a.writeLong(r.cookie()).writeFixedOpaque(r.verifier()).writeInt(r.maxcount()).writeInt(r.maxcount());
            a.writeInt(1).writeInt(1 << 4); // size
        })));
        byte[] zero = new byte[8], other = {9, 9, 9, 9, 9, 9, 9, 9};
        assertThat(readDir.apply(new ReadDirArgs(0, zero, 8192))).isEqualTo(Nfs4Status.NFS4_OK);
        assertThat(readDir.apply(new ReadDirArgs(0, other, 8192))).as("cookie 0: the verifier is not looked at").isEqualTo(Nfs4Status.NFS4_OK);
        assertThat(readDir.apply(new ReadDirArgs(1, zero, 8192))).isEqualTo(Nfs4Status.BAD_COOKIE);
        assertThat(readDir.apply(new ReadDirArgs(2, zero, 8192))).isEqualTo(Nfs4Status.BAD_COOKIE);
        assertThat(readDir.apply(new ReadDirArgs(3, other, 8192))).isEqualTo(Nfs4Status.NOT_SAME);
        assertThat(readDir.apply(new ReadDirArgs(0, zero, 15))).isEqualTo(Nfs4Status.TOOSMALL);
        assertThat(readDir.apply(new ReadDirArgs(0, zero, 40))).as("room for no entry").isEqualTo(Nfs4Status.TOOSMALL);
        assertThat(nfs(() -> root.statusOf(b -> b.putFh(nfs(() -> root.lookup("/e0"))).op(Op.READDIR, a -> {
            a.writeLong(0).writeFixedOpaque(zero).writeInt(8192).writeInt(8192).writeInt(0);
        })))).isEqualTo(Nfs4Status.NOTDIR);
        assertThat(nfs(() -> root.list(top))).as("paged with small replies").contains("e0", "e1", "e2", "limits");
    }

    /** OPEN4args: share access and deny, a new open owner, the openflag4 {@code how} writes, the claim {@code claim} writes. */
    static Consumer<XdrEncoder> openArgs(int access, int deny, String owner, Consumer<XdrEncoder> how, Consumer<XdrEncoder> claim) {
        return a -> {
            a.writeInt(0).writeInt(access).writeInt(deny);
            a.writeLong(0).writeOpaque(owner.getBytes(StandardCharsets.UTF_8));
            how.accept(a);
            claim.accept(a);
        };
    }

    static Consumer<XdrEncoder> claimNull(String name) { return a -> a.writeInt(0).writeString(name); }

    static final Consumer<XdrEncoder> NOCREATE = a -> a.writeInt(0);

    /** OPEN4_CREATE with EXCLUSIVE4_1: {@code verifier} and no attributes. */
    static Consumer<XdrEncoder> exclusive(long verifier) { return a -> a.writeInt(1).writeInt(3).writeLong(verifier).writeInt(0).writeOpaque(new byte[0]); }

    /**
     * OPEN's arguments (RFC 8881 §18.16.3): no access or an unknown deny is INVAL, as is an unknown delegation want,
     * CLAIM_FH with a create, and a claim of a delegation this server never gives (NOTSUPP in 4.1). A create with no
     * attributes makes a 0644 file owned by the caller's uid and gid. EXCLUSIVE4_1 sent again with its verifier opens the
     * file it made (a retransmission); another verifier finds it taken (EXIST). A name of 255 bytes is a name.
     * WRITE answers UNSTABLE4 for an unstable write and FILE_SYNC4 for one it made durable.
     */
    @Test void openArgumentsAndWhatACreateGives() {
        byte[] shared = sharedDirectory("shared");
        Nfs4Client alice = client("alice", 1000);
        int both = Nfs4Client.SHARE_ACCESS_BOTH, none = Nfs4Client.SHARE_DENY_NONE;
        java.util.function.Function<Consumer<XdrEncoder>, Integer> open = args -> nfs(() -> alice.statusOf(b -> b.putFh(shared).op(Op.OPEN, args)));
        file(alice, shared, "there", 0);
        assertThat(open.apply(openArgs(0, none, "o1", NOCREATE, claimNull("there")))).as("no access").isEqualTo(Nfs4Status.INVAL);
        assertThat(open.apply(openArgs(both, 4, "o2", NOCREATE, claimNull("there")))).as("deny 4").isEqualTo(Nfs4Status.INVAL);
        assertThat(open.apply(openArgs(both | 0x0600, none, "o3", NOCREATE, claimNull("there")))).as("want 6: past WANT_CANCEL")
                .isEqualTo(Nfs4Status.INVAL);
        assertThat(open.apply(openArgs(both | 0x0400, none, "o4", NOCREATE, claimNull("there")))).as("WANT_NO_DELEG: a want it knows")
                .isEqualTo(Nfs4Status.NFS4_OK);
        byte[] there = nfs(() -> alice.lookup("/shared/there"));
        assertThat(nfs(() -> alice.statusOf(b -> b.putFh(there).op(Op.OPEN, openArgs(both, none, "o5", exclusive(1), a -> a.writeInt(4))))))
                .as("CLAIM_FH with a create").isEqualTo(Nfs4Status.INVAL);
        assertThat(nfs(() -> alice.statusOf(b -> b.putFh(there).op(Op.OPEN, openArgs(both, none, "o6", NOCREATE, a -> a.writeInt(4))))))
                .as("CLAIM_FH").isEqualTo(Nfs4Status.NFS4_OK);
        assertThat(open.apply(openArgs(both, none, "o7", NOCREATE, a -> a.writeInt(2).writeFixedOpaque(new byte[16]).writeString("there"))))
                .as("CLAIM_DELEGATE_CUR: no delegation is ever given").isEqualTo(Nfs4Status.NOTSUPP);

        assertThat(open.apply(openArgs(both, none, "o8", a -> a.writeInt(1).writeInt(0).writeInt(0).writeOpaque(new byte[0]), claimNull("plain"))))
                .isEqualTo(Nfs4Status.NFS4_OK);
        byte[] plain = nfs(() -> alice.lookup("/shared/plain"));
        assertThat(hasMode(plain, 0644)).isTrue();
        assertThat(verify(root, plain, OWNER, v -> v.writeString("1000"))).isEqualTo(Nfs4Status.NFS4_OK);
        assertThat(verify(root, plain, OWNER_GROUP, v -> v.writeString("1000"))).isEqualTo(Nfs4Status.NFS4_OK);

        assertThat(open.apply(openArgs(both, none, "o9", exclusive(0), claimNull("excl")))).isEqualTo(Nfs4Status.NFS4_OK);
        assertThat(open.apply(openArgs(both, none, "o10", exclusive(0), claimNull("excl")))).as("the same verifier: a retransmission")
                .isEqualTo(Nfs4Status.NFS4_OK);
        assertThat(open.apply(openArgs(both, none, "o11", exclusive(77), claimNull("excl")))).isEqualTo(Nfs4Status.EXIST);
        assertThat(open.apply(openArgs(both, none, "o12", exclusive(77), claimNull("excl2")))).isEqualTo(Nfs4Status.NFS4_OK);
        assertThat(open.apply(openArgs(both, none, "o13", exclusive(0), claimNull("excl2")))).as("a verifier of 0 is a verifier too")
                .isEqualTo(Nfs4Status.EXIST);
        String longest = "n".repeat(255);
        assertThat(open.apply(openArgs(both, none, "o14", exclusive(5), claimNull(longest)))).isEqualTo(Nfs4Status.NFS4_OK);
        assertThat(nfs(() -> alice.list(shared))).contains(longest);

        OpenFile w = nfs(() -> alice.open(shared, "written", true));
        assertThat(nfs(() -> alice.write(w, 0, new byte[10], Nfs4Client.UNSTABLE)).committed()).isEqualTo(Nfs4Client.UNSTABLE);
        assertThat(nfs(() -> alice.write(w, 10, new byte[10], Nfs4Client.FILE_SYNC)).committed()).isEqualTo(Nfs4Client.FILE_SYNC);
        assertThat(nfs(() -> alice.write(w, 20, new byte[10], Nfs4Client.DATA_SYNC)).committed()).as("durable: at least what was asked")
                .isIn(Nfs4Client.DATA_SYNC, Nfs4Client.FILE_SYNC);
        nfs(() -> alice.close(w));
    }

    /** OPEN4args for a new open owner: OPEN4_CREATE, UNCHECKED4 with {@code attrs}, CLAIM_NULL of {@code name}. */
    Consumer<XdrEncoder> openCreate(String name, Consumer<XdrEncoder> attrs) {
        return a -> {
            a.writeInt(0).writeInt(Nfs4Client.SHARE_ACCESS_BOTH).writeInt(Nfs4Client.SHARE_DENY_NONE);
            a.writeLong(0).writeOpaque(("owner-" + name).getBytes(StandardCharsets.UTF_8));
            a.writeInt(1).writeInt(0); // OPEN4_CREATE, UNCHECKED4
            attrs.accept(a);
            a.writeInt(0).writeString(name); // CLAIM_NULL
        };
    }

    /** CREATE4args of a directory {@code name} whose owner attribute is {@code owner}. */
    static Consumer<XdrEncoder> mkdirAs(String name, String owner) {
        return a -> {
            a.writeInt(Nfs4Client.NF4DIR).writeString(name);
            fattr(OWNER, v -> v.writeString(owner)).accept(a);
        };
    }
}
