package dev.cairn.core.async;

import java.util.ArrayDeque;

/**
 * Operations under way, in the order they started, where they may finish in any order: the head is always
 * the oldest one not finished (a deadline to arm a timer for, an age to report). A finished operation
 * leaves at once if it is the head, else when the ones before it have finished; once more than
 * {@link #SLACK} beyond twice the unfinished ones are held, the finished ones are swept out (amortized
 * constant time), so the memory follows the operations under way, not those started behind a stuck one.
 */
public final class InFlight<E extends InFlight.Op> {
    /** Finished operations held beyond twice the unfinished ones before a sweep. */
    public static final int SLACK = 64;

    /** One operation; {@link InFlight#finish} marks it. */
    public abstract static class Op {
        boolean finished; // set only by InFlight.finish

        public final boolean finished() { return finished; }
    }

    private final ArrayDeque<E> ops = new ArrayDeque<>();
    private int unfinished;

    /** A new operation, started after every one added before. */
    public void add(E op) {
        assert !op.finished : "a finished operation cannot start";
        ops.addLast(op);
        unfinished++;
        sweepIfDue();
    }

    /** Marks {@code op} finished; false if it was already (each operation finishes once). */
    public boolean finish(E op) {
        if (op.finished) return false;
        op.finished = true;
        unfinished--;
        while (!ops.isEmpty() && ops.peekFirst().finished) ops.pollFirst();
        sweepIfDue();
        return true;
    }

    /** Keeps what is held within twice the unfinished operations plus {@link #SLACK} (a sweep leaves only those). */
    private void sweepIfDue() {
        if (ops.size() > 2 * unfinished + SLACK) ops.removeIf(Op::finished);
        assert ops.size() <= 2 * unfinished + SLACK;
    }

    /** The oldest operation not finished, or null if none is. */
    public E oldest() { return ops.peekFirst(); }

    /** Operations not finished. */
    public int unfinished() { return unfinished; }

    /** Operations held, finished ones not yet dropped included (what this costs in memory). */
    public int held() { return ops.size(); }

    /** Every operation is forgotten (its owner fails them all). */
    public void clear() {
        ops.clear();
        unfinished = 0;
    }
}
