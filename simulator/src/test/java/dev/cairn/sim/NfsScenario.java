package dev.cairn.sim;

import dev.cairn.core.async.Promise;
import dev.cairn.core.env.Address;
import dev.cairn.nfs.NfsGateway;
import dev.cairn.nfs.client.Nfs4Client;
import dev.cairn.nfs.v4.CompoundState;
import dev.cairn.nfs.v4.Nfs4Status;
import dev.cairn.sim.runtime.SimHost;
import java.util.function.Supplier;

/** A simulated cluster with an NFS gateway in front, driven by {@link Nfs4Client}s whose records go straight to its service. */
abstract class NfsScenario extends ClusterScenario {
    SimHost gateway;

    /** A master, {@code chunkservers} chunkservers and the gateway, up. */
    void startWithGateway(int chunkservers) {
        cluster(chunkservers);
        gateway = world.addHost("nfs", new Address("nfs", 2049), 0, env -> new NfsGateway(env, new Address("master", SimCluster.MASTER_PORT)));
        gateway.start();
        sim.runUntil(sim.now() + SECOND);
    }

    /** A client calling as root (the export's root directory is root's, mode 0755). */
    Nfs4Client client(String owner) { return client(owner, 0); }

    /** A client whose calls carry AUTH_SYS uid {@code uid} (gid the same), connected. */
    Nfs4Client client(String owner, int uid) {
        CompoundState.Connection conn = new CompoundState.Connection(owner.hashCode(), "127.0.0.1");
        Nfs4Client c = new Nfs4Client(record -> {
            if (!gateway.isUp()) return Promise.failed(new IllegalStateException("the gateway is down"));
            return ((NfsGateway) gateway.node()).service().handle(record, conn);
        }, uid, uid, owner);
        nfs(c::connect);
        return c;
    }

    <T> T nfs(Supplier<Promise<T>> op) { return sim.await(gateway, op, 600 * SECOND); }

    /** The NFS status {@code op} ends with: NFS4_OK, or the error it failed with. */
    int status(Supplier<Promise<?>> op) {
        try {
            sim.await(gateway, op::get, 600 * SECOND);
            return Nfs4Status.NFS4_OK;
        } catch (Nfs4Client.NfsException e) {
            return e.status;
        }
    }
}
