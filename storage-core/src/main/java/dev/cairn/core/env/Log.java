package dev.cairn.core.env;

/** Node logging; goes through the Env so simulated runs log virtual time and can stay quiet. */
public interface Log {
    void info(String fmt, Object... args);

    void warn(String fmt, Object... args);

    void debug(String fmt, Object... args);
}
