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

    @Override public int compareTo(Address o) {
        int c = host.compareTo(o.host);
        return c != 0 ? c : Integer.compare(port, o.port);
    }

    @Override public String toString() { return host + ":" + port; }
}
