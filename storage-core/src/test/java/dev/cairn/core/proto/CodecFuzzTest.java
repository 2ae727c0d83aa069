package dev.cairn.core.proto;

import com.code_intelligence.jazzer.junit.FuzzTest;
import java.util.Arrays;

/**
 * Coverage-guided fuzzing of the wire codec every node decodes its peers' frames with (Jazzer). In {@code ./cairn test}
 * the inputs under {@code CodecFuzzTestInputs/} (a corpus kept in the repository) run as regression cases; {@code
 * ./cairn fuzz codec --minutes N} explores from them. The property: a frame decodes to a message or is refused with
 * {@link CodecException}, nothing else escapes, and a frame accepted is exactly its message's encoding.
 */
public class CodecFuzzTest {
    @FuzzTest(maxDuration = "5m") void wireFrame(byte[] frame) { fuzzerTestOneInput(frame); }

    /** The target, as Jazzer's command-line driver calls it. */
    public static void fuzzerTestOneInput(byte[] frame) {
        Message m;
        try {
            m = Codec.decode(frame);
        } catch (CodecException refused) {
            return;
        }
        byte[] encoded = Codec.encode(m);
        if (!Arrays.equals(encoded, frame)) {
            throw new AssertionError("a frame accepted as " + m.getClass().getSimpleName() + " is not its encoding: two frames mean one message");
        }
    }
}
