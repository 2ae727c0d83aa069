package dev.cairn.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.cairn.core.env.Address;
import dev.cairn.core.proto.Types.ChunkLocation;
import dev.cairn.core.proto.Types.ServerRef;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** Which copy a read asks first: healthy copies take turns, slow ones stay last, every copy is asked once. */
class FileReaderSpreadTest {
    private static ChunkLocation location(int index, int copies, int fast) {
        List<ServerRef> servers = new ArrayList<>();
        List<Integer> parts = new ArrayList<>();
        for (int i = 0; i < copies; i++) {
            servers.add(new ServerRef("cs" + i, new Address("127.0.0.1", 9000 + i)));
            parts.add(0);
        }
        return new ChunkLocation(index, 7, 1, servers, parts, fast);
    }

    @Test void everyCopyIsAskedOnceWithTheSlowOnesLast() {
        for (int copies = 1; copies <= 5; copies++) {
            for (int fast = 0; fast <= copies; fast++) {
                for (int index = 0; index < 12; index++) {
                    ChunkLocation loc = location(index, copies, fast);
                    Set<Integer> asked = new HashSet<>();
                    for (int attempt = 0; attempt < copies; attempt++) {
                        int c = FileReader.copyToAsk(loc, attempt);
                        assertTrue(asked.add(c), "copy " + c + " asked twice");
                        assertEquals(attempt < fast, c < fast, "a slow copy asked before a healthy one (attempt " + attempt + ")");
                    }
                }
            }
        }
    }

    @Test void theChunksOfAFileStartAtEachHealthyCopyInTurn() {
        int[] first = new int[3];
        for (int index = 0; index < 64; index++) first[FileReader.copyToAsk(location(index, 3, 2), 0)]++; // one copy on a slow disk
        assertEquals(32, first[0]);
        assertEquals(32, first[1]);
        assertEquals(0, first[2], "the copy on a slow disk was asked first");
    }
}
