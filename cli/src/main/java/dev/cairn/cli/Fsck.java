package dev.cairn.cli;

import dev.cairn.core.proto.CairnException;
import dev.cairn.core.proto.Status;
import dev.cairn.core.proto.MasterProtocol.ChunkInfo;
import dev.cairn.core.proto.MasterProtocol.CopyInfo;
import dev.cairn.core.proto.MasterProtocol.FileInfoReply;
import dev.cairn.core.proto.MasterProtocol.ServerStatus;
import dev.cairn.core.proto.MasterProtocol.StatusReply;
import dev.cairn.core.proto.StorageClass;
import dev.cairn.core.proto.Types;
import dev.cairn.core.proto.Types.DirEntry;
import dev.cairn.core.proto.Types.FileAttr;
import dev.cairn.core.proto.Types.FileType;
import java.io.PrintStream;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;

/**
 * {@code cairn fsck}: walks the namespace from a path and judges every chunk of every file by the copies the
 * master knows on servers that are up: lost (no readable copy, or fewer than k distinct parts), endangered (one
 * more failure loses it), under goal, or with stale copies awaiting deletion; and lists the chunk files the
 * chunkservers kept aside (quarantined) at start-up. It reads only (the master's namespace, registry and status),
 * so it may run at any time; a cluster changing under it gives a picture of moments a little apart.
 *
 * <p>Exit status, for scripts: 0 healthy; 3 degraded (nothing lost, but something under goal, endangered, with
 * stale copies, or quarantined files to look at); 4 lost (a chunk of some file cannot be read now); 1 the check
 * itself failed (the master unreachable), 2 bad usage.
 */
final class Fsck {
    static final int HEALTHY = 0, DEGRADED = 3, LOST = 4;
    /** The most chunks the master's file-info answer lists for one file; past it the rest of the file is not judged. */
    static final int FILE_INFO_CHUNKS = 4096;

    /** Where fsck reads the cluster from (the master, or a test's stand-in). */
    interface Source {
        StatusReply status();

        FileAttr lookup(String path);

        List<DirEntry> list(String path);

        FileInfoReply fileInfo(String path);
    }

    /** What the walk found. */
    static final class Report {
        long files, dirs, chunks, lost, endangered, underGoal, withStale, quarantined, partlyChecked;
        final List<String> problems = new ArrayList<>();

        int exitCode() {
            if (lost > 0) return LOST;
            return endangered + underGoal + withStale + quarantined + partlyChecked > 0 ? DEGRADED : HEALTHY;
        }
    }

    private final Source source;
    private final PrintStream out;
    private final boolean verbose;
    private Set<String> up;

    Fsck(Source source, PrintStream out, boolean verbose) {
        this.source = source;
        this.out = out;
        this.verbose = verbose;
    }

    /** Walks {@code root} and prints what it finds; returns the report (its {@link Report#exitCode}). */
    Report run(String root) {
        StatusReply status = source.status();
        up = new HashSet<>();
        for (ServerStatus s : status.servers()) if (s.alive()) up.add(s.id());
        Report r = new Report();
        FileAttr top = source.lookup(root);
        if (top.type() == FileType.DIR) walk(root, r);
        else file(root, r);
        for (ServerStatus s : status.servers()) {
            for (Types.DiskReport d : s.disks()) {
                if (d.quarantined() == 0) continue;
                r.quarantined += d.quarantined();
                r.problems.add(String.format(Locale.ROOT, "%s/%s: %d chunk file(s) kept aside (quarantine-*) at start-up; see docs/operations.md",
                        s.id(), d.name(), d.quarantined()));
                out.println(r.problems.get(r.problems.size() - 1));
            }
        }
        if (status.grace()) out.println("note: the master is in its start-up grace (not every chunkserver has reported): copies may show missing that are not");
        out.printf(Locale.ROOT, "checked %d files, %d directories, %d chunks%n", r.files, r.dirs, r.chunks);
        out.printf(Locale.ROOT, "lost %d   endangered %d   under goal %d   with stale copies %d   quarantined files %d%s%n", r.lost, r.endangered,
                r.underGoal, r.withStale, r.quarantined, r.partlyChecked > 0 ? "   files checked in part " + r.partlyChecked : "");
        out.println("status: " + switch (r.exitCode()) {
            case HEALTHY -> "HEALTHY";
            case DEGRADED -> "DEGRADED (nothing lost; the planner repairs what is under goal once servers allow)";
            default -> "LOST (some data cannot be read now: bring its servers back, or see docs/operations.md)";
        });
        return r;
    }

