package dev.cairn.sim;

/**
 * Runs one seed and prints its summary (used to check determinism across JVMs; the CLI's
 * {@code cairn sim} is the user-facing entry). Exit status 0 on pass, 1 on a violation.
 */
public final class SimMain {
    private SimMain() {}

    public static void main(String[] args) {
        long seed = args.length > 0 ? Long.parseLong(args[0]) : 1;
        long seconds = args.length > 1 ? Long.parseLong(args[1]) : SimOptions.DEFAULT_DURATION_NANOS / 1_000_000_000L;
        SimResult r = SimRun.run(SimOptions.defaults(seed).withDuration(seconds * 1_000_000_000L));
        System.out.print(r.summary());
        System.exit(r.passed() ? 0 : 1);
    }
}
