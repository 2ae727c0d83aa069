package dev.cairn.nfs.v4;

import dev.cairn.nfs.rpc.Credentials;
import dev.cairn.nfs.v4.state.Client;
import dev.cairn.nfs.v4.state.Session;
import dev.cairn.nfs.v4.state.Slot;

/** What the operations of one COMPOUND share: the caller, the current and saved file handles, the session. */
public final class CompoundState {
    public final Nfs4Server server;
    public final Credentials credentials;
    public final int minorVersion;
    /** The connection the COMPOUND came on (for BIND_CONN_TO_SESSION and the client address). */
    public final Connection connection;
    /** The export rule the client's address falls under; null if none (no file handle is then given). */
    public final dev.cairn.nfs.Exports.Rule export;
    public FileHandle current;
    public FileHandle saved;
    /** 4.1's current stateid (RFC 8881 §16.2.3.1.2): set by OPEN and friends, named by the special stateid (1, zeros). */
    public dev.cairn.nfs.v4.state.StateTable.StateId currentStateId;
    /** The current stateid SAVEFH kept with the saved handle, for RESTOREFH. */
    public dev.cairn.nfs.v4.state.StateTable.StateId savedStateId;
    public Session session;
    public Slot slot;
    /** Whether the reply goes into the slot's cache (SEQUENCE's sa_cachethis; we cache every reply that fits). */
    public boolean cacheThis;
    /** 4.0: the owner sequence numbers the running operation took (settled with its outcome). */
    public final java.util.List<dev.cairn.nfs.v4.state.OwnerSequences.Ticket> sequenced = new java.util.ArrayList<>(2);
    /** Set by SEQUENCE for a retransmission: the cached reply that answers the whole COMPOUND. */
    public byte[] replay;
    /** The request's size (its RPC record) and its operation count, for the session's limits. */
    public int requestBytes;
    public int operationCount;
    /** The index of the operation running. */
    public int opIndex;
    /** Bytes of the reply other than the operations' results (RPC and COMPOUND headers). */
    public int replyOverhead;
    /** Set by SEQUENCE: the largest reply the session may send (and cache, if the client asked it to). */
    public int replyLimit = Integer.MAX_VALUE;

    CompoundState(Nfs4Server server, Credentials credentials, int minorVersion, Connection connection, dev.cairn.nfs.Exports.Rule export) {
        this.export = export;
        this.server = server;
        this.credentials = credentials;
        this.minorVersion = minorVersion;
        this.connection = connection;
    }

    /** The client of the session, or null outside one. */
    public Client client() { return session == null ? null : session.client(); }

    /** An NFS connection's identity and peer. */
    public record Connection(long id, String peerAddress) {}
}
