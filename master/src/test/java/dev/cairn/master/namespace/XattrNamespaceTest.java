package dev.cairn.master.namespace;

import static dev.cairn.core.proto.MasterProtocol.XATTR_CREATE;
import static dev.cairn.core.proto.MasterProtocol.XATTR_EITHER;
import static dev.cairn.core.proto.MasterProtocol.XATTR_REMOVE;
import static dev.cairn.core.proto.MasterProtocol.XATTR_REPLACE;
import static org.assertj.core.api.Assertions.assertThat;

import dev.cairn.core.proto.MasterProtocol;
import dev.cairn.core.proto.Status;
import dev.cairn.core.proto.StorageClass;
import dev.cairn.core.proto.Types.FileAttr;
import dev.cairn.core.proto.Types.FileType;
import dev.cairn.master.meta.MetaCommand;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Extended attributes in the namespace: the set options, the per-inode bounds, retries, and that they go with their inode. */
class XattrNamespaceTest extends NamespaceFixture {
    long now = 1000;
    long ops = 0;

    FileAttr file(String name) {
        return submit(new MetaCommand.CreateIn(Namespace.ROOT, name, FileType.FILE, 0644, 0, 0, "", 0, StorageClass.DEFAULT, 0, ++now)).attr();
    }

    FileAttr set(long ino, String name, byte[] value, int how) { return submit(new MetaCommand.SetXattr(ino, name, value, how, ++now, ++ops)); }

    static byte[] bytes(String s) { return s.getBytes(StandardCharsets.UTF_8); }

    @Test void theOptionsOfSetxattrAndRemoval() {
        long f = file("f").inode();
        assertThat(statusOf(() -> ns.xattr(f, "a"))).isEqualTo(Status.NOT_FOUND);
        assertThat(statusOf(() -> set(f, "a", bytes("x"), XATTR_REPLACE))).isEqualTo(Status.NOT_FOUND);
        assertThat(statusOf(() -> set(f, "a", new byte[0], XATTR_REMOVE))).isEqualTo(Status.NOT_FOUND);
        set(f, "a", bytes("one"), XATTR_CREATE);
        assertThat(ns.xattr(f, "a")).isEqualTo(bytes("one"));
        assertThat(statusOf(() -> set(f, "a", bytes("two"), XATTR_CREATE))).isEqualTo(Status.EXISTS);
        assertThat(ns.xattr(f, "a")).as("a refused create changes nothing").isEqualTo(bytes("one"));
        set(f, "a", bytes("two"), XATTR_REPLACE);
        set(f, "b", bytes("b"), XATTR_EITHER);
        set(f, "b", bytes("bb"), XATTR_EITHER);
        assertThat(ns.xattr(f, "a")).isEqualTo(bytes("two"));
        assertThat(ns.xattr(f, "b")).isEqualTo(bytes("bb"));
        assertThat(ns.xattrNames(f)).containsExactly("a", "b");
        assertThat(statusOf(() -> set(f, "a", bytes("x"), XATTR_REMOVE))).as("a removal carries no value").isEqualTo(Status.BAD_REQUEST);
        assertThat(statusOf(() -> set(f, "a", bytes("x"), 9))).isEqualTo(Status.BAD_REQUEST);
        set(f, "a", new byte[0], XATTR_REMOVE);
        assertThat(ns.xattrNames(f)).containsExactly("b");
        assertThat(statusOf(() -> ns.xattr(f, "a"))).isEqualTo(Status.NOT_FOUND);
        assertThat(statusOf(() -> ns.xattr(f + 100, "a"))).as("no such inode").isEqualTo(Status.NOT_FOUND);
        // names are 1..255 bytes of UTF-8 without NUL; a multi-byte name counts its bytes
        assertThat(statusOf(() -> set(f, "", bytes("x"), XATTR_EITHER))).isEqualTo(Status.BAD_REQUEST);
        assertThat(statusOf(() -> set(f, "a\0b", bytes("x"), XATTR_EITHER))).isEqualTo(Status.BAD_REQUEST);
        assertThat(statusOf(() -> set(f, "ü".repeat(128), bytes("x"), XATTR_EITHER))).isEqualTo(Status.BAD_REQUEST);
        set(f, "ü".repeat(127), bytes("x"), XATTR_EITHER);
    }

    @Test void eachChangeMovesTheInodesCtimeAndChangeButNotItsMtimeOrSize() {
        FileAttr f = file("f");
        FileAttr a = set(f.inode(), "a", bytes("1"), XATTR_EITHER);
        assertThat(a.change()).isGreaterThan(f.change());
        assertThat(a.ctimeMillis()).isEqualTo(now);
        assertThat(a.mtimeMillis()).isEqualTo(f.mtimeMillis());
        assertThat(a.size()).isEqualTo(f.size());
        FileAttr b = set(f.inode(), "a", new byte[0], XATTR_REMOVE);
        assertThat(b.change()).isGreaterThan(a.change());
        assertThat(ns.inode(f.inode()).attr()).isEqualTo(b);
    }

