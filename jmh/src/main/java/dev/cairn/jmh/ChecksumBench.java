package dev.cairn.jmh;

import dev.cairn.core.chunk.ChunkFormat;
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

/**
 * CRC32C of one 64 KiB block, as the chunkserver computes on every write and verifies on every read; and the
 * HMAC-SHA256 of the same block, as a node of a keyed cluster signs (and its peer checks) every frame it sends.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(1)
public class ChecksumBench {
    private byte[] block;
    private javax.crypto.Mac mac;

    @Setup public void setup() throws Exception {
        block = new byte[ChunkFormat.BLOCK_SIZE];
        new SplittableRandom(1).nextBytes(block);
        mac = javax.crypto.Mac.getInstance("HmacSHA256");
        mac.init(new javax.crypto.spec.SecretKeySpec(new byte[32], "HmacSHA256"));
    }

    @Benchmark public byte[] hmacSha256Block() {
        mac.update(block);
        return mac.doFinal();
    }

    @Benchmark public int crc32cBlock() {
        return ChunkFormat.crc(block, 0, block.length);
    }
}
