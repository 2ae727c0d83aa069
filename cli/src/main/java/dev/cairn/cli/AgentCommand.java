package dev.cairn.cli;

import java.nio.file.Path;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code cairn agent}: the resident CLI ({@link Agent}). Started by {@code ./cairn} itself, in the background, the
 * first time a client command runs in a directory and environment; not a command people type.
 */
@Command(name = "agent", hidden = true, description = "Serve one-shot client commands from a resident JVM (started by ./cairn).")
final class AgentCommand implements Callable<Integer> {
    @Option(names = "--dir", required = true, description = "Where the agent keeps its port, token and request files.")
    Path dir;

    @Option(names = "--idle", defaultValue = "10m", description = "Exit after this long without a request (default: ${DEFAULT-VALUE}).")
    String idle;

    @Override public Integer call() throws Exception {
        long millis = Durations.parseNanos(idle) / 1_000_000;
        if (millis <= 0) throw new IllegalArgumentException("--idle must be positive");
        Agent.open(dir, millis).serve();
        return 0;
    }
}
