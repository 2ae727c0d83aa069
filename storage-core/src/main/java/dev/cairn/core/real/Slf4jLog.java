package dev.cairn.core.real;

import dev.cairn.core.env.Log;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** Node logging through SLF4J, each line prefixed with the host. */
final class Slf4jLog implements Log {
    private final Logger log;
    private final String prefix;

    Slf4jLog(Class<?> owner, String host) {
        this.log = LoggerFactory.getLogger(owner);
        this.prefix = "[" + host + "] ";
    }

    @Override public void info(String fmt, Object... args) { if (log.isInfoEnabled()) log.info(prefix + fmt, args); }

    @Override public void warn(String fmt, Object... args) { if (log.isWarnEnabled()) log.warn(prefix + fmt, args); }

    @Override public void debug(String fmt, Object... args) { if (log.isDebugEnabled()) log.debug(prefix + fmt, args); }
}
