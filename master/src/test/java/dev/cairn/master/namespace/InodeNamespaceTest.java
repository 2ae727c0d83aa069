package dev.cairn.master.namespace;

import static org.assertj.core.api.Assertions.assertThat;

import dev.cairn.core.proto.Status;
import dev.cairn.core.proto.StorageClass;
import dev.cairn.core.proto.Types.AttrChange;
import dev.cairn.core.proto.Types.DirCookieEntry;
import dev.cairn.core.proto.Types.FileAttr;
import dev.cairn.core.proto.Types.FileType;
import dev.cairn.master.meta.MetaCommand;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.Test;

/** The namespace as the NFS gateway uses it: by inode, with POSIX attributes, links, renames and READDIR cookies. */
class InodeNamespaceTest extends NamespaceFixture {
    static final long ROOT = Namespace.ROOT;
    long now = 1000;

    FileAttr create(long dir, String name, FileType type) {
        return submit(new MetaCommand.CreateIn(dir, name, type, type == FileType.DIR ? 0755 : 0640, 1000, 100,
                type == FileType.SYMLINK ? "target/of/" + name : "", 0, StorageClass.DEFAULT, 0, ++now)).attr();
    }

    @Test void createCarriesPosixAttributesAndBumpsTheDirectory() {
        FileAttr root = ns.inode(ROOT).attr();
        FileAttr d = create(ROOT, "d", FileType.DIR);
        FileAttr f = create(d.inode(), "f", FileType.FILE);
        FileAttr l = create(d.inode(), "l", FileType.SYMLINK);
        assertThat(f.mode()).isEqualTo(0640);
        assertThat(f.uid()).isEqualTo(1000);
        assertThat(f.gid()).isEqualTo(100);
        assertThat(f.nlink()).isEqualTo(1);
        assertThat(d.nlink()).isEqualTo(2);
        assertThat(ns.inode(ROOT).nlink()).isEqualTo(3);
        assertThat(ns.inode(ROOT).change()).isGreaterThan(root.change());
        assertThat(l.type()).isEqualTo(FileType.SYMLINK);
        assertThat(l.target()).isEqualTo("target/of/l");
        assertThat(l.size()).isEqualTo("target/of/l".length());
        assertThat(ns.lookup(d.inode(), "f").inode()).isEqualTo(f.inode());
        assertThat(ns.lookup(d.inode(), "..").inode()).isEqualTo(ROOT);
        assertThat(ns.lookup(d.inode(), ".").inode()).isEqualTo(d.inode());
        assertThat(statusOf(() -> create(d.inode(), "f", FileType.FILE))).isEqualTo(Status.EXISTS);
        assertThat(statusOf(() -> create(f.inode(), "x", FileType.FILE))).isEqualTo(Status.NOT_DIR);
        assertThat(statusOf(() -> create(d.inode(), "a/b", FileType.FILE))).isEqualTo(Status.BAD_REQUEST);
        assertThat(statusOf(() -> create(d.inode(), "..", FileType.FILE))).isEqualTo(Status.BAD_REQUEST);
    }

    @Test void anExclusiveCreateRetransmittedWithItsVerifierSucceeds() {
        var first = submit(new MetaCommand.CreateIn(ROOT, "x", FileType.FILE, 0600, 0, 0, "", 0, StorageClass.DEFAULT, 77, 1));
        var again = submit(new MetaCommand.CreateIn(ROOT, "x", FileType.FILE, 0600, 0, 0, "", 0, StorageClass.DEFAULT, 77, 2));
        assertThat(again.attr().inode()).isEqualTo(first.attr().inode());
        assertThat(statusOf(() -> submit(new MetaCommand.CreateIn(ROOT, "x", FileType.FILE, 0600, 0, 0, "", 0, StorageClass.DEFAULT, 78, 3))))
                .isEqualTo(Status.EXISTS);
    }

