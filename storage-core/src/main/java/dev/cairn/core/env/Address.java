package dev.cairn.core.env;

/** Where a node listens (or, for an accepted connection, the peer end). */
public record Address(String host, int port) implements Comparable<Address> {
    public Address {
        if (host == null || host.isEmpty()) throw new IllegalArgumentException("empty host");
        if (port < 0 || port > 65535) throw new IllegalArgumentException("bad port " + port);
    }

    public static Address parse(String s) {
        int i = s.lastIndexOf(':');
        if (i <= 0 || i == s.length() - 1) throw new IllegalArgumentException("expected HOST:PORT, got '" + s + "'");
        try {
            return new Address(s.substring(0, i), Integer.parseInt(s.substring(i + 1)));
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("expected HOST:PORT, got '" + s + "'", e);
        }
    }

    /** Masters of a group, at most this many in one list. */
    public static final int MAX_LIST = 16;

    /** A comma-separated list of HOST:PORT (a master group), in the order given, without repeats. */
    public static java.util.List<Address> parseList(String s) {
        java.util.List<Address> out = new java.util.ArrayList<>();
        for (String part : s.split(",")) {
            if (part.isBlank()) continue;
            Address a = parse(part.strip());
            if (out.contains(a)) throw new IllegalArgumentException("'" + a + "' is listed twice in '" + s + "'");
            out.add(a);
        }
        if (out.isEmpty()) throw new IllegalArgumentException("expected HOST:PORT[,HOST:PORT...], got '" + s + "'");
        if (out.size() > MAX_LIST) throw new IllegalArgumentException("at most " + MAX_LIST + " addresses, got " + out.size());
        return java.util.List.copyOf(out);
    }

    @Override public int compareTo(Address o) {
        int c = host.compareTo(o.host);
        return c != 0 ? c : Integer.compare(port, o.port);
    }

    @Override public String toString() { return host + ":" + port; }
}
