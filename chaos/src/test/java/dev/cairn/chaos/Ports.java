package dev.cairn.chaos;

import java.net.InetAddress;
import java.net.ServerSocket;
import java.util.ArrayList;
import java.util.List;

/** Distinct free loopback ports for a test cluster (all held open together while choosing, so none repeats). */
public final class Ports {
    private Ports() {}

    public static List<Integer> free(int n) throws Exception {
        List<ServerSocket> held = new ArrayList<>();
        List<Integer> ports = new ArrayList<>();
        try {
            for (int i = 0; i < n; i++) {
                ServerSocket s = new ServerSocket(0, 1, InetAddress.getByName("127.0.0.1"));
                held.add(s);
                ports.add(s.getLocalPort());
            }
        } finally {
            for (ServerSocket s : held) s.close();
        }
        return ports;
    }
}
