package dev.cairn.jmh;

import dev.cairn.chaos.RealClient;
import dev.cairn.client.CairnClient;
import dev.cairn.core.async.Promise;
import dev.cairn.core.env.Address;
import dev.cairn.core.proto.StorageClass;
import dev.cairn.master.ratis.RatisLog;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.function.Function;
import java.util.function.IntFunction;

/**
 * {@code ./cairn bench meta [FILES] [--inflight N] [--masters 1|3|both] [--json]}: metadata at scale through the
 * native client. Starts the master (or a group of three) as {@code ./cairn up} does, as separate processes, and
 * with {@code N} requests in flight creates FILES empty files in directories of 10,000, lists every directory,
 * then looks every file up, then removes every file. Reports operations per second per phase, and the leader's heap after a full
 * collection before and after the creates (growth per million files), and each master's peak resident set.
 */
public final class MetaBench {
    static final int FILES_PER_DIR = 10_000;
    /** Print the top of the leader's heap histogram after the creates (where per-file memory goes). */
    static boolean histogram;

    public static void main(String[] args) throws Exception {
        int files = 1_000_000, inflight = 64;
        String masters = "both";
        boolean json = false;
        List<String> rest = new ArrayList<>();
        for (int i = 0; i < args.length; i++) {
            switch (args[i]) {
                case "--inflight" -> inflight = Integer.parseInt(args[++i]);
                case "--masters" -> masters = args[++i];
                case "--json" -> json = true;
                case "--histogram" -> histogram = true;
                default -> rest.add(args[i]);
            }
        }
        if (!rest.isEmpty()) files = Integer.parseInt(rest.get(0));
        String jar = System.getProperty("cairn.jar");
        if (jar == null) throw new IllegalStateException("-Dcairn.jar= is required (./cairn bench meta sets it)");
        List<Integer> sizes = switch (masters) {
            case "1" -> List.of(1);
            case "3" -> List.of(3);
            case "both" -> List.of(1, 3);
            default -> throw new IllegalArgumentException("--masters takes 1, 3 or both");
        };
        System.out.printf(Locale.ROOT, "metadata bench: %,d files in directories of %,d, %d requests in flight%n", files, FILES_PER_DIR, inflight);
        Map<String, Object> out = new LinkedHashMap<>();
        for (int n : sizes) {
            Map<String, Object> r = run(jar, n, files, inflight);
            r.forEach((k, v) -> out.put((n == 1 ? "one_" : "group_") + k, v));
        }
        if (json) {
            StringBuilder sb = new StringBuilder("{");
            out.forEach((k, v) -> sb.append(sb.length() == 1 ? "" : ",").append('"').append(k).append("\":").append(v));
            System.out.println(sb.append('}'));
        }
    }

