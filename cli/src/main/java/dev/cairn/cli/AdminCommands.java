package dev.cairn.cli;

import dev.cairn.chaos.RealClient;
import dev.cairn.core.proto.MasterProtocol;
import dev.cairn.core.proto.MasterProtocol.ChunkInfo;
import dev.cairn.core.proto.MasterProtocol.CopyInfo;
import dev.cairn.core.proto.MasterProtocol.FileInfoReply;
import dev.cairn.core.proto.MasterProtocol.ServerStatus;
import dev.cairn.core.proto.Types;
import dev.cairn.core.proto.MasterProtocol.StatusReply;
import dev.cairn.core.proto.StorageClass;
import dev.cairn.core.proto.Types.FileAttr;
import java.io.PrintStream;
import java.util.Locale;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/** Operator commands: cluster status, where a file's chunks are, draining servers, storage classes. */
final class AdminCommands {
    /** Width of the redundancy progress bar. */
    static final int BAR = 40;

    private AdminCommands() {}

    @Command(name = "status", description = "Cluster health: chunks under goal, over goal, endangered, lost; copies moving; servers.")
    static final class Status extends ClientCommands.Base {
        @Option(names = "--watch", description = "Refresh every second until interrupted.") boolean watch;

        @Override int run(RealClient c) throws Exception {
            long maxUnder = 0;
            // redraw in place on a terminal only: into a pipe or a file each refresh follows the last, no escape codes
            boolean terminal = System.console() != null;
            do {
                StatusReply s = c.await(x -> x.status());
                maxUnder = Math.max(maxUnder, s.underGoal());
                if (watch && terminal) System.out.print("\033[H\033[2J");
                else if (watch) System.out.println("--- " + java.time.LocalTime.now().withNano(0));
                printMasters(c, System.out);
                print(s, maxUnder, System.out);
                if (watch) Thread.sleep(1000);
            } while (watch);
            return 0;
        }
    }

    /**
     * One line per master of a group: its role, term and how far its store has applied the metadata log. The
     * masters are the group's members as the masters that answer report them (a master added or removed since
     * the client's list was written included), and any listed master that is not one (removed, or never added).
     * Nothing for a single master.
     */
    static void printMasters(RealClient c, PrintStream out) {
        java.util.Map<dev.cairn.core.env.Address, MasterProtocol.ReplicaStatusReply> seen = new java.util.LinkedHashMap<>();
        java.util.Set<dev.cairn.core.env.Address> members = new java.util.LinkedHashSet<>();
        java.util.Deque<dev.cairn.core.env.Address> ask = new java.util.ArrayDeque<>(c.masters());
        java.util.Set<dev.cairn.core.env.Address> asked = new java.util.HashSet<>();
        while (!ask.isEmpty() && asked.size() < dev.cairn.core.env.Address.MAX_LIST) {
            dev.cairn.core.env.Address a = ask.poll();
            if (!asked.add(a)) continue;
            try {
                var r = c.await(x -> x.replicaStatus(a));
                seen.put(a, r);
                for (String m : r.members()) {
                    dev.cairn.core.env.Address x = dev.cairn.core.env.Address.parse(m);
                    members.add(x);
                    if (!asked.contains(x)) ask.add(x);
                }
            } catch (RuntimeException e) {
                seen.put(a, null);
            }
        }
        if (members.size() <= 1 && seen.size() <= 1) return; // a single master
        out.printf(Locale.ROOT, "%-22s %-9s %6s %12s%n", "master", "role", "term", "applied");
        java.util.Set<dev.cairn.core.env.Address> all = new java.util.LinkedHashSet<>(members);
        all.addAll(seen.keySet());
        for (dev.cairn.core.env.Address a : all) {
            var r = seen.get(a);
            String note = members.isEmpty() || members.contains(a) ? "" : "   (not a member of the group)";
            if (r == null) {
                out.printf(Locale.ROOT, "%-22s %-9s %6s %12s%s%n", a, "down", "-", "-", note);
                continue;
            }
            String role = r.leads() ? (r.serving() ? "leader" : "starting") : "follower";
            out.printf(Locale.ROOT, "%-22s %-9s %6d %12d%s%n", a, role, r.term(), r.appliedIndex(), note);
        }
    }

