package dev.cairn.core.real;

import dev.cairn.core.env.Clock;

/** The machine's clocks. */
final class RealClock implements Clock {
    static final RealClock INSTANCE = new RealClock();

    @Override public long nanoTime() { return System.nanoTime(); }

    @Override public long wallMillis() { return System.currentTimeMillis(); }
}
