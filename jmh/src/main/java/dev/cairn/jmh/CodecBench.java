package dev.cairn.jmh;

import dev.cairn.core.env.Address;
import dev.cairn.core.proto.ChunkProtocol.WriteData;
import dev.cairn.core.proto.Codec;
import dev.cairn.core.proto.CodecException;
import dev.cairn.core.proto.Message;
import dev.cairn.core.proto.Types.ServerRef;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;

/** Encoding and decoding one full-size (1 MiB) WriteData frame: the data path's per-piece codec cost. */
@State(Scope.Thread)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(1)
public class CodecBench {
    private WriteData message;
    private byte[] frame;

    @Setup public void setup() {
        byte[] data = new byte[Codec.MAX_DATA_BYTES];
        new SplittableRandom(1).nextBytes(data);
        List<ServerRef> chain = List.of(new ServerRef("cs2", new Address("127.0.0.1", 7202)), new ServerRef("cs3", new Address("127.0.0.1", 7203)));
        message = new WriteData(1, 42, 7, 0, data, chain);
        frame = Codec.encode(message);
    }

    @Benchmark public byte[] encodeWriteData1MiB() { return Codec.encode(message); }

    @Benchmark public Message decodeWriteData1MiB() throws CodecException { return Codec.decode(frame); }
}
