package dev.cairn.core.env;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

/** An atomic group of puts and deletes. */
public final class KvBatch {
    /** A put (value non-null) or a delete (value null). */
    public record Op(byte[] key, byte[] value) {}

    private final List<Op> ops = new ArrayList<>();

    public KvBatch put(byte[] key, byte[] value) {
        ops.add(new Op(key.clone(), value.clone()));
        return this;
    }

    public KvBatch delete(byte[] key) {
        ops.add(new Op(key.clone(), null));
        return this;
    }

    public List<Op> ops() { return Collections.unmodifiableList(ops); }

    public boolean isEmpty() { return ops.isEmpty(); }
}
