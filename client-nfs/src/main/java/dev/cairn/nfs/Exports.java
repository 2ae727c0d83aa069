package dev.cairn.nfs;

import dev.cairn.nfs.rpc.Credentials;
import java.util.ArrayList;
import java.util.List;

/**
 * Who may use the export and how (the gateway exports the cluster's root, {@code /}): rules like
 * exports(5)'s, tried in order, the first whose address range holds the client's address applies.
 *
 * <pre>
 *   RULE[; RULE...]     RULE = ADDRESS[/PREFIX] [rw|ro] [root_squash|no_root_squash] [anonuid=N] [anongid=N]
 *   127.0.0.1/32 rw no_root_squash; 10.0.0.0/8 ro; * ro root_squash anonuid=65534
 * </pre>
 *
 * IPv4 ranges, or {@code *} for any client. Defaults per rule: rw, root_squash, anonuid and anongid
 * 65534 (nobody). A client no rule matches may set up a session but gets NFS4ERR_ACCESS for any file
 * handle (PUTROOTFH, PUTFH); on a read-only rule every change is NFS4ERR_ROFS; with root squash, uid 0
 * is the anonymous uid and gid.
 */
public final class Exports {
    /** What {@code ./cairn up} and {@code cairn nfs} export unless told otherwise: this machine only, root as root. */
    public static final String DEFAULT = "127.0.0.1/32 rw no_root_squash";
    public static final int MAX_RULES = 256;

    /** One rule: the range {@code network/prefix} (prefix 0 with {@code any}), and what the clients in it may do. */
    public record Rule(int network, int prefix, boolean any, boolean readOnly, boolean rootSquash, int anonUid, int anonGid) {
        boolean matches(int address) {
            if (any) return true;
            int mask = prefix == 0 ? 0 : -1 << (32 - prefix);
            return (address & mask) == (network & mask);
        }

        /** The caller's credentials as this rule lets them act: root squashed to the anonymous ids. */
        public Credentials squash(Credentials c) {
            if (!rootSquash || c.uid() != 0) return c;
            return new Credentials.Sys(0, "", anonUid, anonGid, new int[0]);
        }
    }

    private final List<Rule> rules;

    private Exports(List<Rule> rules) { this.rules = List.copyOf(rules); }

    public List<Rule> rules() { return rules; }

    /** The rule for a client at {@code peerAddress} (dotted IPv4), or null: not exported to it. */
    public Rule match(String peerAddress) {
        Integer a = parseIpv4(peerAddress);
        for (Rule r : rules) if (r.any() || (a != null && r.matches(a))) return r;
        return null;
    }

    /** Parses a rule list; a mistake is an IllegalArgumentException saying which rule and why. */
    public static Exports parse(String spec) {
        List<Rule> rules = new ArrayList<>();
        for (String text : spec.split(";")) {
            String rule = text.trim();
            if (rule.isEmpty()) continue;
            if (rules.size() == MAX_RULES) throw new IllegalArgumentException("more than " + MAX_RULES + " export rules");
            rules.add(parseRule(rule));
        }
        if (rules.isEmpty()) throw new IllegalArgumentException("no export rule in \"" + spec + "\"");
        return new Exports(rules);
    }

    private static Rule parseRule(String rule) {
        String[] words = rule.split("\\s+");
        boolean any = words[0].equals("*");
        int network = 0, prefix = 0;
        if (!any) {
            String[] parts = words[0].split("/", -1);
            Integer a = parseIpv4(parts[0]);
            if (a == null || parts.length > 2) throw bad(rule, "\"" + words[0] + "\" is not an IPv4 address or ADDRESS/PREFIX (or *)");
            network = a;
            prefix = 32;
            if (parts.length == 2) {
                prefix = number(rule, parts[1]);
                if (prefix > 32) throw bad(rule, "prefix " + prefix + " is over 32");
            }
        }
        boolean readOnly = false, rootSquash = true;
        int anonUid = Credentials.NOBODY, anonGid = Credentials.NOBODY;
        for (int i = 1; i < words.length; i++) {
            String w = words[i];
            switch (w) {
                case "rw" -> readOnly = false;
                case "ro" -> readOnly = true;
                case "root_squash" -> rootSquash = true;
                case "no_root_squash" -> rootSquash = false;
                default -> {
                    if (w.startsWith("anonuid=")) anonUid = number(rule, w.substring(8));
                    else if (w.startsWith("anongid=")) anonGid = number(rule, w.substring(8));
                    else throw bad(rule, "unknown option \"" + w + "\" (rw, ro, root_squash, no_root_squash, anonuid=N, anongid=N)");
                }
            }
        }
        return new Rule(network, prefix, any, readOnly, rootSquash, anonUid, anonGid);
    }

    private static int number(String rule, String s) {
        try {
            int n = Integer.parseInt(s);
            if (n < 0) throw bad(rule, "\"" + s + "\" is negative");
            return n;
        } catch (NumberFormatException e) {
            throw bad(rule, "\"" + s + "\" is not a number");
        }
    }

    private static IllegalArgumentException bad(String rule, String why) {
        return new IllegalArgumentException("export rule \"" + rule + "\": " + why);
    }

    /** A dotted-quad IPv4 address as an int, or null (also for IPv6: an IPv4-mapped one is unwrapped). */
    static Integer parseIpv4(String s) {
        if (s.startsWith("::ffff:")) s = s.substring(7);
        String[] p = s.split("\\.", -1);
        if (p.length != 4) return null;
        int a = 0;
        for (String part : p) {
            if (part.isEmpty() || part.length() > 3 || !part.chars().allMatch(Character::isDigit)) return null;
            int v = Integer.parseInt(part);
            if (v > 255) return null;
            a = (a << 8) | v;
        }
        return a;
    }
}
