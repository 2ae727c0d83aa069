package dev.cairn.core.env;

import java.util.Locale;

/**
 * Bugs the simulator can plant in the node code ({@code ./cairn sim --plant NAME}) to prove that its
 * invariant checkers can fail. The real runtime never plants anything ({@link Env#planted} is false);
 * each hook in the node code is one {@code if} naming the plant, so the correct path stays the
 * obvious one to read.
 */
public enum Plant {
    /** A chunkserver answers a sync without fsyncing the data, the header or the name. */
    ACK_BEFORE_FSYNC,
    /** The planner deletes extra copies without checking that the copies it keeps are current. */
    DELETE_UNCHECKED,
    /** Placement forgets that it already chose a server: two copies or parts of a chunk land on one host. */
    TWO_ON_ONE_HOST,
    /** Write leases are timed on wall clocks, so a step or skew between hosts shortens or stretches them. */
    WALL_CLOCK_LEASES;

    /** The command-line name, e.g. {@code ack-before-fsync}. */
    public String cliName() { return name().toLowerCase(Locale.ROOT).replace('_', '-'); }

    public static Plant parse(String s) {
        for (Plant p : values()) if (p.cliName().equals(s.trim().toLowerCase(Locale.ROOT)) || p.name().equalsIgnoreCase(s.trim())) return p;
        StringBuilder names = new StringBuilder();
        for (Plant p : values()) names.append(names.length() == 0 ? "" : ", ").append(p.cliName());
        throw new IllegalArgumentException("unknown plant '" + s + "' (" + names + ")");
    }
}