    @Test void anInodeHoldsBoundedNamesAndBytes() {
        long f = file("f").inode();
        assertThat(statusOf(() -> set(f, "big", new byte[MasterProtocol.MAX_XATTR_VALUE_BYTES + 1], XATTR_EITHER))).isEqualTo(Status.BAD_REQUEST);
        // bytes: values of the largest size until the inode's budget is spent
        byte[] max = new byte[MasterProtocol.MAX_XATTR_VALUE_BYTES];
        int fit = 0;
        while (statusOf(() -> set(f, "v" + ns.xattrNames(f).size(), max, XATTR_EITHER)) == Status.OK) fit++;
        int expected = MasterProtocol.MAX_XATTR_BYTES / (MasterProtocol.MAX_XATTR_VALUE_BYTES + 3);
        assertThat(fit).isEqualTo(expected);
        assertThat(statusOf(() -> set(f, "v" + ns.xattrNames(f).size(), max, XATTR_EITHER))).isEqualTo(Status.NO_SPACE);
        // replacing one with a value of the same size is no growth
        set(f, "v0", max, XATTR_REPLACE);
        assertThat(ns.xattrNames(f)).hasSize(fit);

        // names: at most MAX_XATTRS, however small
        long g = file("g").inode();
        for (int i = 0; i < MasterProtocol.MAX_XATTRS; i++) set(g, "n" + i, new byte[0], XATTR_CREATE);
        assertThat(statusOf(() -> set(g, "one-more", new byte[0], XATTR_CREATE))).isEqualTo(Status.NO_SPACE);
        assertThat(ns.xattrNames(g)).hasSize(MasterProtocol.MAX_XATTRS);
        set(g, "n0", new byte[0], XATTR_REMOVE);
        set(g, "one-more", new byte[0], XATTR_CREATE);
    }

    @Test void aRetriedCreateAnswersItsFirstOutcome() {
        long f = file("f").inode();
        var create = new MetaCommand.SetXattr(f, "a", bytes("1"), XATTR_CREATE, ++now, 4242);
        FileAttr first = submit(create);
        // the same op id again (a retry that reached a new leader): not EXISTS, and nothing applied twice
        FileAttr again = submit(new MetaCommand.SetXattr(f, "a", bytes("1"), XATTR_CREATE, ++now, 4242));
        assertThat(again).isEqualTo(first);
        assertThat(ns.inode(f).change()).isEqualTo(first.change());
    }

    @Test void theyGoWithTheirInodeAndStayWithItsOtherNames() {
        long f = file("f").inode();
        set(f, "a", bytes("1"), XATTR_EITHER);
        set(f, "b", bytes("2"), XATTR_EITHER);
        long other = file("other").inode();
        set(other, "a", bytes("other's"), XATTR_EITHER);
        submit(new MetaCommand.Link(f, Namespace.ROOT, "f2", ++now));
        submit(new MetaCommand.Unlink(Namespace.ROOT, "f", ++now));
        assertThat(ns.xattrNames(f)).as("another name keeps the inode").containsExactly("a", "b");
        submit(new MetaCommand.Unlink(Namespace.ROOT, "f2", ++now));
        assertThat(xattrKeys()).as("the store keeps no attribute of a gone inode").hasSize(1);
        assertThat(ns.xattr(other, "a")).isEqualTo(bytes("other's"));
        // a rename onto a file replaces it, and its attributes go with it
        long victim = file("victim").inode();
        set(victim, "v", bytes("v"), XATTR_EITHER);
        submit(new MetaCommand.Rename(Namespace.ROOT, "other", Namespace.ROOT, "victim", ++now));
        assertThat(ns.xattr(other, "a")).isEqualTo(bytes("other's"));
        assertThat(xattrKeys()).hasSize(1);
        // a directory has them too, and loses them with itself
        long d = submit(new MetaCommand.CreateIn(Namespace.ROOT, "d", FileType.DIR, 0755, 0, 0, "", 0, StorageClass.DEFAULT, 0, ++now)).attr().inode();
        set(d, "dir", bytes("x"), XATTR_EITHER);
        submit(new MetaCommand.Unlink(Namespace.ROOT, "d", ++now));
        assertThat(xattrKeys()).hasSize(1);
    }

    private List<String> xattrKeys() {
        List<String> out = new ArrayList<>();
        kv.scan(new byte[] {'A'}, (k, v) -> out.add(new String(k, 9, k.length - 9, StandardCharsets.UTF_8)) || true);
        return out;
    }
}
