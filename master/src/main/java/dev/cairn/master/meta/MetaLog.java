package dev.cairn.master.meta;

import dev.cairn.core.async.Promise;

/**
 * The seam between the master and its replicated log. A submitted command is applied to the state
 * machine and its promise completes only once the command is durable in the log (committed); until then
 * no reply that depends on it may leave the master. The single-master implementation is
 * {@link LocalMetaLog}; the Apache Ratis group implements the same contract.
 */
public interface MetaLog {
    <R> Promise<R> submit(MetaCommand<R> command);

    /**
     * True while a command that deletes chunk {@code chunkId}'s record is applied but not yet durable: the
     * namespace no longer shows the chunk, yet a power loss could bring it back, so nothing may be done to
     * its copies on the strength of its absence.
     */
    boolean freeing(long chunkId);

    /**
     * True while a command that changes inode {@code inode}'s record is applied but not yet durable: its new
     * class, size or chunks may still be undone, so the planner keeps off its chunks until then.
     */
    boolean changing(long inode);

    /**
     * Completes once a read answered from this master's state after it sees everything committed before the call:
     * at once for a single master (its state is the log); in a group, once the replica has shown it still leads
     * ({@link ReplicatedLog#confirmLeadership}). Fails {@code NOT_LEADER} otherwise: a deposed leader that has not
     * noticed must not answer from a state the new leader has moved past.
     */
    default Promise<Void> readBarrier() { return Promise.completed(null); }
}
