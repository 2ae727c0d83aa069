package dev.cairn.cli;

import dev.cairn.chunkserver.ChunkServer;
import dev.cairn.chunkserver.ChunkServerConfig;
import dev.cairn.core.env.Address;
import dev.cairn.core.proto.Types.Topology;
import dev.cairn.core.real.RealRuntime;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/** {@code cairn chunkserver}: one chunkserver process. */
@Command(name = "chunkserver", description = "Run a chunkserver.")
final class ChunkServerCommand implements Callable<Integer> {
    @picocli.CommandLine.Spec picocli.CommandLine.Model.CommandSpec spec;

    @Option(names = "--id", required = true, description = "Stable server id.")
    String id;

    @Option(names = "--listen", required = true, description = "HOST:PORT for data.")
    String listen;

    @Option(names = "--master", defaultValue = "${env:CAIRN_MASTER:-127.0.0.1:7100}", description = "Master HOST:PORT, or every master of a group, comma-separated (default: $CAIRN_MASTER, else 127.0.0.1:7100).")
    String master;

    @Option(names = "--data", required = true, description = "Data directory; each volume is a subdirectory.")
    Path data;

    @Option(names = "--volume", defaultValue = "disk0", split = ",",
            description = "Disks: NAME (a subdirectory of --data) or NAME=DIR (a directory elsewhere, e.g. a mount point), comma separated (default: ${DEFAULT-VALUE}).")
    List<String> volumes;

    @Option(names = "--capacity-gb", defaultValue = "0",
            description = "Capacity to advertise in GiB; 0 (the default) measures it: the chunks held plus the free space of the disks' filesystems.")
    long capacityGb;

    @Option(names = "--host", description = "Host label for failure domains (default: the server id, i.e. its own host).")
    String host;

    @Option(names = "--rack", defaultValue = "rack0", description = "Rack label for failure domains (default: ${DEFAULT-VALUE}).")
    String rack;

    @Option(names = "--disk-label", defaultValue = "", description = "Label of this server's disks, e.g. ssd or hdd (classes may require one).")
    String diskLabel;

    /** The largest capacity that can be given (1 EiB: far past any server, and no overflow in bytes). */
    static final long MAX_CAPACITY_GB = 1L << 30;

    /** Limits of the scrub options (a disk's bandwidth; a year). */
    static final long MAX_SCRUB_MB = 1 << 20, MAX_SCRUB_HOURS = 24 * 366;

    @Option(names = "--scrub-mb-per-second", defaultValue = "16", description = "Background checksum verification rate, 0 to disable (default: ${DEFAULT-VALUE}).")
    long scrubMb;

    @Option(names = "--scrub-interval-hours", defaultValue = "168", description = "Each scrub round (every chunk re-read once) is spread over at least this long, 0 for back to back (default: ${DEFAULT-VALUE}).")
    long scrubHours;

    @picocli.CommandLine.Mixin KeyOption key;

    @picocli.CommandLine.Mixin MetricsOption metrics;

    @Override public Integer call() throws Exception {
        java.util.Map<String, Path> dirs = new java.util.TreeMap<>();
        List<String> names = new java.util.ArrayList<>();
        for (String v : volumes) {
            int eq = v.indexOf('=');
            String name = eq < 0 ? v : v.substring(0, eq);
            if (!name.matches("[A-Za-z0-9_-]{1,64}")) throw new picocli.CommandLine.ParameterException(spec.commandLine(), "bad volume name '" + name + "' in --volume");
            if (names.contains(name)) throw new picocli.CommandLine.ParameterException(spec.commandLine(), "volume " + name + " given twice");
            names.add(name);
            if (eq >= 0) dirs.put(name, Path.of(v.substring(eq + 1)).toAbsolutePath());
        }
        if (capacityGb < 0 || capacityGb > MAX_CAPACITY_GB) throw new picocli.CommandLine.ParameterException(spec.commandLine(), "--capacity-gb must be 0.." + MAX_CAPACITY_GB);
        if (scrubMb < 0 || scrubMb > MAX_SCRUB_MB) throw new picocli.CommandLine.ParameterException(spec.commandLine(), "--scrub-mb-per-second must be 0.." + MAX_SCRUB_MB);
        if (scrubHours < 0 || scrubHours > MAX_SCRUB_HOURS) throw new picocli.CommandLine.ParameterException(spec.commandLine(), "--scrub-interval-hours must be 0.." + MAX_SCRUB_HOURS);
        ChunkServerConfig c = new ChunkServerConfig(id, Address.parse(listen), Address.parseList(master), names, capacityGb << 30,
                new Topology(host == null ? id : host, rack, diskLabel), scrubMb << 20, scrubHours * 3_600_000_000_000L);
        RealRuntime rt = key.serverRuntime();
        metrics.serve(rt.start(id, data.toAbsolutePath(), c.listen(), c.volumes(), dirs, env -> new ChunkServer(env, c)), "chunkserver");
        return MasterCommand.waitForSignal(rt);
    }
}
