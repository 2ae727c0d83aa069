package dev.cairn.cli;

import dev.cairn.chaos.RealClient;
import dev.cairn.core.env.Address;
import dev.cairn.core.proto.CairnException;
import dev.cairn.core.proto.StorageClass;
import dev.cairn.core.proto.Types.DirEntry;
import dev.cairn.core.proto.Types.FileType;
import java.io.BufferedInputStream;
import java.io.BufferedOutputStream;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Instant;
import java.util.Locale;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/** One-shot commands that talk to a running cluster through the client library. */
final class ClientCommands {
    /** Local file buffering for put and get. */
    static final int LOCAL_BUFFER_BYTES = 1 << 20;

    private ClientCommands() {}

    abstract static class Base implements Callable<Integer> {
        @Option(names = "--master", defaultValue = "${env:CAIRN_MASTER:-127.0.0.1:7100}", description = "Master HOST:PORT, or every master of a group, comma-separated (default: $CAIRN_MASTER, else 127.0.0.1:7100).")
        String master;

        @picocli.CommandLine.Mixin KeyOption key;

        @Override public final Integer call() throws Exception {
            try (RealClient c = RealClient.connect(Address.parseList(master), callTimeoutSeconds(), key.clientKey())) {
                return run(c);
            } catch (CairnException e) {
                System.err.println("cairn: " + describe(e));
                return 1;
            }
        }

        abstract int run(RealClient c) throws Exception;

        /** How long one call to the cluster may take before the command gives up. */
        long callTimeoutSeconds() { return RealClient.CALL_TIMEOUT_SECONDS; }

        static String describe(CairnException e) {
            String d = e.detail();
            return switch (e.status()) {
                case NOT_FOUND -> d + ": no such file or directory";
                case EXISTS -> d + ": already exists";
                case NOT_DIR -> d + ": not a directory";
                case IS_DIR -> d + ": is a directory";
                case NOT_EMPTY -> d + ": directory not empty";
                case UNAVAILABLE -> "cluster unavailable: " + d;
                default -> e.status().name().toLowerCase(Locale.ROOT) + ": " + d;
            };
        }
    }

    @Command(name = "put", description = "Copy a local file into the cluster (returns when it is durable on every copy).")
    static final class Put extends Base {
        @Parameters(index = "0", description = "Local file.") Path local;
        @Parameters(index = "1", description = "Cluster path.") String path;
        @Option(names = "--class", description = "Storage class: replicated(N) or ec(K,M) (default: the master's, replicated(3)).") String storageClass;
        @Option(names = "--chunk-size-mb", defaultValue = "0", description = "Chunk size in MiB (0: default 64).") int chunkMb;

        @Override int run(RealClient c) throws Exception {
            if (chunkMb < 0 || chunkMb > 64) throw new IllegalArgumentException("--chunk-size-mb must be 1..64 (0: default)");
            if (Files.isDirectory(local)) {
                System.err.println("cairn: " + local + ": is a directory (put copies one file)");
                return 1;
            }
            if (!Files.isRegularFile(local)) {
                System.err.println("cairn: " + local + ": no such local file");
                return 1;
            }
            long t0 = System.nanoTime();
            long n;
            try (InputStream in = new BufferedInputStream(Files.newInputStream(local), LOCAL_BUFFER_BYTES)) {
                n = c.put(in, path, chunkMb << 20, storageClass == null ? StorageClass.DEFAULT : StorageClass.parse(storageClass));
            }
            double s = (System.nanoTime() - t0) / 1e9;
            System.out.printf(Locale.ROOT, "%s: %d bytes in %.2fs (%.1f MB/s), durable on every copy%n", path, n, s, n / 1e6 / s);
            return 0;
        }
    }

    @Command(name = "get", description = "Copy a file from the cluster to a local file.")
    static final class Get extends Base {
        @Parameters(index = "0", description = "Cluster path.") String path;
        @Parameters(index = "1", description = "Local file (a directory: the file keeps its name there).") Path local;
        @Option(names = "--force", description = "Replace a local file that exists.") boolean force;

        @Override int run(RealClient c) throws Exception {
            if (Files.isDirectory(local)) {
                String name = path.substring(path.lastIndexOf('/') + 1);
                if (name.isEmpty()) throw new IllegalArgumentException(path + " names no file");
                local = local.resolve(name);
            }
            Path parent = local.toAbsolutePath().getParent();
            if (parent != null && !Files.isDirectory(parent)) {
                System.err.println("cairn: " + parent + ": no such local directory");
                return 1;
            }
            if (Files.exists(local) && !force) {
                System.err.println("cairn: " + local + ": exists (--force replaces it)");
                return 1;
            }
            Path tmp = local.resolveSibling(local.getFileName() + ".cairn-partial");
            long n;
            try (OutputStream out = new BufferedOutputStream(Files.newOutputStream(tmp), LOCAL_BUFFER_BYTES)) {
                n = c.get(path, out);
            } catch (CairnException e) {
                Files.deleteIfExists(tmp);
                throw e;
            }
            Files.move(tmp, local, StandardCopyOption.REPLACE_EXISTING);
            System.out.println(path + ": " + n + " bytes");
            return 0;
        }
    }

    @Command(name = "ls", description = "List a directory.")
    static final class Ls extends Base {
        @Parameters(index = "0", defaultValue = "/", description = "Cluster path (default: /).") String path;

        @Override int run(RealClient c) {
            var attr = c.lookup(path);
            if (attr.type() != FileType.DIR) {
                System.out.println(line(path, attr));
                return 0;
            }
            for (DirEntry e : c.list(path)) System.out.println(line(e.name(), e.attr()));
            return 0;
        }

        private static String line(String name, dev.cairn.core.proto.Types.FileAttr a) {
            String letter = switch (a.type()) {
                case FILE -> "-";
                case DIR -> "d";
                case SYMLINK -> "l";
                case FIFO -> "p";
                case SOCKET -> "s";
                case CHAR_DEVICE -> "c";
                case BLOCK_DEVICE -> "b";
            };
            String suffix = switch (a.type()) {
                case DIR -> "/";
                case SYMLINK -> " -> " + a.target();
                case CHAR_DEVICE, BLOCK_DEVICE -> " (device " + a.target() + ")";
                default -> "";
            };
            return String.format(Locale.ROOT, "%s %14d  %-15s %s  %s%s", letter, a.size(),
                    a.type() == FileType.FILE ? a.storageClass() : "", Instant.ofEpochMilli(a.mtimeMillis()), name, suffix);
        }
    }

    @Command(name = "mkdir", description = "Make a directory.")
    static final class Mkdir extends Base {
        @Parameters(index = "0") String path;

        @Override int run(RealClient c) {
            c.mkdir(path);
            return 0;
        }
    }

    @Command(name = "rm", description = "Remove a file or an empty directory.")
    static final class Rm extends Base {
        @Parameters(index = "0") String path;

        @Override int run(RealClient c) {
            c.remove(path);
            return 0;
        }
    }
}
