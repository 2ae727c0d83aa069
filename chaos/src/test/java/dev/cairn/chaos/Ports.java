package dev.cairn.chaos;

import dev.cairn.core.real.LoopbackPorts;
import java.util.ArrayList;
import java.util.List;

/** Distinct free loopback ports for a test cluster (see {@link LoopbackPorts} for why not port 0). */
public final class Ports {
    private Ports() {}

    public static List<Integer> free(int n) throws Exception {
        List<Integer> ports = new ArrayList<>();
        for (int i = 0; i < n; i++) ports.add(LoopbackPorts.take());
        return ports;
    }
}
