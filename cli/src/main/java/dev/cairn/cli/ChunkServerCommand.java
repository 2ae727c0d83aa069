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
    @Option(names = "--id", required = true, description = "Stable server id.")
    String id;

    @Option(names = "--listen", required = true, description = "HOST:PORT for data.")
    String listen;

    @Option(names = "--master", defaultValue = "127.0.0.1:7100", description = "Master HOST:PORT (default: ${DEFAULT-VALUE}).")
    String master;

    @Option(names = "--data", required = true, description = "Data directory; each volume is a subdirectory.")
    Path data;

    @Option(names = "--volume", defaultValue = "disk0", split = ",", description = "Volume names (default: ${DEFAULT-VALUE}).")
    List<String> volumes;

    @Option(names = "--capacity-gb", defaultValue = "1024", description = "Advertised capacity in GiB.")
    long capacityGb;

    @Option(names = "--host", description = "Host label for failure domains (default: the server id, i.e. its own host).")
    String host;

    @Option(names = "--rack", defaultValue = "rack0", description = "Rack label for failure domains (default: ${DEFAULT-VALUE}).")
    String rack;

    @Option(names = "--disk-label", defaultValue = "", description = "Label of this server's disks, e.g. ssd or hdd (classes may require one).")
    String diskLabel;

    @Option(names = "--scrub-mb-per-second", defaultValue = "16", description = "Background checksum verification rate, 0 to disable (default: ${DEFAULT-VALUE}).")
    long scrubMb;

    @Override public Integer call() throws Exception {
        ChunkServerConfig c = new ChunkServerConfig(id, Address.parse(listen), Address.parse(master), volumes, capacityGb << 30,
                new Topology(host == null ? id : host, rack, diskLabel), scrubMb << 20);
        RealRuntime rt = new RealRuntime();
        rt.start(id, data.toAbsolutePath(), c.listen(), c.volumes(), env -> new ChunkServer(env, c));
        return MasterCommand.waitForSignal(rt);
    }
}
