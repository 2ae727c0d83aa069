package dev.cairn.chaos;

import java.util.ArrayList;
import java.util.List;

/**
 * Every client operation of a chaos run with its invocation and completion on the run's clock and its outcome,
 * appended by the workload's threads and read by the checker and the report.
 */
public final class History {
    public enum Op { WRITE, READ, CHECK, NEW_FILE }

    public enum Outcome { OK, FAILED, WRONG_BYTES }

    /** One operation on file number {@code file} at {@code path}: {@code bytes} written, or read. */
    public record Entry(Op op, String path, int file, long bytes, long startMillis, long endMillis, Outcome outcome, String detail) {}

    private final List<Entry> entries = new ArrayList<>();

    synchronized void add(Op op, String path, int file, long bytes, long start, long end, Outcome outcome, String detail) {
        entries.add(new Entry(op, path, file, bytes, start, end, outcome, detail == null ? "" : detail));
    }

    public synchronized List<Entry> entries() { return List.copyOf(entries); }

    /** Writes that returned success: each must read back byte for byte, for ever. */
    public synchronized List<Entry> acknowledgedWrites() {
        return entries.stream().filter(e -> e.op == Op.WRITE && e.outcome == Outcome.OK).toList();
    }

    public synchronized List<Entry> failedWrites() {
        return entries.stream().filter(e -> e.op == Op.WRITE && e.outcome == Outcome.FAILED).toList();
    }
}
