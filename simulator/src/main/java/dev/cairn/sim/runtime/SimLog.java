package dev.cairn.sim.runtime;

import dev.cairn.core.env.Log;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/** Node logging in simulation: virtual time and host on every line, kept in a ring (printed on failure), echoed if verbose. */
final class SimLog implements Log {
    /** The last lines of a run, shared by all hosts. */
    static final class Ring {
        private final ArrayDeque<String> lines = new ArrayDeque<>();
        private final int capacity;
        private final boolean echo;

        Ring(int capacity, boolean echo) {
            this.capacity = capacity;
            this.echo = echo;
        }

        void add(String line) {
            if (echo) System.out.println(line);
            if (capacity == 0) return;
            if (lines.size() == capacity) lines.poll();
            lines.add(line);
        }

        List<String> lines() { return new ArrayList<>(lines); }
    }

    private final SimHost host;
    private final String owner;

    SimLog(SimHost host, Class<?> owner) {
        this.host = host;
        this.owner = owner.getSimpleName();
    }

    @Override public void info(String fmt, Object... args) { add("INFO", fmt, args); }

    @Override public void warn(String fmt, Object... args) { add("WARN", fmt, args); }

    /** Debug lines are formatted only when echoed (--verbose): a sweep must not pay for them. */
    @Override public void debug(String fmt, Object... args) {
        if (host.logRing().echo) add("DEBUG", fmt, args);
    }

    private void add(String level, String fmt, Object... args) {
        StringBuilder sb = new StringBuilder();
        int a = 0;
        for (int i = 0; i < fmt.length(); i++) {
            if (fmt.startsWith("{}", i) && a < args.length) {
                sb.append(args[a++]);
                i++;
            } else {
                sb.append(fmt.charAt(i));
            }
        }
        host.logRing().add(String.format(Locale.ROOT, "%10.6f %-5s %s %s: %s", host.sim().now() / 1e9, level, host.name(), owner, sb));
    }
}
