package dev.cairn.core.metrics;

/**
 * A node that describes itself as metrics (served by the real runtime on {@code --metrics HOST:PORT}). Called on
 * the node's own loop, so it reads its state as it is, without locks; it must be quick (a scrape waits for it).
 */
public interface MetricsSource {
    void metrics(MetricsText out);
}