    @Test void hardLinksShareAnInodeUntilTheLastNameGoes() {
        FileAttr f = create(ROOT, "f", FileType.FILE);
        FileAttr d = create(ROOT, "d", FileType.DIR);
        submit(new MetaCommand.AllocChunk(f.inode(), 0));
        var linked = submit(new MetaCommand.Link(f.inode(), d.inode(), "g", ++now));
        assertThat(linked.attr().nlink()).isEqualTo(2);
        assertThat(ns.lookup(d.inode(), "g").inode()).isEqualTo(f.inode());
        assertThat(statusOf(() -> submit(new MetaCommand.Link(d.inode(), ROOT, "dd", ++now)))).isEqualTo(Status.IS_DIR);
        var gone = submit(new MetaCommand.Unlink(ROOT, "f", ++now));
        assertThat(gone.freedChunks()).isEmpty();
        assertThat(ns.inode(f.inode()).nlink()).isEqualTo(1);
        gone = submit(new MetaCommand.Unlink(d.inode(), "g", ++now));
        assertThat(gone.freedChunks()).hasSize(1);
        assertThat(statusOf(() -> ns.inode(f.inode()))).isEqualTo(Status.NOT_FOUND);
    }

    @Test void renameFollowsPosix() {
        FileAttr a = create(ROOT, "a", FileType.DIR);
        FileAttr b = create(ROOT, "b", FileType.DIR);
        FileAttr f = create(a.inode(), "f", FileType.FILE);
        FileAttr g = create(b.inode(), "g", FileType.FILE);
        submit(new MetaCommand.AllocChunk(g.inode(), 0));
        // over an existing file, across directories: the replaced file's chunks are freed
        var r = submit(new MetaCommand.Rename(a.inode(), "f", b.inode(), "g", ++now));
        assertThat(r.freedChunks()).hasSize(1);
        assertThat(r.dirs()).extracting(FileAttr::inode).containsExactly(a.inode(), b.inode());
        assertThat(ns.lookup(b.inode(), "g").inode()).isEqualTo(f.inode());
        assertThat(statusOf(() -> ns.lookup(a.inode(), "f"))).isEqualTo(Status.NOT_FOUND);
        // a directory moves with its link counts
        FileAttr c = create(a.inode(), "c", FileType.DIR);
        submit(new MetaCommand.Rename(a.inode(), "c", b.inode(), "c", ++now));
        assertThat(ns.inode(a.inode()).nlink()).isEqualTo(2);
        assertThat(ns.inode(b.inode()).nlink()).isEqualTo(3);
        assertThat(ns.lookup(c.inode(), "..").inode()).isEqualTo(b.inode());
        // not into itself, not a directory over a file nor a file over a directory, not over a non-empty directory
        assertThat(statusOf(() -> submit(new MetaCommand.Rename(ROOT, "b", c.inode(), "b", ++now)))).isEqualTo(Status.BAD_REQUEST);
        assertThat(statusOf(() -> submit(new MetaCommand.Rename(b.inode(), "c", b.inode(), "g", ++now)))).isEqualTo(Status.NOT_DIR);
        assertThat(statusOf(() -> submit(new MetaCommand.Rename(b.inode(), "g", b.inode(), "c", ++now)))).isEqualTo(Status.IS_DIR);
        assertThat(statusOf(() -> submit(new MetaCommand.Rename(ROOT, "a", ROOT, "b", ++now)))).isEqualTo(Status.NOT_EMPTY);
        // a directory over an empty directory; within one directory
        submit(new MetaCommand.Rename(b.inode(), "c", ROOT, "a", ++now));
        assertThat(ns.lookup(ROOT, "a").inode()).isEqualTo(c.inode());
        assertThat(ns.inode(ROOT).nlink()).isEqualTo(4);
        submit(new MetaCommand.Rename(ROOT, "a", ROOT, "a2", ++now));
        assertThat(ns.list("/")).extracting(e -> e.name()).containsExactly("a2", "b");
    }

