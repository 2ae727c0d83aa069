package dev.cairn.core.proto;

import dev.cairn.core.ec.Vandermonde;
import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * How a file's chunks are kept: {@code replicated(N)} — N full copies — or {@code ec(k,m)} — each chunk
 * cut into stripes of k data cells and m parity cells, the k+m parts on k+m servers, any k of which
 * rebuild the chunk. {@code replicated(0)} means "the master's default".
 *
 * <p>Options after the counts: {@code domain=} the failure domain no two copies (parts) may share —
 * {@code host} (default), {@code rack}, or {@code server}, which lets several chunkservers of one host
 * hold copies of a chunk (what a class says when it accepts fewer hosts than copies); {@code disk=} a
 * label a chunkserver must carry (e.g. {@code ssd}) to hold the class's chunks. Examples:
 * {@code ec(8,3)}, {@code replicated(3,domain=rack)}, {@code ec(4,2,domain=server,disk=hdd)}.
 */
public record StorageClass(int replicas, int k, int m, Domain domain, String disk) {
    public static final int MAX_REPLICAS = 16;
    public static final int MAX_LABEL = 32;
    private static final Pattern SHAPE = Pattern.compile("(replicated|ec)\\(([0-9,]*)((?:,[a-z]+=[a-z0-9_-]*)*)\\)");
    private static final Pattern LABEL = Pattern.compile("[a-z0-9_-]{0," + MAX_LABEL + "}");
    /** Stands for "the master's default" (declared after the patterns the constructor uses). */
    public static final StorageClass DEFAULT = new StorageClass(0, 0, 0, Domain.HOST, "");

    /** The level at which copies of one chunk must differ. Append only: the ordinal is stored. */
    public enum Domain {
        SERVER, HOST, RACK;

        @Override public String toString() { return name().toLowerCase(Locale.ROOT); }
    }

    public StorageClass {
        if (domain == null) throw new IllegalArgumentException("no failure domain");
        if (disk == null || !LABEL.matcher(disk).matches()) throw new IllegalArgumentException("bad disk label '" + disk + "'");
        if (k == 0 && m == 0) {
            if (replicas < 0 || replicas > MAX_REPLICAS) throw new IllegalArgumentException("replicated(" + replicas + "): copies must be 1.." + MAX_REPLICAS);
        } else {
            if (replicas != 0) throw new IllegalArgumentException("a class is either replicated or erasure coded");
            Vandermonde.check(k, m);
        }
    }

    public static StorageClass replicated(int n) { return new StorageClass(n, 0, 0, Domain.HOST, ""); }

    public static StorageClass ec(int k, int m) { return new StorageClass(0, k, m, Domain.HOST, ""); }

    public StorageClass withDomain(Domain d) { return new StorageClass(replicas, k, m, d, disk); }

    public StorageClass withDisk(String label) { return new StorageClass(replicas, k, m, domain, label); }

    /** Parses {@code replicated(3)}, {@code ec(8,3)}, with options {@code ,domain=server|host|rack} and {@code ,disk=LABEL} (spaces ignored). */
    public static StorageClass parse(String s) {
        String t = s.replace(" ", "").toLowerCase(Locale.ROOT);
        Matcher x = SHAPE.matcher(t);
        if (!x.matches()) throw bad(s, "use replicated(N) or ec(K,M), options ,domain=host|rack|server ,disk=LABEL");
        String[] counts = x.group(2).isEmpty() ? new String[0] : x.group(2).split(",", -1);
        boolean ec = x.group(1).equals("ec");
        if (counts.length != (ec ? 2 : 1)) throw bad(s, ec ? "ec takes K,M" : "replicated takes N");
        int[] n = new int[counts.length];
        for (int i = 0; i < counts.length; i++) {
            if (!counts[i].matches("[0-9]{1,2}")) throw bad(s, "counts are numbers below 100");
            n[i] = Integer.parseInt(counts[i]);
        }
        StorageClass c;
        try {
            c = ec ? ec(n[0], n[1]) : replicated(n[0]);
        } catch (IllegalArgumentException e) {
            throw bad(s, e.getMessage());
        }
        if (!x.group(3).isEmpty()) {
            for (String opt : x.group(3).substring(1).split(",")) {
                String key = opt.substring(0, opt.indexOf('=')), value = opt.substring(opt.indexOf('=') + 1);
                switch (key) {
                    case "domain" -> {
                        try {
                            c = c.withDomain(Domain.valueOf(value.toUpperCase(Locale.ROOT)));
                        } catch (IllegalArgumentException e) {
                            throw bad(s, "domain is host, rack or server");
                        }
                    }
                    case "disk" -> {
                        if (!LABEL.matcher(value).matches()) throw bad(s, "disk labels are up to " + MAX_LABEL + " of a-z 0-9 _ -");
                        c = c.withDisk(value);
                    }
                    default -> throw bad(s, "unknown option '" + key + "'");
                }
            }
        }
        return c;
    }

    private static IllegalArgumentException bad(String s, String why) {
        return new IllegalArgumentException("bad storage class '" + s + "': " + why);
    }

    public boolean isEc() { return k > 0; }

    /** Copies or parts each chunk has. */
    public int parts() { return isEc() ? k + m : replicas; }

    /** Copies or parts that may be lost without losing data. */
    public int tolerance() { return isEc() ? m : replicas - 1; }

    @Override public String toString() {
        StringBuilder b = new StringBuilder(isEc() ? "ec(" + k + "," + m : "replicated(" + replicas);
        if (domain != Domain.HOST) b.append(",domain=").append(domain);
        if (!disk.isEmpty()) b.append(",disk=").append(disk);
        return b.append(')').toString();
    }
}
