package dev.cairn.cli;

import picocli.CommandLine;
import picocli.CommandLine.Command;

/** The {@code cairn} command. */
@Command(name = "cairn", mixinStandardHelpOptions = true, version = "cairn 0.1.0",
        scope = CommandLine.ScopeType.INHERIT, // --help and --version on every subcommand too (`cairn up --help`)
        description = "Cairn: a distributed file system with a deterministic simulator.",
        subcommands = {
            UpCommand.class, MasterCommand.class, ChunkServerCommand.class, NfsCommand.class,
            ClientCommands.Put.class, ClientCommands.Get.class, ClientCommands.Ls.class,
            ClientCommands.Mkdir.class, ClientCommands.Rm.class, XattrCommands.class,
            AdminCommands.Status.class, AdminCommands.FileInfo.class, AdminCommands.Drain.class, AdminCommands.SetClass.class,
            AdminCommands.FsckCommand.class, AdminCommands.Masters.class,
            SimCommand.class, ChaosCommand.class, AgentCommand.class
        })
public final class Main implements Runnable {
    /** Exit status for bad usage or configuration. */
    public static final int EXIT_USAGE = 2;

    public static void main(String[] args) {
        // servers log at info; one-shot client commands only warn
        boolean server = args.length > 0 && (args[0].equals("up") || args[0].equals("master") || args[0].equals("chunkserver"));
        if (System.getProperty("org.slf4j.simpleLogger.defaultLogLevel") == null) {
            System.setProperty("org.slf4j.simpleLogger.defaultLogLevel", server ? "info" : "warn");
        }
        System.setProperty("org.slf4j.simpleLogger.showDateTime", "true");
        System.setProperty("org.slf4j.simpleLogger.dateTimeFormat", "HH:mm:ss.SSS");
        System.setProperty("org.slf4j.simpleLogger.log.org.apache.ratis", "warn");
        // Ratis logs each failed reconnect to a master that is down (about ten a second) with a stack trace; its
        // LogAppender still says, every tenth retry, that a peer cannot be reached
        System.setProperty("org.slf4j.simpleLogger.log.org.apache.ratis.util.LifeCycle", "off");
        System.exit(run(args));
    }

    /** Runs the command line and returns the exit status (tests call this). */
    public static int run(String... args) {
        return new CommandLine(new Main())
                .setExecutionExceptionHandler((ex, cmd, parsed) -> {
                    cmd.getErr().println("cairn: " + ex.getMessage());
                    return ex instanceof IllegalArgumentException || ex instanceof IllegalStateException ? EXIT_USAGE : 1;
                })
                .execute(args);
    }

    @Override public void run() {
        new CommandLine(this).usage(System.out);
    }
}
