package dev.cairn.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.cairn.core.env.Address;
import dev.cairn.core.proto.CairnException;
import dev.cairn.core.proto.MasterProtocol.ChunkInfo;
import dev.cairn.core.proto.MasterProtocol.CopyInfo;
import dev.cairn.core.proto.MasterProtocol.FileInfoReply;
import dev.cairn.core.proto.MasterProtocol.ServerStatus;
import dev.cairn.core.proto.MasterProtocol.StatusReply;
import dev.cairn.core.proto.Status;
import dev.cairn.core.proto.StorageClass;
import dev.cairn.core.proto.Types.DirEntry;
import dev.cairn.core.proto.Types.DiskReport;
import dev.cairn.core.proto.Types.DiskState;
import dev.cairn.core.proto.Types.FileAttr;
import dev.cairn.core.proto.Types.FileType;
import dev.cairn.core.proto.Types.Topology;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** fsck's judgement of files, chunks and disks, on a namespace and registry made up for it. */
class FsckTest {
    static final int CHUNK = 1 << 20;

    /** A stand-in cluster: directories, files with their chunks, servers. */
    static final class Cluster implements Fsck.Source {
        final Map<String, List<String>> dirs = new LinkedHashMap<>();
        final Map<String, FileInfoReply> files = new LinkedHashMap<>();
        final List<ServerStatus> servers = new ArrayList<>();

        void server(String id, boolean alive, int quarantined) {
            servers.add(new ServerStatus(id, new Address(id, 1), new Topology(id, "r", ""), alive, false, 0, 1 << 30, 0, 0,
                    List.of(new DiskReport("disk0", DiskState.OK, 100, 0, 0, quarantined))));
        }

        void file(String dir, String name, long size, StorageClass cls, ChunkInfo... chunks) {
            dirs.computeIfAbsent(dir, d -> new ArrayList<>()).add(name);
            files.put(dir + "/" + name, new FileInfoReply(1, Status.OK, "", attr(FileType.FILE, size, cls), List.of(chunks)));
        }

        @Override public StatusReply status() { return new StatusReply(1, Status.OK, "", false, 0, 0, 0, 0, 0, 0, 0, 0, 0, servers, 0); }

        @Override public FileAttr lookup(String path) {
            if (dirs.containsKey(path) || path.equals("/")) return attr(FileType.DIR, 0, StorageClass.DEFAULT);
            if (files.containsKey(path)) return files.get(path).attr();
            throw new CairnException(Status.NOT_FOUND, path);
        }

        @Override public List<DirEntry> list(String path) {
            List<DirEntry> out = new ArrayList<>();
            for (String sub : dirs.keySet()) {
                String parent = sub.substring(0, Math.max(1, sub.lastIndexOf('/')));
                if (!sub.equals(path) && parent.equals(path)) out.add(new DirEntry(sub.substring(sub.lastIndexOf('/') + 1), attr(FileType.DIR, 0, StorageClass.DEFAULT)));
            }
            for (String name : dirs.getOrDefault(path, List.of())) out.add(new DirEntry(name, lookup(path + "/" + name)));
            return out;
        }

        @Override public FileInfoReply fileInfo(String path) {
            FileInfoReply r = files.get(path);
            if (r == null) throw new CairnException(Status.NOT_FOUND, path);
            return r;
        }
    }

    static FileAttr attr(FileType type, long size, StorageClass cls) {
        return new FileAttr(7, type, size, 0, CHUNK, cls, 0644, 0, 0, 1, 0, 0, 0, 1, "");
    }

    static ChunkInfo chunk(int index, CopyInfo... copies) { return new ChunkInfo(index, 100 + index, 3, List.of(copies)); }

    static CopyInfo on(String server, int part) { return new CopyInfo(server, part, 3, true); }

    static CopyInfo stale(String server) { return new CopyInfo(server, 0, 2, false); }

    final ByteArrayOutputStream bytes = new ByteArrayOutputStream();

    Fsck.Report run(Cluster c, String root) {
        return new Fsck(c, new PrintStream(bytes, true, StandardCharsets.UTF_8), false).run(root);
    }

    String out() { return bytes.toString(StandardCharsets.UTF_8); }

    Cluster fiveServers() {
        Cluster c = new Cluster();
        for (int i = 1; i <= 5; i++) c.server("cs" + i, i != 5, 0); // cs5 is down
        return c;
    }

    @Test void aHealthyClusterIsHealthy() {
        Cluster c = fiveServers();
        c.file("/d", "a", 2 * CHUNK, StorageClass.replicated(2), chunk(0, on("cs1", 0), on("cs2", 0)), chunk(1, on("cs3", 0), on("cs4", 0)));
        c.file("/d", "e", CHUNK, StorageClass.ec(2, 1), chunk(0, on("cs1", 0), on("cs2", 1), on("cs3", 2)));
        c.file("/d", "empty", 0, StorageClass.replicated(2));
        // a chunk past the end (a write never committed) with no copy: nothing a reader is served
        c.file("/d", "short", 10, StorageClass.replicated(2), chunk(0, on("cs1", 0), on("cs2", 0)), chunk(1));
        Fsck.Report r = run(c, "/");
        assertThat(r.exitCode()).as(out()).isEqualTo(Fsck.HEALTHY);
        assertThat(r.files).isEqualTo(4);
        assertThat(r.chunks).isEqualTo(4);
        assertThat(out()).contains("status: HEALTHY");
    }