    @Command(name = "masters", description = "The master group: list its members, add a master, remove one.",
            subcommands = {Masters.List.class, Masters.Add.class, Masters.Remove.class})
    static final class Masters implements java.util.concurrent.Callable<Integer> {
        @Override public Integer call() {
            System.err.println("cairn masters: say list, add HOST:PORT or remove HOST:PORT");
            return 2;
        }

        @Command(name = "list", description = "Every master of the group: role, term, applied log index.")
        static final class List extends ClientCommands.Base {
            @Override int run(RealClient c) {
                printMasters(c, System.out);
                return 0;
            }
        }

        /** Adds or removes the master named by the one parameter. */
        abstract static class Change extends ClientCommands.Base {
            @Parameters(index = "0", description = "The master's HOST:PORT (its --listen).") String address;

            abstract boolean add();

            @Override int run(RealClient c) { return change(c, address, add()); }

            @Override long callTimeoutSeconds() { return MEMBERSHIP_SECONDS; }
        }

        @Command(name = "add", description = "Add a master to the group. Start it first with the group's members and itself as --peers "
                + "and an empty --data; this returns once it has caught up with the log and counts in the group.")
        static final class Add extends Change {
            @Override boolean add() { return true; }
        }

        @Command(name = "remove", description = "Remove a master from the group (the leader included: another is elected). "
                + "Stop it afterwards; its data directory is no longer needed.")
        static final class Remove extends Change {
            @Override boolean add() { return false; }
        }

        /** A change waits for an added master to catch up with the whole log (CairnClient gives it 10 minutes). */
        static final long MEMBERSHIP_SECONDS = 660;

        static int change(RealClient c, String address, boolean add) {
            dev.cairn.core.env.Address a = dev.cairn.core.env.Address.parse(address);
            java.util.List<String> members = c.await(x -> x.changeMasters(a, add));
            System.out.println("master group: " + String.join(", ", members));
            if (!add) System.out.println(a + " is no longer a member: stop it; remove it from every --master and --peers list");
            else System.out.println(a + " is a member: add it to the --master lists of clients, chunkservers and gateways");
            return 0;
        }
    }

    static void print(StatusReply s, long maxUnder, PrintStream out) {
        out.printf(Locale.ROOT, "chunks %d   under goal %d   over goal %d   endangered %d   lost %d   stale copies %d   reported corrupt %d%n",
                s.chunks(), s.underGoal(), s.overGoal(), s.endangered(), s.lost(), s.staleCopies(), s.copiesMarkedBad());
        out.printf(Locale.ROOT, "planner: %s; %d moving; %d copies made, %d deleted since the master started%n",
                s.grace() ? "waiting for known chunkservers to report (start-up grace)" : "running", s.moving(), s.copiesMade(), s.copiesDeleted());
        if (maxUnder > 0) {
            double done = 1.0 - (double) s.underGoal() / maxUnder;
            int filled = (int) Math.round(done * BAR);
            out.printf(Locale.ROOT, "repair [%s%s] %3.0f%%%n", "#".repeat(filled), ".".repeat(BAR - filled), 100 * done);
        }
        out.printf(Locale.ROOT, "%-12s %-22s %-10s %-8s %-6s %-9s %7s %10s %8s %6s%n", "server", "address", "host", "rack", "disk", "state", "used", "capacity",
                "chunks", "stale");
        for (ServerStatus v : s.servers()) {
            String state = !v.alive() ? "down" : v.draining() ? "draining" : "up";
            // a down server's figures are what it last reported; its disk rows are not shown as if current
            boolean down = !v.alive();
            double used = v.capacityBytes() > 0 ? 100.0 * v.usedBytes() / v.capacityBytes() : 0;
            out.printf(Locale.ROOT, "%-12s %-22s %-10s %-8s %-6s %-9s %6.1f%% %10s %8d %6d%n", v.id(), v.address(), v.topology().host(), v.topology().rack(),
                    v.topology().disk().isEmpty() ? "-" : v.topology().disk(), state, used, human(v.capacityBytes()), v.chunks(), v.staleChunks());
            if (down) {
                out.println("  (down: its copies count toward no goal until it reports again; its disks are not shown as if current)");
                continue;
            }
            for (Types.DiskReport d : v.disks()) {
                // one line per disk: a failed, full or slow disk is what an operator acts on
                out.printf(Locale.ROOT, "  %-10s %-6s latency %8.1f ms %8d chunks %10s%s%n", d.name(), d.state().name().toLowerCase(Locale.ROOT),
                        d.latencyMicros() / 1000.0, d.chunks(), human(d.usedBytes()),
                        d.quarantined() > 0 ? "   " + d.quarantined() + " file(s) kept aside (see cairn fsck)" : "");
            }
        }
    }

