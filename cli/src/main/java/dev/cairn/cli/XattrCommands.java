package dev.cairn.cli;

import dev.cairn.chaos.RealClient;
import dev.cairn.core.proto.CairnException;
import dev.cairn.core.proto.MasterProtocol;
import dev.cairn.core.proto.Status;
import dev.cairn.core.proto.Types.FileAttr;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import picocli.CommandLine.ArgGroup;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/**
 * {@code cairn xattr list|get|set|rm}: a file's or directory's extended attributes through the native client, the same
 * ones NFS clients see (RFC 8276; the master keeps them, durable before a change is answered). Names are as stored: a
 * Linux NFS client's {@code user.NAME} is {@code NAME} here.
 */
@Command(name = "xattr", description = "A file's or directory's extended attributes (the ones NFS clients see as user.NAME).",
        subcommands = {XattrCommands.List.class, XattrCommands.Get.class, XattrCommands.Set.class, XattrCommands.Remove.class})
final class XattrCommands implements Runnable {
    @Override public void run() {
        new picocli.CommandLine(this).usage(System.out);
    }

    /** An attribute that is not there, or is there already: said as such (exit status 1), not as a missing file. */
    static final class AttributeRefused extends RuntimeException {
        AttributeRefused(String message) { super(message, null, false, false); }
    }

    /** The inode at {@code path}, then {@code call} on it; an attribute unset, or set where it must not be, is said so. */
    static <T> T on(RealClient c, String path, String name, java.util.function.Function<FileAttr, T> call) {
        FileAttr f = c.lookup(path);
        try {
            return call.apply(f);
        } catch (CairnException e) {
            if (e.status() == Status.NOT_FOUND && name != null) throw new AttributeRefused(path + ": no attribute " + name);
            if (e.status() == Status.EXISTS && name != null) throw new AttributeRefused(path + ": attribute " + name + " is set already");
            throw e;
        }
    }

    @Command(name = "list", description = "The names of the extended attributes of PATH, one a line, in name order.")
    static final class List extends ClientCommands.Base {
        @Parameters(index = "0", description = "Cluster path.") String path;

        @Override int run(RealClient c) {
            for (String n : on(c, path, null, f -> c.await(x -> x.listXattrs(f.inode())))) System.out.println(n);
            return 0;
        }
    }

    /** A command on one attribute: PATH and NAME, and the call on the inode at PATH. */
    abstract static class OnAttribute extends ClientCommands.Base {
        @Parameters(index = "0", description = "Cluster path.") String path;
        @Parameters(index = "1", description = "Attribute name.") String name;

        <T> T on(RealClient c, java.util.function.Function<FileAttr, T> call) { return XattrCommands.on(c, path, name, call); }
    }

    @Command(name = "get", description = "The value of extended attribute NAME of PATH, written as it is (bytes, no newline added).")
    static final class Get extends OnAttribute {
        @Override int run(RealClient c) {
            byte[] v = on(c, f -> c.await(x -> x.getXattr(f.inode(), name)));
            System.out.write(v, 0, v.length);
            System.out.flush();
            return 0;
        }
    }

    @Command(name = "set", description = "Set extended attribute NAME of PATH to VALUE (or to the bytes of --value-file).")
    static final class Set extends OnAttribute {
        @Parameters(index = "2", arity = "0..1", description = "The value, as UTF-8 text.") String value;
        @Option(names = "--value-file", description = "A local file whose bytes are the value (at most 64 KiB).") Path valueFile;
        @ArgGroup(exclusive = true) How how = new How();

        static final class How {
            @Option(names = "--create", description = "Fail if NAME is set already.") boolean create;
            @Option(names = "--replace", description = "Fail if NAME is not set.") boolean replace;
        }

        @Override int run(RealClient c) throws Exception {
            if ((value == null) == (valueFile == null)) throw new IllegalArgumentException("give the value, or --value-file, not both");
            byte[] v = value != null ? value.getBytes(StandardCharsets.UTF_8) : Files.readAllBytes(valueFile);
            int mode = how.create ? MasterProtocol.XATTR_CREATE : how.replace ? MasterProtocol.XATTR_REPLACE : MasterProtocol.XATTR_EITHER;
            on(c, f -> c.await(x -> x.setXattr(f.inode(), name, v, mode)));
            return 0;
        }
    }

    @Command(name = "rm", description = "Remove extended attribute NAME of PATH.")
    static final class Remove extends OnAttribute {
        @Override int run(RealClient c) {
            on(c, f -> c.await(x -> x.setXattr(f.inode(), name, new byte[0], MasterProtocol.XATTR_REMOVE)));
            return 0;
        }
    }
}
