package dev.cairn.sim;

import com.code_intelligence.jazzer.junit.FuzzTest;
import dev.cairn.core.async.Promise;
import dev.cairn.core.env.Address;
import dev.cairn.nfs.NfsGateway;
import dev.cairn.nfs.client.Nfs4Client;
import dev.cairn.nfs.v4.CompoundState;
import dev.cairn.nfs.xdr.XdrDecoder;
import dev.cairn.sim.runtime.SimHost;
import dev.cairn.sim.runtime.SimWorld;
import dev.cairn.sim.runtime.Simulation;
import java.util.Arrays;

/**
 * Coverage-guided fuzzing (Jazzer) of the NFS gateway's file operations with a cluster behind them: each input is
 * up to 16 NFSv4.1 operations (numbers and arguments as they come) run in a session, after PUTFH of a directory
 * holding a file of 4 KiB (or of that file), on a fresh simulated cluster (a master, three chunkservers, the
 * gateway). OPEN, WRITE, READ, LOCK, SETATTR, RENAME, xattrs and the rest then meet real state and a real data path.
 * The properties: every call is answered, with a well-formed reply to its xid; no node throws an unexpected exception
 * (the simulator's "crash" violations); and the gateway still serves a new client afterwards. The corpus under
 * {@code NfsFileOpsFuzzTestInputs/} replays in {@code ./cairn test}; {@code ./cairn fuzz files --minutes N} explores
 * (about 15 inputs a second: each builds its cluster).
 */
public class NfsFileOpsFuzzTest {
    static final long SECOND = 1_000_000_000L;
    static final int MAX_OPS = 16;

    @FuzzTest(maxDuration = "5m") void operationsOnFiles(byte[] input) { fuzzerTestOneInput(input); }

    public static void fuzzerTestOneInput(byte[] input) {
        if (input.length < 2) return;
        Simulation sim = new Simulation(21);
        SimWorld world = new SimWorld(sim, Boolean.getBoolean("cairn.sim.verbose"));
        SimCluster cluster = new SimCluster(world, 3);
        cluster.startAll();
        sim.runUntil(sim.now() + 2 * SECOND);
        SimHost gateway = world.addHost("nfs", new Address("nfs", 2049), 0, env -> new NfsGateway(env, new Address("master", SimCluster.MASTER_PORT)));
        gateway.start();
        sim.runUntil(sim.now() + SECOND);

        Nfs4Client c = client(sim, gateway, "fuzz");
        byte[] root = await(sim, gateway, () -> c.lookup("/"));
        byte[] dir = await(sim, gateway, () -> c.mkdir(root, "d"));
        Nfs4Client.OpenFile f = await(sim, gateway, () -> c.open(dir, "f", true));
        await(sim, gateway, () -> c.write(f, 0, new byte[4096], Nfs4Client.FILE_SYNC));

        int count = 1 + (input[0] & (MAX_OPS - 1));
        byte[] on = (input[1] & 1) == 0 ? dir : f.fh();
        // XDR comes in 4-byte units: the fuzzer's bytes padded with zeros to the next one
        byte[] ops = Arrays.copyOfRange(input, 2, 2 + ((input.length - 2 + 3) & ~3));
        try {
            int status = sim.await(gateway, () -> c.statusOf(b -> b.putFh(on).raw(count, ops)), 120 * SECOND);
            if (Boolean.getBoolean("cairn.fuzz.verbose")) System.out.println("COMPOUND of " + count + " operations: status " + status);
        } catch (IllegalStateException e) {
            if (String.valueOf(e.getMessage()).contains("did not finish")) throw new AssertionError("a COMPOUND left unanswered; the simulator saw: " + sim.violations(), e);
            // else this client could not read a result past an operation it does not know: not the server's doing
        } catch (RuntimeException e) {
            // likewise (an XDR error reading results)
            if (Boolean.getBoolean("cairn.fuzz.verbose")) System.out.println("COMPOUND of " + count + " operations: " + e);
        }
        // the gateway still serves: a new client mounts and lists the directory
        Nfs4Client other = client(sim, gateway, "after");
        await(sim, gateway, () -> other.lookup("/"));
        if (!sim.violations().isEmpty()) throw new AssertionError("the simulator saw: " + sim.violations());
    }

    /** A client whose every reply is checked: a REPLY to the call's xid, 4-aligned (the checks hold whatever the call). */
    private static Nfs4Client client(Simulation sim, SimHost gateway, String owner) {
        CompoundState.Connection conn = new CompoundState.Connection(owner.hashCode(), "127.0.0.1");
        Nfs4Client c = new Nfs4Client(record -> {
            Promise<byte[]> p = ((NfsGateway) gateway.node()).service().handle(record, conn);
            return p.map(reply -> {
                if (reply == null) throw new AssertionError("a call with a header left unanswered");
                XdrDecoder d = new XdrDecoder(reply);
                if (d.readInt() != new XdrDecoder(record, 0, 4).readInt() || d.readInt() != 1 || reply.length % 4 != 0) {
                    throw new AssertionError("a malformed reply of " + reply.length + " bytes");
                }
                return reply;
            });
        }, 0, 0, owner);
        await(sim, gateway, c::connect);
        return c;
    }

    private static <T> T await(Simulation sim, SimHost host, java.util.function.Supplier<Promise<T>> op) {
        return sim.await(host, op, 120 * SECOND);
    }
}