    @Test void setAttrChangesModeOwnerTimesAndTruncatesChunks() {
        FileAttr f = create(ROOT, "f", FileType.FILE);
        for (int i = 0; i < 3; i++) submit(new MetaCommand.AllocChunk(f.inode(), i));
        submit(new MetaCommand.SetLength(f.inode(), 3L * f.chunkSize(), ++now, List.of()));
        var r = submit(new MetaCommand.SetAttr(f.inode(), new AttrChange(0600, 5, 6, f.chunkSize() + 1, 7, 8), ++now));
        assertThat(r.freedChunks()).hasSize(1);
        assertThat(r.attr().size()).isEqualTo(f.chunkSize() + 1);
        assertThat(r.attr().mode()).isEqualTo(0600);
        assertThat(r.attr().uid()).isEqualTo(5);
        assertThat(r.attr().gid()).isEqualTo(6);
        assertThat(r.attr().atimeMillis()).isEqualTo(7);
        assertThat(r.attr().mtimeMillis()).isEqualTo(8);
        assertThat(r.attr().change()).isGreaterThan(f.change());
        r = submit(new MetaCommand.SetAttr(f.inode(), AttrChange.NONE.withSize(0), ++now));
        assertThat(r.freedChunks()).hasSize(2);
        assertThat(ns.chunks(f.inode(), 0, 10)).isEmpty();
        assertThat(statusOf(() -> submit(new MetaCommand.SetAttr(ROOT, AttrChange.NONE.withSize(0), ++now)))).isEqualTo(Status.IS_DIR);
        assertThat(statusOf(() -> submit(new MetaCommand.SetAttr(f.inode(), new AttrChange(010000, -1, -1, -1, -1, -1), ++now))))
                .isEqualTo(Status.BAD_REQUEST);
    }

    /**
     * {@link AttrChange#DROP_SET_ID} takes the set-id bits off the mode the master holds when it applies the change
     * (a gateway's view of the mode may be old): set-user-id always, set-group-id only with group execute; a
     * directory's mode stays; a mode of anything else outside 07777 is refused.
     */
    @Test void droppingSetIdBitsWorksOnTheModeHeld() {
        FileAttr f = create(ROOT, "prog", FileType.FILE);
        AttrChange drop = new AttrChange(AttrChange.DROP_SET_ID, -1, -1, -1, -1, -1);
        int[][] cases = {{06755, 0755}, {04711, 0711}, {02745, 02745}, {02715, 0715}, {06745, 02745}, {0644, 0644}};
        for (int[] c : cases) {
            submit(new MetaCommand.SetAttr(f.inode(), new AttrChange(c[0], -1, -1, -1, -1, -1), ++now));
            assertThat(submit(new MetaCommand.SetAttr(f.inode(), drop, ++now)).attr().mode()).as("%o", c[0]).isEqualTo(c[1]);
            assertThat(ns.inode(f.inode()).mode()).isEqualTo(c[1]);
        }
        FileAttr d = create(ROOT, "d", FileType.DIR);
        submit(new MetaCommand.SetAttr(d.inode(), new AttrChange(02775, -1, -1, -1, -1, -1), ++now));
        assertThat(submit(new MetaCommand.SetAttr(d.inode(), drop, ++now)).attr().mode()).isEqualTo(02775);
        assertThat(statusOf(() -> submit(new MetaCommand.SetAttr(f.inode(), new AttrChange(-3, -1, -1, -1, -1, -1), ++now))))
                .isEqualTo(Status.BAD_REQUEST);
    }

