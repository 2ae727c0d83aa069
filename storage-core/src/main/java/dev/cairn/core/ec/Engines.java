package dev.cairn.core.ec;

import dev.cairn.core.ec.jni.IsalEngine;
import dev.cairn.core.ec.jni.JerasureEngine;
import dev.cairn.core.ec.jni.NativeLibrary;
import java.util.ArrayList;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The coding engines this process can use, fastest first: ISA-L, then jerasure, then pure Java. All give
 * identical bytes, so the choice is about speed only and is made once, at first use.
 */
public final class Engines {
    private static final Logger LOG = LoggerFactory.getLogger(Engines.class);
    public static final String INSTALL_HINT = "apt-get install libisal-dev libjerasure-dev libgf-complete-dev, then rebuild";

    private static List<CodingEngine> available;

    private Engines() {}

    /** Every engine that loads here, fastest first; pure Java is always last. */
    public static synchronized List<CodingEngine> available() {
        if (available == null) {
            List<CodingEngine> list = new ArrayList<>();
            IsalEngine isal = IsalEngine.loadOrNull();
            if (isal != null) list.add(isal);
            JerasureEngine jerasure = JerasureEngine.loadOrNull();
            if (jerasure != null) list.add(jerasure);
            if (list.isEmpty()) {
                LOG.warn("no native erasure-coding library loaded (isa-l: {}; jerasure: {}); using the pure-Java engine. For the fast path: {}",
                        NativeLibrary.failure("isal"), NativeLibrary.failure("jerasure"), INSTALL_HINT);
            }
            list.add(new JavaEngine());
            available = List.copyOf(list);
        }
        return available;
    }

    public static CodingEngine best() { return available().get(0); }

    /** The engine of that name ("isa-l", "jerasure", "java"), or null if it does not load here. */
    public static CodingEngine named(String name) {
        for (CodingEngine e : available()) if (e.name().equals(name)) return e;
        return null;
    }
}
