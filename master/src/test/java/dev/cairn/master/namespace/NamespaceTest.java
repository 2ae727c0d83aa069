package dev.cairn.master.namespace;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.cairn.core.proto.Status;
import dev.cairn.core.proto.StorageClass;
import dev.cairn.core.proto.Types;
import dev.cairn.core.proto.Types.DirEntry;
import dev.cairn.core.proto.Types.FileAttr;
import dev.cairn.core.proto.Types.FileType;
import dev.cairn.master.meta.ChunkRecord;
import dev.cairn.master.meta.MetaCommand;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class NamespaceTest extends NamespaceFixture {
    @Test void createLookupListRemoveInATree() {
        submit(new MetaCommand.Mkdir("/a", 1));
        submit(new MetaCommand.Mkdir("/a/b", 2));
        FileAttr f = submit(new MetaCommand.CreateFile("/a/b/f", 0, StorageClass.DEFAULT, 3));
        assertThat(f.type()).isEqualTo(FileType.FILE);
        assertThat(f.chunkSize()).isEqualTo(Namespace.DEFAULT_CHUNK_SIZE);
        assertThat(f.storageClass()).isEqualTo(StorageClass.replicated(3));
        assertThat(ns.resolve("/a/b/f").inode()).isEqualTo(f.inode());
        assertThat(ns.resolve("//a///b/f/").inode()).isEqualTo(f.inode());
        assertThat(ns.list("/a/b")).extracting(DirEntry::name).containsExactly("f");
        assertThat(statusOf(() -> submit(new MetaCommand.Remove("/a")))).isEqualTo(Status.NOT_EMPTY);
        submit(new MetaCommand.Remove("/a/b/f"));
        submit(new MetaCommand.Remove("/a/b"));
        submit(new MetaCommand.Remove("/a"));
        assertThat(ns.list("/")).isEmpty();
        assertThat(statusOf(() -> ns.resolve("/a"))).isEqualTo(Status.NOT_FOUND);
    }

    /**
     * A client operation retried under its op id (its first answer lost in a failover) gets its first outcome and
     * changes nothing again; another op meets the change (EXISTS, NOT_FOUND); outcomes are forgotten oldest first.
     */
    @Test void aRetriedOperationGetsItsFirstOutcomeAndChangesNothingAgain() {
        FileAttr d = submit(new MetaCommand.Mkdir("/d", 1, 77));
        int keys = kv.size();
        assertThat(submit(new MetaCommand.Mkdir("/d", 2, 77))).isEqualTo(d);
        assertThat(kv.size()).as("nothing written for the retry").isEqualTo(keys);
        assertThat(statusOf(() -> submit(new MetaCommand.Mkdir("/d", 2, 78)))).as("another op").isEqualTo(Status.EXISTS);
        FileAttr f = submit(new MetaCommand.CreateFile("/d/f", 0, StorageClass.DEFAULT, 3, 79));
        var lease = submit(new MetaCommand.AllocChunk(f.inode(), 0));
        List<Long> freed = submit(new MetaCommand.Remove("/d/f", 80));
        assertThat(freed).containsExactly(lease.chunkId());
        assertThat(submit(new MetaCommand.Remove("/d/f", 80))).as("the retry answers what the remove freed").containsExactly(lease.chunkId());
        assertThat(statusOf(() -> submit(new MetaCommand.Remove("/d/f", 81)))).isEqualTo(Status.NOT_FOUND);
        MetaCommand.Changed moved = submit(new MetaCommand.Rename(Namespace.ROOT, "d", Namespace.ROOT, "e", 4, 82));
        submit(new MetaCommand.Mkdir("/d", 5, 83));
        assertThat(submit(new MetaCommand.Rename(Namespace.ROOT, "d", Namespace.ROOT, "e", 4, 82))).as("not a second rename of the new /d").isEqualTo(moved);
        assertThat(ns.resolve("/d").type()).isEqualTo(FileType.DIR);
        assertThat(ns.list("/")).extracting(DirEntry::name).containsExactly("d", "e");
        ns.rememberOps(3);
        for (int i = 0; i < 4; i++) submit(new MetaCommand.Mkdir("/x" + i, 6, 100 + i));
        assertThat(statusOf(() -> submit(new MetaCommand.Mkdir("/d", 7, 83)))).as("forgotten: done again").isEqualTo(Status.EXISTS);
        assertThat(submit(new MetaCommand.Mkdir("/x3", 8, 103)).inode()).as("still remembered").isEqualTo(ns.resolve("/x3").inode());
    }

    @Test void errorsNameTheirCauseAndWriteNothing() {
        submit(new MetaCommand.CreateFile("/f", 0, StorageClass.DEFAULT, 1));
        int keys = kv.size();
        assertThat(statusOf(() -> submit(new MetaCommand.CreateFile("/f", 0, StorageClass.DEFAULT, 1)))).isEqualTo(Status.EXISTS);
        assertThat(statusOf(() -> submit(new MetaCommand.CreateFile("/f/g", 0, StorageClass.DEFAULT, 1)))).isEqualTo(Status.NOT_DIR);
        assertThat(statusOf(() -> submit(new MetaCommand.CreateFile("/no/g", 0, StorageClass.DEFAULT, 1)))).isEqualTo(Status.NOT_FOUND);
        assertThat(statusOf(() -> submit(new MetaCommand.CreateFile("/g", 1000, StorageClass.DEFAULT, 1)))).isEqualTo(Status.BAD_REQUEST);
        assertThatThrownBy(() -> StorageClass.replicated(99)).isInstanceOf(IllegalArgumentException.class);
        assertThat(statusOf(() -> submit(new MetaCommand.Remove("/")))).isEqualTo(Status.BAD_REQUEST);
        assertThat(statusOf(() -> ns.list("/f"))).isEqualTo(Status.NOT_DIR);
        assertThat(kv.size()).isEqualTo(keys);
    }

    @ParameterizedTest
    @ValueSource(strings = {"", "relative", "/a/../b", "/./a", "/a\u0000b"})
    void malformedPathsAreRefused(String path) {
        assertThat(statusOf(() -> ns.resolve(path))).isEqualTo(Status.BAD_REQUEST);
        assertThat(statusOf(() -> submit(new MetaCommand.Mkdir(path, 0)))).isIn(Status.BAD_REQUEST, Status.EXISTS);
    }

    @Test void overlongNamesAreRefused() {
        assertThat(statusOf(() -> submit(new MetaCommand.Mkdir("/" + "x".repeat(256), 0)))).isEqualTo(Status.BAD_REQUEST);
        assertThat(statusOf(() -> ns.resolve("/" + "a/".repeat(3000)))).isEqualTo(Status.BAD_REQUEST);
    }

    @Test void chunksAreAllocatedOnceAndVersionsOnlyGrow() {
        FileAttr f = submit(new MetaCommand.CreateFile("/f", 65536, StorageClass.replicated(2), 0));
        ChunkRecord c0 = submit(new MetaCommand.AllocChunk(f.inode(), 0));
        assertThat(c0.version()).isEqualTo(1);
        assertThat(submit(new MetaCommand.AllocChunk(f.inode(), 0))).isEqualTo(c0);
        ChunkRecord c1 = submit(new MetaCommand.AllocChunk(f.inode(), 1));
        assertThat(c1.chunkId()).isGreaterThan(c0.chunkId());
        ChunkRecord bumped = submit(new MetaCommand.BumpVersion(c0.chunkId()));
        assertThat(bumped.version()).isEqualTo(2);
        assertThat(ns.chunk(c0.chunkId()).version()).isEqualTo(2);
        assertThat(ns.chunks(f.inode(), 0, 10)).extracting(ChunkRecord::index).containsExactly(0, 1);
        assertThat(ns.nextChunkId()).isEqualTo(c1.chunkId() + 1);
        List<Long> removed = submit(new MetaCommand.Remove("/f"));
        assertThat(removed).containsExactly(c0.chunkId(), c1.chunkId());
        assertThat(ns.chunk(c0.chunkId())).isNull();
        assertThat(statusOf(() -> submit(new MetaCommand.BumpVersion(c0.chunkId())))).isEqualTo(Status.NOT_FOUND);
    }

    /**
     * A bump reserved, sent, and never recorded (the master lost power in between) leaves its version used up: a
     * later lease, recorded first or reserved again, goes above it, and the reservation survives a reopen. Reusing
     * it let a copy that took the lost bump count as current without the writes of the reissued lease (seed 5027).
     */
    @Test void aReservedVersionIsNeverHandedOutAgain() {
        FileAttr f = submit(new MetaCommand.CreateFile("/f", 65536, StorageClass.replicated(2), 0));
        ChunkRecord c = submit(new MetaCommand.AllocChunk(f.inode(), 0));
        long reserved = submit(new MetaCommand.ReserveVersion(c.chunkId()));
        assertThat(reserved).isEqualTo(2);
        assertThat(ns.chunk(c.chunkId()).version()).as("a reservation is not the record").isEqualTo(1);
        Namespace reopened = new Namespace(kv, 3);
        assertThat(reopened.handedOut(c.chunkId())).isEqualTo(2);
        assertThat(submit(new MetaCommand.ReserveVersion(c.chunkId()))).isEqualTo(3);
        assertThat(submit(new MetaCommand.BumpVersion(c.chunkId())).version()).isEqualTo(4);
        assertThat(ns.handedOut(c.chunkId())).isEqualTo(4);
        // a copy that took the lost bump to v2 reports: adopting it never moves the record back
        assertThat(submit(new MetaCommand.AdoptVersion(c.chunkId(), 2)).version()).isEqualTo(4);
        long next = submit(new MetaCommand.ReserveVersion(c.chunkId()));
        assertThat(submit(new MetaCommand.AdoptVersion(c.chunkId(), next)).version()).isEqualTo(next);
        submit(new MetaCommand.ReserveVersion(c.chunkId()));
        submit(new MetaCommand.Remove("/f"));
        int[] reservations = {0};
        kv.scan(new byte[] {'H'}, (k, v) -> { reservations[0]++; return true; });
        assertThat(reservations[0]).as("a removed chunk leaves no reservation behind").isZero();
        assertThat(ns.handedOut(c.chunkId())).isZero();
        assertThat(statusOf(() -> submit(new MetaCommand.ReserveVersion(c.chunkId())))).isEqualTo(Status.NOT_FOUND);
    }

    @Test void filesKeepTheirStorageClass() {
        FileAttr ec = submit(new MetaCommand.CreateFile("/ec", 0, StorageClass.ec(8, 3), 0));
        assertThat(ec.storageClass()).isEqualTo(StorageClass.ec(8, 3));
        assertThat(new Namespace(kv, 3).resolve("/ec").storageClass()).isEqualTo(StorageClass.ec(8, 3));
    }

    @Test void lengthCommitsAndEverythingSurvivesAReopen() {
        FileAttr f = submit(new MetaCommand.CreateFile("/f", 0, StorageClass.DEFAULT, 5));
        submit(new MetaCommand.SetLength(f.inode(), 12345, 9, List.of()));
        Namespace reopened = new Namespace(kv, 3);
        assertThat(reopened.isEmpty()).isFalse();
        assertThat(reopened.resolve("/f").size()).isEqualTo(12345);
        assertThat(reopened.resolve("/f").mtimeMillis()).isEqualTo(9);
    }

    @Test void everyAcceptedMutationIsSyncedBeforeItsReply() {
        int before = kv.syncedWrites();
        submit(new MetaCommand.Mkdir("/d", 0));
        submit(new MetaCommand.CreateFile("/d/f", 0, StorageClass.DEFAULT, 0));
        assertThat(kv.syncedWrites()).isEqualTo(before + 2);
    }

    @Test void aCommitRaisesTheDataVersionOfTheChunksItWrote() {
        FileAttr f = submit(new MetaCommand.CreateFile("/f", 65536, StorageClass.replicated(2), 0));
        FileAttr g = submit(new MetaCommand.CreateFile("/g", 65536, StorageClass.replicated(2), 0));
        ChunkRecord c = submit(new MetaCommand.AllocChunk(f.inode(), 0));
        assertThat(c.dataVersion()).as("nothing committed to a new chunk").isZero();
        submit(new MetaCommand.BumpVersion(c.chunkId()));
        submit(new MetaCommand.BumpVersion(c.chunkId())); // v3: the lease a writer writes under
        ChunkRecord v3 = new Namespace(kv, 3).chunk(c.chunkId());
        // until something is committed at v3, copies at v1 and v2 still hold every acknowledged byte
        assertThat(v3.current(1, false)).isTrue();
        assertThat(v3.current(2, false)).isTrue();
        assertThat(v3.current(2, true)).as("an erasure-coded part must be at the version exactly").isFalse();
        submit(new MetaCommand.SetLength(f.inode(), 100, 1, List.of(new Types.ChunkVersion(c.chunkId(), 3))));
        ChunkRecord committed = new Namespace(kv, 3).chunk(c.chunkId());
        assertThat(committed.dataVersion()).isEqualTo(3);
        assertThat(committed.current(2, false)).isFalse();
        assertThat(committed.current(3, false)).isTrue();
        // a write under an older lease cannot be acknowledged once the chunk was leased again
        submit(new MetaCommand.BumpVersion(c.chunkId()));
        assertThat(statusOf(() -> submit(new MetaCommand.SetLength(f.inode(), 200, 2, List.of(new Types.ChunkVersion(c.chunkId(), 3))))))
                .isEqualTo(Status.STALE);
        assertThat(new Namespace(kv, 3).resolve("/f").size()).as("a refused commit changes nothing").isEqualTo(100);
        // a version never leased, or another file's chunk: refused
        assertThat(statusOf(() -> submit(new MetaCommand.SetLength(f.inode(), 200, 2, List.of(new Types.ChunkVersion(c.chunkId(), 9))))))
                .isEqualTo(Status.BAD_REQUEST);
        assertThat(statusOf(() -> submit(new MetaCommand.SetLength(g.inode(), 200, 2, List.of(new Types.ChunkVersion(c.chunkId(), 4))))))
                .isEqualTo(Status.BAD_REQUEST);
        // a chunk dropped meanwhile (a truncate) is no longer the file's: what was written there is gone, so the
        // commit is refused as STALE (the writer must not acknowledge it) and changes nothing
        assertThat(statusOf(() -> submit(new MetaCommand.SetLength(f.inode(), 300, 3,
                List.of(new Types.ChunkVersion(c.chunkId(), 4), new Types.ChunkVersion(999, 1)))))).isEqualTo(Status.STALE);
        assertThat(new Namespace(kv, 3).resolve("/f").size()).isEqualTo(100);
        submit(new MetaCommand.SetLength(f.inode(), 300, 3, List.of(new Types.ChunkVersion(c.chunkId(), 4))));
        assertThat(new Namespace(kv, 3).chunk(c.chunkId()).dataVersion()).isEqualTo(4);
        assertThat(new Namespace(kv, 3).resolve("/f").size()).isEqualTo(300);
    }

    /**
     * An erasure-coded chunk written afresh under a new id takes its old chunk's place at the commit, only if the old
     * chunk is still the file's at the version the rewrite started from: a second rewrite from the same base would undo
     * the first one's acknowledged change.
     */
    @Test void aRewrittenChunkIsSwappedInOnlyOverTheChunkItStartedFrom() {
        FileAttr f = submit(new MetaCommand.CreateFile("/e", 65536, StorageClass.ec(2, 1), 0));
        ChunkRecord old = submit(new MetaCommand.AllocChunk(f.inode(), 0));
        submit(new MetaCommand.SetLength(f.inode(), 1000, 1, List.of(new Types.ChunkVersion(old.chunkId(), 1))));
        long first = submit(new MetaCommand.ReserveChunkIds(2));
        MetaCommand.Rewritten mine = new MetaCommand.Rewritten(0, old.chunkId(), old.version(), first);
        MetaCommand.Rewritten theirs = new MetaCommand.Rewritten(0, old.chunkId(), old.version(), first + 1);
        assertThat(statusOf(() -> submit(new MetaCommand.CommitRewrite(f.inode(), 1000, 2, List.of(new Types.ChunkVersion(first, 2)),
                List.of(new MetaCommand.Rewritten(0, old.chunkId(), old.version() + 1, first)))))).as("another version").isEqualTo(Status.STALE);
        assertThat(statusOf(() -> submit(new MetaCommand.CommitRewrite(f.inode(), 1000, 2, List.of(new Types.ChunkVersion(first + 5, 2)),
                List.of(new MetaCommand.Rewritten(0, old.chunkId(), old.version(), first + 5)))))).as("an id never reserved").isEqualTo(Status.BAD_REQUEST);
        assertThat(statusOf(() -> submit(new MetaCommand.CommitRewrite(f.inode(), 1000, 2, List.of(), List.of(mine)))))
                .as("no version named for the new chunk").isEqualTo(Status.BAD_REQUEST);
        assertThat(new Namespace(kv, 3).chunks(f.inode(), 0, 1)).as("refusals change nothing").containsExactly(old.withDataVersion(1));

        List<Long> replaced = submit(new MetaCommand.CommitRewrite(f.inode(), 1500, 3, List.of(new Types.ChunkVersion(first, 2)), List.of(mine)));
        assertThat(replaced).containsExactly(old.chunkId());
        Namespace after = new Namespace(kv, 3);
        assertThat(after.chunks(f.inode(), 0, 1)).containsExactly(new ChunkRecord(first, 2, f.inode(), 0, 2));
        assertThat(after.chunk(old.chunkId())).isNull();
        assertThat(after.resolve("/e").size()).isEqualTo(1500);
        assertThat(statusOf(() -> submit(new MetaCommand.CommitRewrite(f.inode(), 1500, 4, List.of(new Types.ChunkVersion(first + 1, 2)),
                List.of(theirs))))).as("a second rewrite from the same base").isEqualTo(Status.STALE);
        assertThat(new Namespace(kv, 3).chunks(f.inode(), 0, 1)).containsExactly(new ChunkRecord(first, 2, f.inode(), 0, 2));
    }

    /**
     * A commit is refused where it would leave a committed chunk whose copies hold less of the file than the file has
     * in it: a chunk holding only the writer's bytes (made fresh by its lease, or erasure-coded) committed under a size
     * another writer grew the file to past the writer's own length.
     */
    /**
     * A bump cuts the copies to the length committed when its version was reserved (BumpVersion.cutTo): a commit of a
     * write under the version before, arriving after the reservation, would acknowledge bytes the cut removes.
     */
    @Test void aCommitOfAnOlderVersionIsRefusedOnceABumpReservedANewOne() {
        FileAttr f = submit(new MetaCommand.CreateFile("/f", 65536, StorageClass.replicated(2), 0));
        ChunkRecord c = submit(new MetaCommand.AllocChunk(f.inode(), 0));
        submit(new MetaCommand.SetLength(f.inode(), 100, 1, List.of(new Types.ChunkVersion(c.chunkId(), 1))));
        submit(new MetaCommand.ReserveVersion(c.chunkId())); // another writer's lease: its bump is on its way
        assertThat(statusOf(() -> submit(new MetaCommand.SetLength(f.inode(), 5000, 2, List.of(new Types.ChunkVersion(c.chunkId(), 1))))))
                .isEqualTo(Status.STALE);
        assertThat(new Namespace(kv, 3).resolve("/f").size()).isEqualTo(100);
    }

    @Test void aCommitMayNotLeaveAChunkShortOfTheFile() {
        FileAttr f = submit(new MetaCommand.CreateFile("/f", 65536, StorageClass.replicated(2), 0));
        ChunkRecord c0 = submit(new MetaCommand.AllocChunk(f.inode(), 0));
        ChunkRecord c2 = submit(new MetaCommand.AllocChunk(f.inode(), 2));
        // another writer grows the file into chunk 2 (over chunk 1, a hole)
        submit(new MetaCommand.SetLength(f.inode(), 2 * 65536 + 10, 1, List.of(new Types.ChunkVersion(c2.chunkId(), 1))));
        // this writer made chunk 0 fresh and wrote 100 bytes of it, for a file it saw 100 bytes long
        assertThat(statusOf(() -> submit(new MetaCommand.SetLength(f.inode(), 100, 2, List.of(new Types.ChunkVersion(c0.chunkId(), 1))))))
                .as("a fresh chunk written for a shorter file").isEqualTo(Status.STALE);
        assertThat(new Namespace(kv, 3).chunk(c0.chunkId()).committed()).as("a refused commit changes nothing").isFalse();
        // written for the whole chunk, it holds what the file has there
        submit(new MetaCommand.SetLength(f.inode(), 65536, 2, List.of(new Types.ChunkVersion(c0.chunkId(), 1))));
        assertThat(new Namespace(kv, 3).chunk(c0.chunkId()).committed()).isTrue();
        // a chunk already committed holds its bytes from before the bump (a replica is bumped in place): any length will do
        submit(new MetaCommand.BumpVersion(c0.chunkId()));
        submit(new MetaCommand.SetLength(f.inode(), 100, 3, List.of(new Types.ChunkVersion(c0.chunkId(), 2))));

        // erasure-coded: every chunk is uploaded whole, so only as far as the writer's length
        FileAttr e = submit(new MetaCommand.CreateFile("/e", 65536, StorageClass.ec(2, 1), 0));
        ChunkRecord e0 = submit(new MetaCommand.AllocChunk(e.inode(), 0));
        submit(new MetaCommand.SetLength(e.inode(), 65536, 1, List.of(new Types.ChunkVersion(e0.chunkId(), 1))));
        long fresh = submit(new MetaCommand.ReserveChunkIds(1));
        MetaCommand.Rewritten rewrite = new MetaCommand.Rewritten(0, e0.chunkId(), e0.version(), fresh);
        assertThat(statusOf(() -> submit(new MetaCommand.CommitRewrite(e.inode(), 500, 2, List.of(new Types.ChunkVersion(fresh, 2)), List.of(rewrite)))))
                .as("a rewrite of 500 bytes swapped into a chunk the file fills").isEqualTo(Status.STALE);
        assertThat(new Namespace(kv, 3).chunks(e.inode(), 0, 1)).extracting(ChunkRecord::chunkId).containsExactly(e0.chunkId());
        submit(new MetaCommand.CommitRewrite(e.inode(), 65536, 2, List.of(new Types.ChunkVersion(fresh, 2)), List.of(rewrite)));
        assertThat(new Namespace(kv, 3).chunks(e.inode(), 0, 1)).extracting(ChunkRecord::chunkId).containsExactly(fresh);
    }

    /**
     * Boundaries the mutation run (./cairn mutation) found unjudged: a commit vouches only for chunks that start below
     * the committed size (one starting exactly at it holds nothing committed); a chunk named by a commit must hold the
     * file as far as it reaches into that chunk, judged within the chunk, not from the file's start.
     */
    @Test void aCommitVouchesOnlyForChunksBelowItsSizeAndEachNamedChunkMustReachTheFileEndWithinIt() {
        FileAttr f = submit(new MetaCommand.CreateFile("/b", 65536, StorageClass.replicated(2), 0));
        ChunkRecord c0 = submit(new MetaCommand.AllocChunk(f.inode(), 0));
        ChunkRecord c1 = submit(new MetaCommand.AllocChunk(f.inode(), 1));
        submit(new MetaCommand.SetLength(f.inode(), 65536, 1, List.of(new Types.ChunkVersion(c0.chunkId(), 1), new Types.ChunkVersion(c1.chunkId(), 1))));
        assertThat(new Namespace(kv, 3).chunk(c0.chunkId()).dataVersion()).as("the chunk the size covers").isEqualTo(1);
        assertThat(new Namespace(kv, 3).chunk(c1.chunkId()).dataVersion()).as("a chunk starting at the size holds nothing committed").isZero();

        FileAttr e = submit(new MetaCommand.CreateFile("/e", 65536, StorageClass.ec(2, 1), 0));
        ChunkRecord e0 = submit(new MetaCommand.AllocChunk(e.inode(), 0));
        ChunkRecord e1 = submit(new MetaCommand.AllocChunk(e.inode(), 1));
        submit(new MetaCommand.SetLength(e.inode(), 65536 + 500, 1, List.of(new Types.ChunkVersion(e0.chunkId(), 1), new Types.ChunkVersion(e1.chunkId(), 1))));
        // chunk 1 written for a file of 65536 + 100 bytes holds 100 of the 500 the file has in it now: refused
        assertThat(statusOf(() -> submit(new MetaCommand.SetLength(e.inode(), 65536 + 100, 2, List.of(new Types.ChunkVersion(e1.chunkId(), 1))))))
                .isEqualTo(Status.STALE);
        // written for exactly the file's length: it reaches the end, so the commit stands (it grows nothing)
        submit(new MetaCommand.SetLength(e.inode(), 65536 + 500, 3, List.of(new Types.ChunkVersion(e1.chunkId(), 1))));
        // a commit of the size the file has, not naming the partly filled last chunk, grows nothing: not refused
        submit(new MetaCommand.SetLength(e.inode(), 65536 + 500, 4, List.of(new Types.ChunkVersion(e0.chunkId(), 1))));
        // an erasure-coded file ending exactly at a chunk boundary grows by a new chunk without naming the full one
        FileAttr g = submit(new MetaCommand.CreateFile("/eg", 65536, StorageClass.ec(2, 1), 0));
        ChunkRecord g0 = submit(new MetaCommand.AllocChunk(g.inode(), 0));
        ChunkRecord g1 = submit(new MetaCommand.AllocChunk(g.inode(), 1));
        submit(new MetaCommand.SetLength(g.inode(), 65536, 1, List.of(new Types.ChunkVersion(g0.chunkId(), 1))));
        submit(new MetaCommand.SetLength(g.inode(), 65536 + 100, 2, List.of(new Types.ChunkVersion(g1.chunkId(), 1))));
        assertThat(new Namespace(kv, 3).resolve("/eg").size()).isEqualTo(65536 + 100);
    }

    /**
     * An erasure-coded file does not grow past its partly filled last chunk unless the commit writes that chunk again
     * (its parts cannot grow in place): a writer committing a size from before another writer's truncate and regrowth
     * is refused (60 s seed 5112); the writer that rewrites the chunk, or names it, grows the file.
     */
    @Test void anErasureCodedFileGrowsPastItsLastChunkOnlyIfTheCommitWritesItAgain() {
        FileAttr e = submit(new MetaCommand.CreateFile("/g", 65536, StorageClass.ec(2, 1), 0));
        ChunkRecord e0 = submit(new MetaCommand.AllocChunk(e.inode(), 0));
        ChunkRecord e1 = submit(new MetaCommand.AllocChunk(e.inode(), 1));
        submit(new MetaCommand.SetLength(e.inode(), 65536 + 500, 1, List.of(new Types.ChunkVersion(e0.chunkId(), 1), new Types.ChunkVersion(e1.chunkId(), 1))));
        // another writer, whose view had the file at two full chunks, commits that size naming only chunk 0
        assertThat(statusOf(() -> submit(new MetaCommand.SetLength(e.inode(), 2 * 65536, 2, List.of(new Types.ChunkVersion(e0.chunkId(), 1))))))
                .as("grown past chunk 1's 500 bytes without writing it").isEqualTo(Status.STALE);
        assertThat(new Namespace(kv, 3).resolve("/g").size()).isEqualTo(65536 + 500);
        // a commit that does not grow the file, or grows it to a chunk boundary it started from, is not this case
        submit(new MetaCommand.SetLength(e.inode(), 65536 + 200, 3, List.of(new Types.ChunkVersion(e0.chunkId(), 1))));
        // the writer that rewrites chunk 1 whole grows the file
        long fresh = submit(new MetaCommand.ReserveChunkIds(1));
        submit(new MetaCommand.CommitRewrite(e.inode(), 2 * 65536, 4, List.of(new Types.ChunkVersion(fresh, 2)),
                List.of(new MetaCommand.Rewritten(1, e1.chunkId(), e1.version(), fresh))));
        assertThat(new Namespace(kv, 3).resolve("/g").size()).isEqualTo(2 * 65536);
        // replicated: a writer extends its copies under its lease without naming the chunk; not refused
        FileAttr r = submit(new MetaCommand.CreateFile("/r", 65536, StorageClass.replicated(2), 0));
        ChunkRecord r0 = submit(new MetaCommand.AllocChunk(r.inode(), 0));
        submit(new MetaCommand.SetLength(r.inode(), 500, 1, List.of(new Types.ChunkVersion(r0.chunkId(), 1))));
        submit(new MetaCommand.SetLength(r.inode(), 65536, 2, List.of()));
        assertThat(new Namespace(kv, 3).resolve("/r").size()).isEqualTo(65536);
    }

    /**
     * An archive rewrite keeps what each chunk holds: a chunk committed within the file's size is committed in its new
     * class; one wholly past the size (written, never committed) is rewritten empty and stays a hole, so a writer may
     * grow the file over it without its empty parts counting short.
     */
    @Test void anArchivedChunkPastTheSizeStaysAHole() {
        FileAttr f = submit(new MetaCommand.CreateFile("/a", 65536, StorageClass.replicated(2), 0));
        ChunkRecord c0 = submit(new MetaCommand.AllocChunk(f.inode(), 0));
        ChunkRecord c1 = submit(new MetaCommand.AllocChunk(f.inode(), 1));
        submit(new MetaCommand.SetLength(f.inode(), 1000, 5, List.of(new Types.ChunkVersion(c0.chunkId(), 1))));
        long first = submit(new MetaCommand.ReserveChunkIds(2));
        submit(new MetaCommand.Archive(f.inode(), 5, 1000, StorageClass.ec(2, 1), List.of(
                new MetaCommand.Rewritten(0, c0.chunkId(), c0.version(), first), new MetaCommand.Rewritten(1, c1.chunkId(), c1.version(), first + 1))));
        Namespace after = new Namespace(kv, 3);
        assertThat(after.chunk(first).committed()).isTrue();
        assertThat(after.chunk(first + 1).committed()).as("rewritten from nothing acknowledged").isFalse();
        assertThat(after.resolve("/a").storageClass()).isEqualTo(StorageClass.ec(2, 1));
    }

    @Test void theWatcherHearsOfEveryChunkAndInodeACommandWrites() {
        List<String> heard = new java.util.ArrayList<>();
        ns.watch(new Namespace.Watcher() {
            @Override public void chunkChanged(long chunkId, int delta) { heard.add("K" + chunkId + (delta > 0 ? "+" : delta < 0 ? "-" : "")); }
            @Override public void inodeChanged(long inode) { heard.add("I" + inode); }
        });
        FileAttr f = submit(new MetaCommand.CreateFile("/f", 65536, StorageClass.replicated(2), 0));
        assertThat(heard).contains("I" + f.inode()).noneMatch(h -> h.startsWith("K"));
        heard.clear();
        ChunkRecord c = submit(new MetaCommand.AllocChunk(f.inode(), 0));
        assertThat(heard).containsExactly("K" + c.chunkId() + "+");
        heard.clear();
        submit(new MetaCommand.AllocChunk(f.inode(), 0)); // already there: nothing written
        assertThat(heard).isEmpty();
        submit(new MetaCommand.BumpVersion(c.chunkId()));
        assertThat(heard).containsExactly("K" + c.chunkId());
        heard.clear();
        submit(new MetaCommand.SetLength(f.inode(), 10, 1, List.of(new Types.ChunkVersion(c.chunkId(), 2))));
        assertThat(heard).containsExactlyInAnyOrder("K" + c.chunkId(), "I" + f.inode());
        heard.clear();
        statusOf(() -> submit(new MetaCommand.BumpVersion(999)));
        assertThat(heard).as("a refused command writes nothing").isEmpty();
        submit(new MetaCommand.Remove("/f"));
        assertThat(heard).contains("K" + c.chunkId() + "-", "I" + f.inode());
    }
}