    static String human(long bytes) {
        if (bytes < 1024) return bytes + " B";
        int unit = (63 - Long.numberOfLeadingZeros(bytes)) / 10;
        return String.format(Locale.ROOT, "%.1f %sB", bytes / (double) (1L << (10 * unit)), " KMGTPE".charAt(unit));
    }

    @Command(name = "fileinfo", description = "Every chunk of a file: version, and where its copies (or parts) are.")
    static final class FileInfo extends ClientCommands.Base {
        @Parameters(index = "0", description = "Cluster path.") String path;

        @Override int run(RealClient c) {
            FileInfoReply r = c.await(x -> x.fileInfo(path));
            FileAttr a = r.attr();
            System.out.printf(Locale.ROOT, "%s: %s, %d bytes, chunk size %d, class %s%n", path, a.type().name().toLowerCase(Locale.ROOT),
                    a.size(), a.chunkSize(), a.storageClass());
            for (ChunkInfo ch : r.chunks()) {
                StringBuilder copies = new StringBuilder();
                int current = 0;
                for (CopyInfo copy : ch.copies()) {
                    if (copies.length() > 0) copies.append(", ");
                    copies.append(copy.serverId());
                    if (a.storageClass().isEc() && copy.current()) copies.append(" part ").append(copy.part());
                    if (!copy.current()) copies.append(" (stale v").append(copy.version()).append(')');
                    else if (copy.version() != ch.version()) copies.append(" (v").append(copy.version()).append(", nothing committed since)");
                    if (copy.current()) current++;
                }
                int goal = a.storageClass().parts();
                String state = current == 0 ? "NO COPY" : current < goal ? "under goal" : current > goal ? "over goal" : "ok";
                System.out.printf(Locale.ROOT, "chunk %d  id %d  v%d  %d/%d %s: %s%n", ch.index(), ch.chunkId(), ch.version(), current, goal, state, copies);
            }
            return 0;
        }
    }

    @Command(name = "fsck", description = {"Check every file under a path: chunks lost, endangered, under goal or with stale copies, and chunk files kept aside.",
            "Exit status: 0 healthy, 3 degraded (nothing lost), 4 lost (some data cannot be read now), 1 the check failed."})
    static final class FsckCommand extends ClientCommands.Base {
        @Parameters(index = "0", arity = "0..1", defaultValue = "/", description = "Cluster path to start from (default: /).") String path;
        @Option(names = "--verbose", description = "Print every file checked, not only the ones with problems.") boolean verbose;

        @Override int run(RealClient c) {
            Fsck.Source source = new Fsck.Source() {
                @Override public StatusReply status() { return c.await(x -> x.status()); }

                @Override public FileAttr lookup(String p) { return c.lookup(p); }

                @Override public java.util.List<Types.DirEntry> list(String p) { return c.list(p); }

                @Override public FileInfoReply fileInfo(String p) { return c.await(x -> x.fileInfo(p)); }
            };
            return new Fsck(source, System.out, verbose).run(path).exitCode();
        }
    }

    @Command(name = "drain", description = "Move every chunk off a chunkserver (before removing it); --undo puts it back in service.")
    static final class Drain extends ClientCommands.Base {
        @Parameters(index = "0", description = "Chunkserver id.") String server;
        @Option(names = "--undo", description = "Back in service.") boolean undo;

        @Override int run(RealClient c) {
            c.await(x -> x.drain(server, !undo));
            System.out.println(server + (undo ? ": back in service" : ": draining (watch progress with: cairn status --watch)"));
            return 0;
        }
    }

    @Command(name = "setclass", description = "Set the storage class of a file (its chunks are moved to it) or of a directory (inherited by new files).")
    static final class SetClass extends ClientCommands.Base {
        @Parameters(index = "0", description = "Cluster path.") String path;
        @Parameters(index = "1", description = "replicated(N) or ec(K,M), options ,domain=host|rack|server ,disk=LABEL ,full=refuse|overflow ,archive=CLASS,after=T") String cls;

        @Override int run(RealClient c) {
            StorageClass parsed = StorageClass.parse(cls);
            FileAttr a = c.await(x -> x.setClass(path, parsed));
            System.out.println(path + ": " + a.storageClass());
            return 0;
        }
    }
}