    static Map<String, Object> run(String jar, int masterCount, int files, int inflight) throws Exception {
        Path root = Files.createTempDirectory("cairn-bench-meta");
        Map<String, Object> r = new LinkedHashMap<>();
        try (NfsBench.Processes p = new NfsBench.Processes(root, jar)) {
            List<Address> group = masterCount == 1 ? List.of(new Address("127.0.0.1", NfsBench.freePort())) : RatisLog.freeLoopbackGroup(3);
            String peers = String.join(",", group.stream().map(Address::toString).toList());
            for (int i = 0; i < group.size(); i++) {
                List<String> a = new ArrayList<>(List.of("master", "--listen", group.get(i).toString(), "--data", root.resolve("m" + i).toString()));
                if (masterCount > 1) a.addAll(List.of("--peers", peers));
                p.start("master" + i, a.toArray(String[]::new));
            }
            try (RealClient client = p.client(group, 86_400)) { // a phase is one call: hours at scale
                long t0 = System.nanoTime();
                while (true) {
                    try {
                        client.mkdir("/bench");
                        break;
                    } catch (RuntimeException e) {
                        if (System.nanoTime() - t0 > 60_000_000_000L) throw e;
                        Thread.sleep(200);
                    }
                }
                String leader = leaderName(client, group);
                long heapBefore = heapAfterGcKib(p.pid(leader));
                int dirs = (files + FILES_PER_DIR - 1) / FILES_PER_DIR;
                for (int d = 0; d < dirs; d++) client.mkdir("/bench/d" + d);
                String label = masterCount == 1 ? "one master" : "group of 3";

                double create = timed(client, files, inflight, i -> c -> c.create(path(i), 0, StorageClass.DEFAULT).map(a -> null));
                leader = leaderName(client, group);
                long heapAfter = heapAfterGcKib(p.pid(leader));
                if (histogram) System.out.println(jcmd(p.pid(leader), "GC.class_histogram").lines().limit(25).reduce("", (a, b) -> a + b + "\n"));
                long t = System.nanoTime();
                long listed = 0;
                for (int d = 0; d < dirs; d++) {
                    String dir = "/bench/d" + d;
                    listed += client.await(c -> c.list(dir)).size();
                }
                double listSeconds = (System.nanoTime() - t) / 1e9;
                if (listed != files) throw new IllegalStateException("listed " + listed + " files of " + files);
                // a lookup of every file: answered from the leader's state, after it confirms it leads (in a group)
                double stat = timed(client, files, inflight, i -> c -> c.lookup(path(i)).map(a -> null));
                double remove = timed(client, files, inflight, i -> c -> c.remove(path(i)));
                Map<String, Long> rss = p.peakRssMib();
                long rssMax = rss.values().stream().mapToLong(Long::longValue).max().orElse(0);
                double growthPerMillion = (heapAfter - heapBefore) / 1024.0 * 1_000_000.0 / files;
                System.out.printf(Locale.ROOT, "%-11s create %,9.0f files/s   list %,10.0f entries/s (%.2f s)   lookup %,9.0f files/s   remove %,9.0f files/s%n",
                        label, files / create, files / listSeconds, listSeconds, files / stat, files / remove);
                System.out.printf(Locale.ROOT, "%-11s leader heap after a full GC: %,.0f MiB before, %,.0f MiB after the creates (%+.0f MiB per million files); peak RSS %s MiB%n",
                        label, heapBefore / 1024.0, heapAfter / 1024.0, growthPerMillion, rss);
                if (masterCount > 1) {
                    // what the snapshots cost the group (RatisLog logs each one)
                    long snaps = 0, slowest = 0, elections = 0;
                    for (int i = 0; i < group.size(); i++) {
                        Path log = root.resolve("logs").resolve("master" + i + ".log");
                        if (!Files.exists(log)) continue;
                        for (String line : Files.readAllLines(log)) {
                            if (line.contains("elected leader for term")) elections++;
                            var m = java.util.regex.Pattern.compile("snapshot of the metadata store at log entry \\d+: \\d+ MiB written in (\\d+) ms").matcher(line);
                            if (m.find()) {
                                snaps++;
                                slowest = Math.max(slowest, Long.parseLong(m.group(1)));
                            }
                        }
                    }
                    System.out.printf(Locale.ROOT, "%-11s snapshots taken by the three masters: %d, the slowest written in %d ms; leader elections %d"
                            + " (1 without a spurious one: no master is killed here)%n", label, snaps, slowest, elections);
                    r.put("elections", elections);
                    r.put("snapshots", snaps);
                    r.put("slowest_snapshot_ms", slowest);
                }
                r.put("creates_s", Math.round(files / create));
                r.put("list_s", String.format(Locale.ROOT, "%.2f", listSeconds));
                r.put("lookups_s", Math.round(files / stat));
                r.put("removes_s", Math.round(files / remove));
                r.put("heap_growth_mib_per_million", Math.round(growthPerMillion));
                r.put("peak_rss_mib", rssMax);
            }
        } finally {
            deleteTree(root);
        }
        return r;
    }

    static String path(int i) { return "/bench/d" + i / FILES_PER_DIR + "/f" + i; }

    /** Runs {@code n} operations with {@code inflight} outstanding on the client's own loop; returns the seconds taken. */
    static double timed(RealClient client, int n, int inflight, IntFunction<Function<CairnClient, Promise<Void>>> op) {
        long t = System.nanoTime();
        client.await(c -> {
            Promise<Void> all = new Promise<>();
            int[] next = {0}, done = {0};
            Runnable[] issue = new Runnable[1];
            issue[0] = () -> {
                while (next[0] < n && next[0] - done[0] < inflight) {
                    int i = next[0]++;
                    op.apply(i).apply(c).onComplete((v, e) -> {
                        if (e != null) {
                            all.fail(new IllegalStateException("operation " + i + " (" + path(i) + ") failed: " + e, e));
                            return;
                        }
                        if (++done[0] == n) all.complete(null);
                        else issue[0].run();
                    });
                }
            };
            issue[0].run();
            return all;
        });
        return (System.nanoTime() - t) / 1e9;
    }

    /** The process name of the master that leads now (asked of each). */
    static String leaderName(RealClient client, List<Address> group) {
        for (int i = 0; i < group.size(); i++) {
            Address a = group.get(i);
            try {
                var s = client.await(c -> c.replicaStatus(a));
                if (group.size() == 1 || s.serving()) return "master" + i;
            } catch (RuntimeException e) {
                // down or not answering: not the leader
            }
        }
        return "master0";
    }

    static String jcmd(long pid, String command) throws IOException, InterruptedException {
        String jcmd = Path.of(System.getProperty("java.home"), "bin", "jcmd").toString();
        Process pr = new ProcessBuilder(jcmd, String.valueOf(pid), command).redirectErrorStream(true).start();
        String text = new String(pr.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        pr.waitFor();
        return text;
    }

    /** The heap in use after a full collection (jcmd GC.run, then GC.heap_info), KiB. */
    static long heapAfterGcKib(long pid) throws IOException, InterruptedException {
        jcmd(pid, "GC.run");
        String text = jcmd(pid, "GC.heap_info");
        long used = 0;
        var m = java.util.regex.Pattern.compile("(?:generation|space)\\s+total \\d+K, used (\\d+)K").matcher(text);
        // the serial collector's young and tenured generations (the metaspace line is not counted)
        while (m.find()) used += Long.parseLong(m.group(1));
        return used;
    }

    static void deleteTree(Path p) throws IOException {
        if (!Files.exists(p)) return;
        try (var s = Files.walk(p)) {
            for (Path f : s.sorted(java.util.Comparator.reverseOrder()).toList()) Files.deleteIfExists(f);
        }
    }
}
