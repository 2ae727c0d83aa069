package dev.cairn.core.proto;

import dev.cairn.core.ec.Vandermonde;
import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * How a file's chunks are kept: {@code replicated(N)} — N full copies on N hosts — or {@code ec(k,m)} —
 * each chunk cut into stripes of k data cells and m parity cells, the k+m parts on k+m hosts, any k of
 * which rebuild the chunk. {@code replicated(0)} means "the master's default".
 */
public record StorageClass(int replicas, int k, int m) {
    public static final int MAX_REPLICAS = 16;
    public static final StorageClass DEFAULT = new StorageClass(0, 0, 0);
    private static final Pattern REPLICATED = Pattern.compile("replicated\\((\\d{1,2})\\)");
    private static final Pattern EC = Pattern.compile("ec\\((\\d{1,2}),(\\d{1,2})\\)");

    public StorageClass {
        if (k == 0 && m == 0) {
            if (replicas < 0 || replicas > MAX_REPLICAS) throw new IllegalArgumentException("replicated(" + replicas + "): copies must be 1.." + MAX_REPLICAS);
        } else {
            if (replicas != 0) throw new IllegalArgumentException("a class is either replicated or erasure coded");
            Vandermonde.check(k, m);
        }
    }

    public static StorageClass replicated(int n) { return new StorageClass(n, 0, 0); }

    public static StorageClass ec(int k, int m) { return new StorageClass(0, k, m); }

    /** Parses {@code replicated(3)}, {@code ec(8,3)} (spaces ignored). */
    public static StorageClass parse(String s) {
        String t = s.replace(" ", "").toLowerCase(Locale.ROOT);
        Matcher r = REPLICATED.matcher(t);
        if (r.matches()) return replicated(Integer.parseInt(r.group(1)));
        Matcher e = EC.matcher(t);
        if (e.matches()) return ec(Integer.parseInt(e.group(1)), Integer.parseInt(e.group(2)));
        throw new IllegalArgumentException("bad storage class '" + s + "' (use replicated(N) or ec(K,M))");
    }

    public boolean isEc() { return k > 0; }

    /** Copies or parts each chunk has. */
    public int parts() { return isEc() ? k + m : replicas; }

    @Override public String toString() { return isEc() ? "ec(" + k + "," + m + ")" : "replicated(" + replicas + ")"; }
}