    @Test void eachKindOfTroubleIsNamedAndTheWorstSetsTheExitStatus() {
        Cluster c = fiveServers();
        c.file("/d", "under", CHUNK, StorageClass.replicated(3), chunk(0, on("cs1", 0), on("cs2", 0), on("cs5", 0))); // cs5 down
        c.file("/d", "endangered", CHUNK, StorageClass.ec(2, 1), chunk(0, on("cs1", 0), on("cs2", 2)));
        c.file("/d", "stale", CHUNK, StorageClass.replicated(2), chunk(0, on("cs1", 0), on("cs2", 0), stale("cs3")));
        Fsck.Report r = run(c, "/");
        assertThat(r.exitCode()).as(out()).isEqualTo(Fsck.DEGRADED);
        assertThat(out()).contains("/d/under  chunk 0 (id 100 v3, replicated(3)): under goal: 2 of 3 copies on servers that are up: cs1, cs2, cs5 (down)")
                .contains("/d/endangered  chunk 0").contains("endangered: 2 of 3 parts")
                .contains("/d/stale  chunk 0").contains("1 outdated copy awaiting deletion")
                .contains("status: DEGRADED");
        assertThat(r.underGoal).isEqualTo(1);
        assertThat(r.endangered).isEqualTo(1);
        assertThat(r.withStale).isEqualTo(1);

        // one erasure-coded part too few on servers that are up, and a replica only on a server that is down: lost
        c.file("/x", "ec", 3 * CHUNK, StorageClass.ec(3, 2), chunk(0, on("cs1", 0), on("cs2", 1), on("cs3", 2), on("cs4", 3)),
                chunk(2, on("cs1", 0), on("cs2", 1), on("cs5", 2), on("cs5", 3)));
        c.file("/x", "gone", CHUNK, StorageClass.replicated(1), chunk(0, on("cs5", 0)));
        bytes.reset();
        r = run(c, "/");
        assertThat(r.exitCode()).isEqualTo(Fsck.LOST);
        assertThat(r.lost).isEqualTo(2);
        assertThat(out()).contains("/x/ec  chunk 2 (id 102 v3, ec(3,2)): LOST: 2 of 5 parts on servers that are up").contains("(3 needed to read)")
                .contains("/x/gone  chunk 0 (id 100 v3, replicated(1)): LOST: 0 of 1 copies").contains("status: LOST");
        assertThat(out()).contains("/x/ec  chunk 0 (id 100 v3, ec(3,2)): under goal: 4 of 5 parts");
    }

    @Test void aSubtreeOrOneFileCanBeChecked() {
        Cluster c = fiveServers();
        c.file("/a", "bad", CHUNK, StorageClass.replicated(1), chunk(0, on("cs5", 0)));
        c.file("/b", "good", CHUNK, StorageClass.replicated(1), chunk(0, on("cs1", 0)));
        assertThat(run(c, "/b").exitCode()).isEqualTo(Fsck.HEALTHY);
        assertThat(run(c, "/b/good").exitCode()).isEqualTo(Fsck.HEALTHY);
        assertThat(run(c, "/a/bad").exitCode()).isEqualTo(Fsck.LOST);
    }

    @Test void quarantinedFilesOnADiskMakeTheClusterDegraded() {
        Cluster c = new Cluster();
        c.server("cs1", true, 0);
        c.server("cs2", true, 2);
        c.file("/d", "f", CHUNK, StorageClass.replicated(2), chunk(0, on("cs1", 0), on("cs2", 0)));
        Fsck.Report r = run(c, "/");
        assertThat(r.exitCode()).isEqualTo(Fsck.DEGRADED);
        assertThat(r.quarantined).isEqualTo(2);
        assertThat(out()).contains("cs2/disk0: 2 chunk file(s) kept aside");
    }

    @Test void aFileRemovedDuringTheWalkIsSkipped() {
        Cluster c = fiveServers();
        c.file("/d", "f", CHUNK, StorageClass.replicated(1), chunk(0, on("cs1", 0)));
        Fsck.Report r = new Fsck(new Fsck.Source() {
            @Override public StatusReply status() { return c.status(); }
            @Override public FileAttr lookup(String path) { return c.lookup(path); }
            @Override public List<DirEntry> list(String path) {
                if (!path.equals("/d")) return c.list(path);
                return List.of(new DirEntry("f", c.lookup("/d/f")), new DirEntry("removed-meanwhile", attr(FileType.FILE, 1, StorageClass.DEFAULT)));
            }
            @Override public FileInfoReply fileInfo(String path) { return c.fileInfo(path); }
        }, new PrintStream(bytes, true, StandardCharsets.UTF_8), false).run("/");
        assertThat(r.exitCode()).isEqualTo(Fsck.HEALTHY);
        assertThat(r.files).isEqualTo(1);
    }
}
