package dev.cairn.core.env;

/** A scheduled task that can be cancelled before it runs. */
@FunctionalInterface
public interface Cancellable {
    void cancel();
}
