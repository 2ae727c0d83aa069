package dev.cairn.core.proto;

import dev.cairn.core.ec.Vandermonde;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * How a file's chunks are kept: {@code replicated(N)} — N full copies — or {@code ec(k,m)} — each chunk
 * cut into stripes of k data cells and m parity cells, the k+m parts on k+m servers, any k of which
 * rebuild the chunk. {@code replicated(0)} means "the master's default".
 *
 * <p>Options after the counts:
 * <ul>
 *   <li>{@code domain=} the failure domain no two copies (parts) may share — {@code host} (default),
 *       {@code rack}, or {@code server}, which lets several chunkservers of one host hold copies of a
 *       chunk (what a class says when it accepts fewer hosts than copies);</li>
 *   <li>{@code disk=} a label a chunkserver must carry (e.g. {@code ssd}) to hold the class's chunks;</li>
 *   <li>{@code full=} what happens when no labelled server has room: {@code refuse} (default: writes
 *       fail with NO_SPACE) or {@code overflow} (new chunks go to servers without the label, and the
 *       planner moves them back when labelled space frees up);</li>
 *   <li>{@code archive=CLASS,after=T} (replicated classes): once the file has been idle (not modified)
 *       for T ({@code 90s}, {@code 30m}, {@code 12h}, {@code 7d}) the planner rewrites it in CLASS — hot
 *       replicas to cold EC.</li>
 * </ul>
 * Examples: {@code ec(8,3)}, {@code replicated(3,domain=rack)}, {@code ec(4,2,domain=server,disk=hdd)},
 * {@code replicated(2,disk=ssd,full=overflow)}, {@code replicated(3,archive=ec(4,2),after=7d)}.
 */
public record StorageClass(int replicas, int k, int m, Domain domain, String disk, boolean overflow, String archive, long archiveAfterSeconds) {
    public static final int MAX_REPLICAS = 16;
    public static final int MAX_LABEL = 32;
    /** The longest class text accepted (an archive rule nests a second class). */
    public static final int MAX_TEXT = 200;
    private static final Pattern LABEL = Pattern.compile("[a-z0-9_-]{0," + MAX_LABEL + "}");
    private static final Pattern DURATION = Pattern.compile("([0-9]{1,6})([smhd])");
    /** Stands for "the master's default" (declared after the patterns the constructor uses). */
    public static final StorageClass DEFAULT = new StorageClass(0, 0, 0, Domain.HOST, "", false, "", 0);

    /** The level at which copies of one chunk must differ. Append only: the ordinal is stored. */
    public enum Domain {
        SERVER, HOST, RACK;

        private static String duration(long seconds) {
        if (seconds % 86400 == 0) return seconds / 86400 + "d";
        if (seconds % 3600 == 0) return seconds / 3600 + "h";
        if (seconds % 60 == 0) return seconds / 60 + "m";
        return seconds + "s";
    }

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
        if (archive == null) throw new IllegalArgumentException("null archive class");
        if (archive.isEmpty() != (archiveAfterSeconds == 0)) throw new IllegalArgumentException("an archive rule needs both archive=CLASS and after=T");
        if (archiveAfterSeconds < 0) throw new IllegalArgumentException("negative archive delay");
        if (!archive.isEmpty() && k > 0) throw new IllegalArgumentException("archive rules move replicated files (hot copies to a colder class)");
        if (!archive.isEmpty() && !parse(archive).archive().isEmpty()) throw new IllegalArgumentException("an archive class cannot have an archive rule of its own");
    }

    public static StorageClass replicated(int n) { return new StorageClass(n, 0, 0, Domain.HOST, "", false, "", 0); }

    public static StorageClass ec(int k, int m) { return new StorageClass(0, k, m, Domain.HOST, "", false, "", 0); }

    public StorageClass withDomain(Domain d) { return new StorageClass(replicas, k, m, d, disk, overflow, archive, archiveAfterSeconds); }

    public StorageClass withDisk(String label) { return new StorageClass(replicas, k, m, domain, label, overflow, archive, archiveAfterSeconds); }

    public StorageClass withOverflow(boolean o) { return new StorageClass(replicas, k, m, domain, disk, o, archive, archiveAfterSeconds); }

    /** After {@code afterSeconds} idle, the file moves to {@code to}. */
    public StorageClass withArchive(StorageClass to, long afterSeconds) {
        return new StorageClass(replicas, k, m, domain, disk, overflow, to.toString(), afterSeconds);
    }

    /** The class idle files move to, or null if there is no archive rule. */
    public StorageClass archiveClass() { return archive.isEmpty() ? null : parse(archive); }

    /** The same placement without the archive rule (what a file's chunks are checked against). */
    public StorageClass placement() { return archive.isEmpty() ? this : new StorageClass(replicas, k, m, domain, disk, overflow, "", 0); }

