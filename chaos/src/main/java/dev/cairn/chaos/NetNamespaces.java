package dev.cairn.chaos;

import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A network of its own for each node of a chaos run, so that partitions and packet loss are the kernel's, not a
 * simulation: every node runs in a network namespace the run creates ({@code czPID-NAME}), with one veth pair to a
 * bridge in a hub namespace ({@code czPID-hub}), and the run itself (its clients) reaches the bridge through one
 * more veth pair whose host end ({@code czPID}) holds the only address added outside the run's namespaces.
 * Addresses come from 198.18.0.0/15, the block RFC 2544 sets aside for test networks, one /24 a run, never one
 * the host already uses. Faults are nftables rules in the nodes' own namespaces (never the host's): a node cut off
 * drops what comes from, and what goes to, the other side; packet loss drops a share of a node's packets each way.
 * Root only; everything is deleted at {@link #close} (deleting the hub takes the host's veth end with it).
 */
public final class NetNamespaces implements AutoCloseable {
    static final long COMMAND_SECONDS = 30;
    static final String PREFIX = "cz";
    /** The run's side of the network, the bridge's first address. */
    static final int HOST_OCTET = 1;
    /** Node {@code i} (from 0) gets {@code .FIRST_NODE_OCTET + i}. */
    static final int FIRST_NODE_OCTET = 10;
    static final int MAX_NODES = 200;
    private static final Pattern RUN_NAMESPACE = Pattern.compile("^" + PREFIX + "(\\d+)-\\S+");

    private final String id;
    private final String subnet;
    private final Map<String, String> addresses = new LinkedHashMap<>();
    private final List<String> created = new ArrayList<>();

    private NetNamespaces(String id, String subnet) {
        this.id = id;
        this.subnet = subnet;
    }

    /**
     * Why this process cannot give nodes networks of their own, or null if it can: root, the tools, and the right to
     * make a namespace, a veth pair into it and a table in it (tried on a throwaway namespace: a container without
     * CAP_NET_ADMIN has root and the tools, and nothing else).
     */
    public static String unavailable() {
        if (!"root".equals(System.getProperty("user.name"))) return "network namespaces need root";
        for (String tool : List.of("ip", "nft", "nsenter")) {
            if (!onPath(tool)) return "'" + tool + "' is not installed (Debian packages iproute2, nftables, util-linux)";
        }
        String probe = PREFIX + ProcessHandle.current().pid() + "-probe";
        try {
            run("ip", "netns", "add", probe);
            try {
                run("ip", "link", "add", "czprobe", "netns", probe, "type", "veth", "peer", "name", "p", "netns", probe);
                nft(probe, "table inet cairn {\n  chain input { type filter hook input priority 0; policy accept; }\n}\n");
            } finally {
                run("ip", "netns", "del", probe);
            }
            return null;
        } catch (IOException | RuntimeException e) {
            return "this process may not make a network namespace with a veth pair and nftables rules (" + e.getMessage() + ")";
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return "interrupted while trying a network namespace";
        }
    }

    private static boolean onPath(String tool) {
        for (String d : System.getenv().getOrDefault("PATH", "/usr/sbin:/usr/bin:/sbin:/bin").split(":")) {
            if (Files.isExecutable(Path.of(d, tool))) return true;
        }
        return false;
    }

    /** Creates the hub, the run's link to it and one namespace per node, in {@code nodes}' order. */
    public static NetNamespaces create(List<String> nodes) throws IOException, InterruptedException {
        String why = unavailable();
        if (why != null) throw new IllegalStateException("a chaos run with network faults cannot start: " + why);
        if (nodes.size() > MAX_NODES) throw new IllegalArgumentException("at most " + MAX_NODES + " nodes in one run's network");
        removeLeftovers();
        long pid = ProcessHandle.current().pid();
        NetNamespaces n = new NetNamespaces(PREFIX + pid, freeSubnet(pid));
        try {
            n.build(nodes);
        } catch (IOException | InterruptedException | RuntimeException e) {
            n.close();
            throw e;
        }
        return n;
    }

    /** The run's network's name: every namespace it made starts with it and a dash. */
    public String id() { return id; }

    private String hub() { return id + "-hub"; }

    private String namespace(String node) { return id + "-" + node; }

    private void build(List<String> nodes) throws IOException, InterruptedException {
        run("ip", "netns", "add", hub());
        created.add(hub());
        run("ip", "-n", hub(), "link", "add", "br0", "type", "bridge");
        run("ip", "-n", hub(), "link", "set", "br0", "up");
        // the run's own end: an interface of the host's namespace, gone when the hub goes
        run("ip", "link", "add", id, "type", "veth", "peer", "name", "run", "netns", hub());
        run("ip", "addr", "add", subnet + HOST_OCTET + "/24", "dev", id);
        run("ip", "link", "set", id, "up");
        run("ip", "-n", hub(), "link", "set", "run", "master", "br0", "up");
        for (int i = 0; i < nodes.size(); i++) {
            String node = nodes.get(i), ns = namespace(node), hubEnd = "n" + i;
            run("ip", "netns", "add", ns);
            created.add(ns);
            run("ip", "-n", ns, "link", "set", "lo", "up");
            run("ip", "link", "add", hubEnd, "netns", hub(), "type", "veth", "peer", "name", "eth0", "netns", ns);
            run("ip", "-n", hub(), "link", "set", hubEnd, "master", "br0", "up");
            String address = subnet + (FIRST_NODE_OCTET + i);
            run("ip", "-n", ns, "addr", "add", address + "/24", "dev", "eth0");
            run("ip", "-n", ns, "link", "set", "eth0", "up");
            nft(ns, "table inet cairn {\n"
                    + "  chain input { type filter hook input priority 0; policy accept; }\n"
                    + "  chain output { type filter hook output priority 0; policy accept; }\n"
                    + "}\n");
            addresses.put(node, address);
        }
    }

    /** The node's address on the run's network. */
    public String address(String node) {
        String a = addresses.get(node);
        if (a == null) throw new IllegalArgumentException("no node " + node + " in this run's network");
        return a;
    }

    /** The address the run's own clients have on the network. */
    public String runAddress() { return subnet + HOST_OCTET; }

    /** What a node's command is prefixed with to run in its namespace (nsenter execs: the process is the node's). */
    public List<String> prefix(String node) {
        address(node);
        return List.of("nsenter", "--net=/run/netns/" + namespace(node), "--");
    }

    /**
     * Cuts {@code side} off from every other node and from the run's clients: both ways, or, {@code oneWay}, only what
     * comes to {@code side} (its packets still leave, and TCP, whose answers are lost, stalls both ways even so).
     */
    public void isolate(List<String> side, boolean oneWay) throws IOException, InterruptedException {
        List<String> rest = new ArrayList<>();
        for (String n : addresses.keySet()) if (!side.contains(n)) rest.add(n);
        cut(side, rest, true, oneWay);
    }

    /**
     * Cuts {@code side} off from the nodes {@code from} only (and from the run's clients if {@code run}): the rest of
     * the network still reaches both (a leader cut off from the other masters while chunkservers and clients
     * still reach it — the split brain that fencing by term is for).
     */
    public void cut(List<String> side, List<String> from, boolean run, boolean oneWay) throws IOException, InterruptedException {
        List<String> others = new ArrayList<>();
        if (run) others.add(runAddress());
        for (String n : from) {
            if (side.contains(n)) throw new IllegalArgumentException(n + " is on both sides of a partition");
            others.add(address(n));
        }
        if (others.isEmpty()) throw new IllegalArgumentException("a partition of " + side + " from nothing");
        String set = "{ " + String.join(", ", others) + " }";
        for (String node : side) {
            StringBuilder rules = new StringBuilder("add rule inet cairn input ip saddr " + set + " drop\n");
            if (!oneWay) rules.append("add rule inet cairn output ip daddr ").append(set).append(" drop\n");
            nft(namespace(node), rules.toString());
        }
    }

    /** Drops {@code percent} of the packets {@code node} receives and of those it sends, at random. */
    public void loss(String node, int percent) throws IOException, InterruptedException {
        if (percent <= 0 || percent >= 100) throw new IllegalArgumentException("packet loss of " + percent + "%");
        nft(namespace(node), "add rule inet cairn input numgen random mod 100 < " + percent + " drop\n"
                + "add rule inet cairn output numgen random mod 100 < " + percent + " drop\n");
    }

    /** Takes every rule off {@code node}'s network: it reaches and is reached by everyone again. */
    public void heal(String node) throws IOException, InterruptedException {
        nft(namespace(node), "flush chain inet cairn input\nflush chain inet cairn output\n");
    }

    /** The rules on {@code node}'s network now, as nftables lists them (for a report or a test). */
    public String rules(String node) throws IOException, InterruptedException {
        return run("ip", "netns", "exec", namespace(node), "nft", "list", "table", "inet", "cairn");
    }

    public void healAll() throws IOException, InterruptedException {
        for (String node : addresses.keySet()) heal(node);
    }

    /** Deletes every namespace the run made (a node process still running in one keeps it until it exits). */
    @Override public void close() {
        for (int i = created.size() - 1; i >= 0; i--) {
            try {
                run("ip", "netns", "del", created.get(i));
            } catch (IOException | InterruptedException | RuntimeException e) {
                System.err.println("chaos: could not delete the network namespace " + created.get(i) + ": " + e.getMessage());
            }
        }
        created.clear();
    }

    /** Namespaces of runs whose process is gone (killed before it could clean up): deleted, with their links. */
    private static void removeLeftovers() throws IOException, InterruptedException {
        for (String line : run("ip", "netns", "list").split("\n")) {
            Matcher m = RUN_NAMESPACE.matcher(line.strip());
            if (!m.find()) continue;
            long owner = Long.parseLong(m.group(1));
            if (ProcessHandle.of(owner).map(ProcessHandle::isAlive).orElse(false)) continue;
            String name = line.strip().split("\\s+")[0];
            run("ip", "netns", "del", name);
        }
    }

    /** A /24 of 198.18.0.0/15 no interface of the host has an address in, starting from one the pid picks. */
    private static String freeSubnet(long pid) throws IOException, InterruptedException {
        String used = run("ip", "-o", "-4", "addr", "show");
        for (int k = 0; k < 512; k++) {
            int n = (int) ((pid + k) % 512);
            String s = "198." + (18 + n / 256) + "." + (n % 256) + ".";
            if (!used.contains(" " + s)) return s;
        }
        throw new IllegalStateException("no /24 of 198.18.0.0/15 is free on this host");
    }

    private static void nft(String namespace, String script) throws IOException, InterruptedException {
        Process p = new ProcessBuilder("ip", "netns", "exec", namespace, "nft", "-f", "-").redirectErrorStream(true).start();
        try (OutputStream in = p.getOutputStream()) {
            in.write(script.getBytes(StandardCharsets.UTF_8));
        }
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        if (!p.waitFor(COMMAND_SECONDS, TimeUnit.SECONDS) || p.exitValue() != 0) {
            throw new IOException("nft in " + namespace + " failed: " + out.strip() + " (rules: " + script.strip() + ")");
        }
    }

    private static String run(String... cmd) throws IOException, InterruptedException {
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        if (!p.waitFor(COMMAND_SECONDS, TimeUnit.SECONDS) || p.exitValue() != 0) {
            throw new IOException(String.join(" ", cmd) + " failed: " + out.strip());
        }
        return out;
    }
}
