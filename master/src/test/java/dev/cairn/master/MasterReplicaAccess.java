package dev.cairn.master;

import dev.cairn.master.meta.ReplicaMetaLog;

/** Tests in other packages: a replica's metadata log. */
public final class MasterReplicaAccess {
    private MasterReplicaAccess() {}

    public static ReplicaMetaLog metaLog(MasterReplica r) { return r.metaLog(); }
}