    private void walk(String dir, Report r) {
        r.dirs++;
        List<DirEntry> entries;
        try {
            entries = source.list(dir);
        } catch (CairnException e) {
            if (e.status() != Status.NOT_FOUND) throw e;
            return; // removed while the check ran
        }
        for (DirEntry e : entries) {
            String path = dir.endsWith("/") ? dir + e.name() : dir + "/" + e.name();
            if (e.attr().type() == FileType.DIR) walk(path, r);
            else if (e.attr().type() == FileType.FILE) file(path, r);
        }
    }

    private void file(String path, Report r) {
        FileInfoReply info;
        try {
            info = source.fileInfo(path);
        } catch (CairnException e) {
            if (e.status() != Status.NOT_FOUND) throw e;
            return; // removed while the check ran
        }
        r.files++;
        FileAttr a = info.attr();
        StorageClass cls = a.storageClass();
        boolean fine = true;
        for (ChunkInfo ch : info.chunks()) {
            // a chunk past the file's end holds nothing a reader is served (allocated by a write never committed)
            if ((long) ch.index() * a.chunkSize() >= a.size()) continue;
            r.chunks++;
            String problem = judge(cls, ch);
            if (problem == null) continue;
            fine = false;
            String line = String.format(Locale.ROOT, "%s  chunk %d (id %d v%d, %s): %s", path, ch.index(), ch.chunkId(), ch.version(), cls, problem);
            r.problems.add(line);
            out.println(line);
            if (problem.startsWith("LOST")) r.lost++;
            else if (problem.startsWith("endangered")) r.endangered++;
            else if (problem.startsWith("under goal")) r.underGoal++;
            else r.withStale++;
        }
        if (a.chunkSize() > 0 && (a.size() + a.chunkSize() - 1) / a.chunkSize() > FILE_INFO_CHUNKS) {
            r.partlyChecked++;
            out.printf(Locale.ROOT, "%s: only its first %d chunks were checked (the master lists no more per file)%n", path, FILE_INFO_CHUNKS);
        }
        if (fine && verbose) out.printf(Locale.ROOT, "%s: ok (%d bytes, %s)%n", path, a.size(), cls);
    }

    /** What is wrong with one chunk (the worst thing), or null if nothing is. */
    String judge(StorageClass cls, ChunkInfo ch) {
        Set<String> servers = new HashSet<>();
        Set<Integer> parts = new HashSet<>();
        List<String> where = new ArrayList<>();
        int stale = 0;
        for (CopyInfo c : ch.copies()) {
            boolean live = up.contains(c.serverId());
            if (!c.current()) {
                stale++;
                continue;
            }
            where.add(c.serverId() + (cls.isEc() ? " part " + c.part() : "") + (live ? "" : " (down)"));
            if (!live) continue;
            servers.add(c.serverId());
            parts.add(c.part());
        }
        int have = cls.isEc() ? parts.size() : servers.size();
        int need = cls.isEc() ? cls.k() : 1;
        String copies = have + " of " + cls.parts() + (cls.isEc() ? " parts" : " copies") + " on servers that are up"
                + (where.isEmpty() ? "" : ": " + String.join(", ", where));
        if (have < need) return "LOST: " + copies + (cls.isEc() ? " (" + cls.k() + " needed to read)" : "");
        if (cls.tolerance() > 0 && have == need) return "endangered: " + copies;
        if (have < cls.parts()) return "under goal: " + copies;
        if (stale > 0) return "stale copies: " + stale + " outdated cop" + (stale == 1 ? "y" : "ies") + " awaiting deletion";
        return null;
    }
}
