package dev.cairn.jmh;

import dev.cairn.core.ec.CodingEngine;
import dev.cairn.core.ec.Engines;
import dev.cairn.core.ec.ErasureCodec;
import java.nio.ByteBuffer;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;

/**
 * Reed-Solomon encode, and decode with m cells lost (the first m data cells: the most work), per engine,
 * profile and cell size. Throughput is in stripes per second; multiply by k × cell for data bytes/s.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Warmup(iterations = 2, time = 1)
@Measurement(iterations = 3, time = 1)
@Fork(1)
public class ErasureBench {
    @Param({"isa-l", "jerasure", "java"}) public String engine;
    @Param({"4+1", "4+2", "6+3", "8+3", "10+4"}) public String profile;
    @Param({"65536", "1048576"}) public int cell;

    private ErasureCodec codec;
    private ByteBuffer[] data, parity, parts;
    private boolean[] present;

    @Setup public void setup() {
        CodingEngine e = Engines.named(engine);
        if (e == null) throw new IllegalStateException("engine " + engine + " does not load here (" + Engines.INSTALL_HINT + ")");
        String[] km = profile.split("\\+");
        int k = Integer.parseInt(km[0]), m = Integer.parseInt(km[1]);
        codec = new ErasureCodec(k, m, e);
        SplittableRandom r = new SplittableRandom(42);
        byte[] tmp = new byte[cell];
        data = new ByteBuffer[k];
        parity = new ByteBuffer[m];
        parts = new ByteBuffer[k + m];
        for (int i = 0; i < k; i++) {
            data[i] = ByteBuffer.allocateDirect(cell);
            r.nextBytes(tmp);
            data[i].put(0, tmp);
            parts[i] = data[i];
        }
        for (int i = 0; i < m; i++) parts[k + i] = parity[i] = ByteBuffer.allocateDirect(cell);
        codec.encode(data, parity);
        present = new boolean[k + m];
        for (int i = m; i < k + m; i++) present[i] = true;
    }

    @Benchmark public ByteBuffer encode() {
        codec.encode(data, parity);
        return parity[0];
    }

    @Benchmark public ByteBuffer decodeWithMLost() {
        codec.decode(parts, present);
        return parts[0];
    }
}
