package dev.cairn.core.env;

/** A host's clocks. Monotonic time is for measuring intervals on this host only; wall time is for humans and mtimes. */
public interface Clock {
    /** Monotonic nanoseconds; never compare with another host's value. */
    long nanoTime();

    /** Wall-clock milliseconds since the epoch; may be skewed, drift or step on any host. */
    long wallMillis();
}