    /**
     * Parses {@code replicated(3)}, {@code ec(8,3)}, with options {@code ,domain=server|host|rack},
     * {@code ,disk=LABEL}, {@code ,full=refuse|overflow}, {@code ,archive=CLASS,after=T} (spaces ignored).
     */
    public static StorageClass parse(String s) {
        if (s.length() > MAX_TEXT) throw bad(s.substring(0, 40) + "...", "longer than " + MAX_TEXT + " characters");
        String t = s.replace(" ", "").toLowerCase(Locale.ROOT);
        int open = t.indexOf('(');
        if (open < 0 || !t.endsWith(")")) throw bad(s, "use replicated(N) or ec(K,M), options ,domain=host|rack|server ,disk=LABEL ,full=refuse|overflow ,archive=CLASS,after=T");
        String kind = t.substring(0, open);
        boolean ec = kind.equals("ec");
        if (!ec && !kind.equals("replicated")) throw bad(s, "a class is replicated(N) or ec(K,M)");
        List<String> args = splitTopLevel(t.substring(open + 1, t.length() - 1), s);
        int counts = ec ? 2 : 1;
        if (args.size() < counts) throw bad(s, ec ? "ec takes K,M" : "replicated takes N");
        int[] n = new int[counts];
        for (int i = 0; i < counts; i++) {
            if (!args.get(i).matches("[0-9]{1,2}")) throw bad(s, ec ? "ec takes K,M (numbers below 100)" : "replicated takes N (a number below 100)");
            n[i] = Integer.parseInt(args.get(i));
        }
        // replicated(0) is how the default is stored, not a class to ask for: taken as given it silently became the
        // master's default
        if (!ec && n[0] == 0) throw bad(s, "replicated takes N of 1 or more (leave the class out for the default)");
        StorageClass c;
        try {
            c = ec ? ec(n[0], n[1]) : replicated(n[0]);
        } catch (IllegalArgumentException e) {
            throw bad(s, e.getMessage());
        }
        StorageClass archiveTo = null;
        long after = 0;
        for (String opt : args.subList(counts, args.size())) {
            int eq = opt.indexOf('=');
            if (eq <= 0) throw bad(s, "options are KEY=VALUE, not '" + opt + "'");
            String key = opt.substring(0, eq), value = opt.substring(eq + 1);
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
                case "full" -> {
                    if (!value.equals("refuse") && !value.equals("overflow")) throw bad(s, "full is refuse or overflow");
                    c = c.withOverflow(value.equals("overflow"));
                }
                case "archive" -> {
                    archiveTo = parse(value);
                    if (archiveTo.replicas() == 0 && !archiveTo.isEc()) throw bad(s, "the archive class needs its own counts");
                    if (archiveTo.archiveClass() != null) throw bad(s, "an archive class cannot have an archive rule of its own");
                }
                case "after" -> {
                    Matcher d = DURATION.matcher(value);
                    if (!d.matches()) throw bad(s, "after takes a duration like 90s, 30m, 12h or 7d");
                    long unit = switch (d.group(2)) {
                        case "s" -> 1;
                        case "m" -> 60;
                        case "h" -> 3600;
                        default -> 86400;
                    };
                    after = Long.parseLong(d.group(1)) * unit;
                    if (after == 0) throw bad(s, "after must be positive");
                }
                default -> throw bad(s, "unknown option '" + key + "'");
            }
        }
        if ((archiveTo == null) != (after == 0)) throw bad(s, "an archive rule needs both archive=CLASS and after=T");
        return archiveTo == null ? c : c.withArchive(archiveTo, after);
    }

    /** Splits at commas outside parentheses. */
    private static List<String> splitTopLevel(String body, String whole) {
        List<String> out = new ArrayList<>();
        int depth = 0, from = 0;
        for (int i = 0; i < body.length(); i++) {
            char ch = body.charAt(i);
            if (ch == '(') depth++;
            else if (ch == ')' && --depth < 0) throw bad(whole, "unbalanced parentheses");
            else if (ch == ',' && depth == 0) {
                out.add(body.substring(from, i));
                from = i + 1;
            }
        }
        if (depth != 0) throw bad(whole, "unbalanced parentheses");
        if (!body.isEmpty()) out.add(body.substring(from));
        for (String a : out) if (a.isEmpty()) throw bad(whole, "empty argument");
        return out;
    }

    private static IllegalArgumentException bad(String s, String why) {
        return new IllegalArgumentException("bad storage class '" + s + "': " + why);
    }

    public boolean isEc() { return k > 0; }

    /** Copies or parts each chunk has. */
    public int parts() { return isEc() ? k + m : replicas; }

    /** Copies or parts that may be lost without losing data. */
    public int tolerance() { return isEc() ? m : replicas - 1; }

    private static String duration(long seconds) {
        if (seconds % 86400 == 0) return seconds / 86400 + "d";
        if (seconds % 3600 == 0) return seconds / 3600 + "h";
        if (seconds % 60 == 0) return seconds / 60 + "m";
        return seconds + "s";
    }

    @Override public String toString() {
        StringBuilder b = new StringBuilder(isEc() ? "ec(" + k + "," + m : "replicated(" + replicas);
        if (domain != Domain.HOST) b.append(",domain=").append(domain);
        if (!disk.isEmpty()) b.append(",disk=").append(disk);
        if (overflow) b.append(",full=overflow");
        if (!archive.isEmpty()) b.append(",archive=").append(archive).append(",after=").append(duration(archiveAfterSeconds));
        return b.append(')').toString();
    }
}
