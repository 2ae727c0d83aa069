package dev.cairn.core.real;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.InetAddress;
import java.net.ServerSocket;
import java.util.HashSet;
import java.util.Set;
import org.junit.jupiter.api.Test;

class LoopbackPortsTest {
    @Test void portsAreDistinctBindableAndBelowTheEphemeralRange() throws Exception {
        int low = LoopbackPorts.ephemeralLow();
        Set<Integer> seen = new HashSet<>();
        for (int i = 0; i < 200; i++) {
            int p = LoopbackPorts.take(i % 2 == 0 ? 0 : 1000);
            assertTrue(seen.add(p), "port " + p + " handed out twice");
            if (i % 2 == 1) assertTrue(seen.add(p + 1000), "partner " + (p + 1000) + " handed out twice");
            if (low > LoopbackPorts.LOWEST + 2000) assertTrue(p >= LoopbackPorts.LOWEST && p + (i % 2) * 1000 < low, "port " + p + " in the ephemeral range from " + low);
            try (ServerSocket s = new ServerSocket(p, 1, InetAddress.getByName("127.0.0.1"))) {
                assertEquals(p, s.getLocalPort());
            }
        }
    }
}
