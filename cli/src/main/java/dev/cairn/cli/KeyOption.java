package dev.cairn.cli;

import dev.cairn.chaos.RealClient;
import dev.cairn.core.real.ClusterKey;
import dev.cairn.core.real.RealRuntime;
import java.nio.file.Files;
import java.nio.file.Path;
import picocli.CommandLine.Option;

/**
 * {@code --key-file}: the cluster key a node or an admin client proves membership with (docs/operations.md, "Node
 * authentication"). Servers without one run open; clients without one look for the key {@code cairn up} makes.
 */
final class KeyOption {
    @Option(names = "--key-file", defaultValue = "${env:CAIRN_KEY_FILE}", description = "The cluster key shared by every node and admin"
            + " client (default: $CAIRN_KEY_FILE; for clients, else " + RealClient.DEFAULT_KEY_FILE + " if present). A server without"
            + " one accepts any peer.")
    Path file;

    /** A server's runtime: keyed by the file given, else open (which the node says in its log). */
    RealRuntime serverRuntime() {
        return file == null ? new RealRuntime() : new RealRuntime(ClusterKey.load(file));
    }

    /** A client's key: the file given, else the one {@code cairn up} makes in ./cairn-data if it is there, else none. */
    ClusterKey clientKey() {
        if (file != null) return ClusterKey.load(file);
        Path made = Path.of(RealClient.DEFAULT_KEY_FILE);
        return Files.isReadable(made) ? ClusterKey.load(made) : null;
    }
}