    /**
     * What each change stores, read back rather than taken from its reply (a change answered but not written, or a
     * directory whose change attribute does not move, leaves NFS clients' caches stale): links, renames and removes touch
     * the directories they change, a rename moves its file's parent and ctime, rmdir drops its parent's link count, a
     * size change without a given mtime sets it.
     */
    @Test void everyChangeIsStoredAndTouchesWhatPosixSays() {
        FileAttr a = create(ROOT, "a", FileType.DIR);
        FileAttr b = create(ROOT, "b", FileType.DIR);
        FileAttr f = create(a.inode(), "f", FileType.FILE);
        long bBefore = ns.inode(b.inode()).change();
        submit(new MetaCommand.Link(f.inode(), b.inode(), "g", ++now));
        assertThat(ns.inode(b.inode()).change()).as("the directory linked into").isGreaterThan(bBefore);
        assertThat(ns.inode(b.inode()).mtimeMillis()).isEqualTo(now);
        assertThat(ns.inode(f.inode()).nlink()).isEqualTo(2);

        // a rename out of the file's parent: its parent follows, both directories and the file change
        long aBefore = ns.inode(a.inode()).change(), fBefore = ns.inode(f.inode()).change();
        bBefore = ns.inode(b.inode()).change();
        submit(new MetaCommand.Rename(a.inode(), "f", b.inode(), "h", ++now));
        assertThat(ns.inode(a.inode()).change()).isGreaterThan(aBefore);
        assertThat(ns.inode(b.inode()).change()).as("the directory renamed into").isGreaterThan(bBefore);
        assertThat(ns.inode(b.inode()).mtimeMillis()).isEqualTo(now);
        assertThat(ns.inode(f.inode()).parent()).isEqualTo(b.inode());
        assertThat(ns.inode(f.inode()).change()).isGreaterThan(fBefore);
        assertThat(ns.inode(f.inode()).ctimeMillis()).isEqualTo(now);
        // a rename of another of its names, out of a directory that is not its parent: the parent stays
        submit(new MetaCommand.Link(f.inode(), ROOT, "y", ++now));
        fBefore = ns.inode(f.inode()).change();
        submit(new MetaCommand.Rename(ROOT, "y", a.inode(), "z", ++now));
        assertThat(ns.inode(f.inode()).parent()).isEqualTo(b.inode());
        assertThat(ns.inode(f.inode()).change()).isGreaterThan(fBefore);

        // rmdir: the parent loses the subdirectory's ".." link and changes
        create(a.inode(), "sub", FileType.DIR);
        assertThat(ns.inode(a.inode()).nlink()).isEqualTo(3);
        aBefore = ns.inode(a.inode()).change();
        submit(new MetaCommand.Unlink(a.inode(), "sub", ++now));
        assertThat(ns.inode(a.inode()).nlink()).isEqualTo(2);
        assertThat(ns.inode(a.inode()).change()).isGreaterThan(aBefore);

        // attributes: stored; a size change sets mtime unless one is given, the same size leaves it
        submit(new MetaCommand.SetAttr(f.inode(), new AttrChange(0600, -1, -1, 0, -1, -1), ++now));
        assertThat(ns.inode(f.inode()).mode()).isEqualTo(0600);
        long mtime = ns.inode(f.inode()).mtimeMillis();
        submit(new MetaCommand.SetAttr(f.inode(), AttrChange.NONE.withSize(100), ++now));
        assertThat(ns.inode(f.inode()).size()).isEqualTo(100);
        assertThat(ns.inode(f.inode()).mtimeMillis()).isEqualTo(now).isNotEqualTo(mtime);
        long setAt = now;
        submit(new MetaCommand.SetAttr(f.inode(), AttrChange.NONE.withSize(100), ++now));
        assertThat(ns.inode(f.inode()).mtimeMillis()).as("the same size").isEqualTo(setAt);
        // a length commit answers the file's attributes; an empty file commits 0 bytes
        FileAttr e = create(ROOT, "e", FileType.FILE);
        assertThat(submit(new MetaCommand.SetLength(e.inode(), 0, ++now, List.of())).size()).isZero();
        assertThat(submit(new MetaCommand.SetLength(e.inode(), 10, ++now, List.of())).size()).isEqualTo(10);
        assertThat(statusOf(() -> submit(new MetaCommand.SetLength(e.inode(), -1, ++now, List.of())))).isEqualTo(Status.BAD_REQUEST);
    }

