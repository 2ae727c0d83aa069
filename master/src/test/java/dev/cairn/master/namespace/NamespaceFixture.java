package dev.cairn.master.namespace;

import static org.assertj.core.api.Assertions.assertThat;

import dev.cairn.core.proto.CairnException;
import dev.cairn.core.proto.Status;
import dev.cairn.core.testing.MemKv;
import dev.cairn.master.meta.LocalMetaLog;
import dev.cairn.master.meta.MetaCommand;
import org.junit.jupiter.api.BeforeEach;

/** A freshly formatted namespace in memory, changed through the local meta log, for the namespace tests. */
abstract class NamespaceFixture {
    MemKv kv;
    Namespace ns;
    LocalMetaLog log;

    @BeforeEach void format() {
        kv = new MemKv();
        ns = new Namespace(kv, 3);
        assertThat(ns.isEmpty()).isTrue();
        kv.write(ns.formatBatch(0), true);
        log = new LocalMetaLog(kv, ns, null);
    }

    /** Applies a command; its failure is thrown (the local log completes at once). */
    <R> R submit(MetaCommand<R> c) {
        var p = log.submit(c);
        if (p.isFailed()) throw (RuntimeException) p.error();
        return p.value();
    }

    /** OK, or the status of the CairnException {@code r} throws. */
    static Status statusOf(Runnable r) {
        try {
            r.run();
            return Status.OK;
        } catch (CairnException e) {
            return e.status();
        }
    }
}