    /**
     * A file's class: the default becomes the master's default goal; any class while the file holds no data; once it
     * does, only within its kind (replicated to replicated, or erasure-coded keeping k+m: anything else means
     * rewriting the data). A directory keeps what it is given, the default included (its files' default).
     */
    @Test void aFilesClassChangesFreelyUntilItHoldsDataThenOnlyWithinItsKind() {
        FileAttr f = create(ROOT, "f", FileType.FILE);
        assertThat(ns.inode(f.inode()).storageClass()).isEqualTo(StorageClass.replicated(3));
        submit(new MetaCommand.SetClass("/f", StorageClass.ec(2, 1)));
        assertThat(ns.inode(f.inode()).storageClass()).isEqualTo(StorageClass.ec(2, 1));
        submit(new MetaCommand.SetClass("/f", StorageClass.DEFAULT));
        assertThat(ns.inode(f.inode()).storageClass()).isEqualTo(StorageClass.replicated(3));
        submit(new MetaCommand.AllocChunk(f.inode(), 0));
        long before = ns.inode(f.inode()).change();
        assertThat(submit(new MetaCommand.SetClass("/f", StorageClass.replicated(2))).storageClass()).isEqualTo(StorageClass.replicated(2));
        assertThat(ns.inode(f.inode()).change()).isGreaterThan(before);
        assertThat(statusOf(() -> submit(new MetaCommand.SetClass("/f", StorageClass.ec(2, 1))))).isEqualTo(Status.BAD_REQUEST);
        assertThat(ns.inode(f.inode()).storageClass()).isEqualTo(StorageClass.replicated(2));

        FileAttr g = create(ROOT, "g", FileType.FILE);
        submit(new MetaCommand.SetClass("/g", StorageClass.ec(2, 1)));
        submit(new MetaCommand.AllocChunk(g.inode(), 0));
        assertThat(statusOf(() -> submit(new MetaCommand.SetClass("/g", StorageClass.replicated(2))))).isEqualTo(Status.BAD_REQUEST);
        assertThat(statusOf(() -> submit(new MetaCommand.SetClass("/g", StorageClass.ec(3, 1))))).isEqualTo(Status.BAD_REQUEST);
        assertThat(statusOf(() -> submit(new MetaCommand.SetClass("/g", StorageClass.ec(2, 2))))).isEqualTo(Status.BAD_REQUEST);
        StorageClass rack = StorageClass.ec(2, 1).withDomain(StorageClass.Domain.RACK);
        submit(new MetaCommand.SetClass("/g", rack));
        assertThat(ns.inode(g.inode()).storageClass()).isEqualTo(rack);

        FileAttr d = create(ROOT, "d", FileType.DIR);
        submit(new MetaCommand.SetClass("/d", StorageClass.ec(4, 2)));
        assertThat(ns.inode(d.inode()).storageClass()).isEqualTo(StorageClass.ec(4, 2));
        submit(new MetaCommand.SetClass("/d", StorageClass.DEFAULT));
        assertThat(ns.inode(d.inode()).storageClass()).isEqualTo(StorageClass.DEFAULT);
    }

    /** Seeded sweep: under random creates, removes and renames, a READDIR walked in pages sees every entry that lived throughout exactly once. */
    @Test void readDirCookiesAreStableUnderConcurrentChanges() {
        for (long seed = 1; seed <= 20; seed++) {
            format();
            Random rnd = new Random(seed);
            FileAttr d = create(ROOT, "d", FileType.DIR);
            List<String> stable = new ArrayList<>();
            for (int i = 0; i < 60; i++) {
                String n = "s" + i;
                create(d.inode(), n, FileType.FILE);
                stable.add(n);
            }
            Map<String, Integer> seen = new HashMap<>();
            long cookie = 0;
            int churn = 0;
            while (true) {
                List<DirCookieEntry> page = ns.readDir(d.inode(), cookie, 1 + rnd.nextInt(7));
                for (DirCookieEntry e : page) {
                    assertThat(e.cookie()).isGreaterThan(cookie).isGreaterThanOrEqualTo(Namespace.FIRST_ENTRY_ID);
                    seen.merge(e.name(), 1, Integer::sum);
                    cookie = e.cookie();
                }
                if (ns.readDirDone(d.inode(), cookie)) break;
                // churn between pages: new names, removed names, renamed temporaries
                String t = "t" + churn++;
                create(d.inode(), t, FileType.FILE);
                if (rnd.nextBoolean()) submit(new MetaCommand.Rename(d.inode(), t, d.inode(), t + "r", ++now));
                else submit(new MetaCommand.Unlink(d.inode(), t, ++now));
            }
            for (String n : stable) assertThat(seen.get(n)).as("seed %d name %s", seed, n).isEqualTo(1);
            assertThat(seen.values()).allMatch(v -> v == 1);
        }
    }

    @Test void aStoreOfAnotherLayoutIsRefusedByName() {
        kv.write(new dev.cairn.core.env.KvBatch().put("Mformat".getBytes(), java.nio.ByteBuffer.allocate(4).putInt(1).array()), true);
        try {
            ns.checkFormat();
            throw new AssertionError("not refused");
        } catch (IllegalStateException e) {
            assertThat(e.getMessage()).contains("layout 1").contains("empty data directory");
        }
    }
}
