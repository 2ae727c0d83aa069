package dev.cairn.core.real;

import dev.cairn.core.async.Promise;
import dev.cairn.core.env.KvBatch;
import dev.cairn.core.env.KvStore;
import dev.cairn.core.env.Scheduler;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.concurrent.ExecutorService;
import java.util.function.BiPredicate;
import org.rocksdb.Options;
import org.rocksdb.RocksDB;
import org.rocksdb.RocksDBException;
import org.rocksdb.RocksIterator;
import org.rocksdb.WriteBatch;
import org.rocksdb.WriteOptions;

/**
 * The key-value store on RocksDB. A batch is written to the memtable and the WAL at once (visible to
 * reads); a synced batch then waits for a WAL fsync on the I/O pool, which also covers every earlier
 * batch, and completes on the node's loop.
 *
 * <p>Group commit: one WAL fsync at a time; the synced batches written while it runs wait for the next one,
 * which covers them all (each still hears back only once it is durable). One fsync per batch, run back to
 * back on the single I/O thread, made it the master's bottleneck when many clients create files at once.
 */
final class RocksKv implements KvStore, AutoCloseable {
    static { RocksDB.loadLibrary(); }

    /**
     * One memtable's size. RocksDB's default (64 MiB, two of them) lets a busy master hold up to 128 MiB of applied
     * changes in memory before flushing them to a table; nothing needs them there (the WAL, and for a group the Raft
     * log, make them durable), so a small memtable flushes sooner and keeps every node's resident memory small.
     */
    static final long WRITE_BUFFER_BYTES = 16L << 20;
    static final int MAX_WRITE_BUFFERS = 2;
    /** Uncompressed table blocks kept for reads; the rest of a store is read through the kernel's page cache. */
    static final long BLOCK_CACHE_BYTES = 16L << 20;
    /** RocksDB's own info logs kept in the store's directory (its default keeps a thousand, one per open). */
    static final int KEEP_INFO_LOGS = 4;
    static final long MAX_INFO_LOG_BYTES = 16L << 20;

    private final RocksDB db;
    private final Options options;
    private final org.rocksdb.Cache blockCache = new org.rocksdb.LRUCache(BLOCK_CACHE_BYTES);
    private final WriteOptions noSync = new WriteOptions().setSync(false);
    private final ExecutorService io;
    private final Scheduler loop;
    /** Synced batches written since the running fsync began (loop thread only): the next fsync's. */
    private java.util.List<Promise<Void>> awaitingSync = new java.util.ArrayList<>();
    private boolean syncing;
    /** WAL fsyncs done (tests: many synced batches at once share few). */
    private final java.util.concurrent.atomic.AtomicLong walSyncs = new java.util.concurrent.atomic.AtomicLong();

    long walSyncs() { return walSyncs.get(); }

    RocksKv(Path dir, ExecutorService io, Scheduler loop) {
        this.io = io;
        this.loop = loop;
        this.options = new Options().setCreateIfMissing(true)
                .setWriteBufferSize(WRITE_BUFFER_BYTES).setMaxWriteBufferNumber(MAX_WRITE_BUFFERS)
                .setTableFormatConfig(new org.rocksdb.BlockBasedTableConfig().setBlockCache(blockCache))
                .setKeepLogFileNum(KEEP_INFO_LOGS).setMaxLogFileSize(MAX_INFO_LOG_BYTES);
        try {
            DurableDirectories.create(dir);
            this.db = RocksDB.open(options, dir.toString());
        } catch (Exception e) {
            throw new IllegalStateException("cannot open metadata store in " + dir + ": " + e.getMessage(), e);
        }
    }

    @Override public byte[] get(byte[] key) {
        try {
            return db.get(key);
        } catch (RocksDBException e) {
            throw new IllegalStateException("metadata read failed: " + e.getMessage(), e);
        }
    }

    @Override public void scanFrom(byte[] prefix, byte[] from, BiPredicate<byte[], byte[]> visitor) {
        try (RocksIterator it = db.newIterator()) {
            for (it.seek(from); it.isValid(); it.next()) {
                byte[] k = it.key();
                if (!KvStore.hasPrefix(k, prefix)) break;
                if (!visitor.test(k, it.value())) break;
            }
        }
    }

    @Override public Promise<Void> write(KvBatch batch, boolean sync) {
        try (WriteBatch wb = new WriteBatch()) {
            for (KvBatch.Op op : batch.ops()) {
                if (op.value() == null) wb.delete(op.key()); else wb.put(op.key(), op.value());
            }
            db.write(noSync, wb);
        } catch (RocksDBException e) {
            return Promise.failed(new IllegalStateException("metadata write failed: " + e.getMessage(), e));
        }
        if (!sync) return Promise.completed(null);
        Promise<Void> p = new Promise<>();
        awaitingSync.add(p);
        if (!syncing) syncWal();
        return p;
    }

    /** Fsyncs the WAL for every batch waiting (all written before it starts); then the next group, if any. */
    private void syncWal() {
        assert !syncing && !awaitingSync.isEmpty();
        syncing = true;
        java.util.List<Promise<Void>> group = awaitingSync;
        awaitingSync = new java.util.ArrayList<>();
        io.execute(() -> {
            RocksDBException failure = null;
            try {
                db.flushWal(true);
                walSyncs.incrementAndGet();
            } catch (RocksDBException e) {
                failure = e;
            }
            RocksDBException f = failure;
            loop.execute(() -> {
                // still "syncing" while the group hears back: what its callbacks write joins the next group
                try {
                    for (Promise<Void> p : group) {
                        if (f == null) p.complete(null);
                        else p.fail(new IllegalStateException("metadata fsync failed: " + f.getMessage(), f));
                    }
                } finally {
                    syncing = false;
                    if (!awaitingSync.isEmpty()) syncWal();
                }
            });
        });
    }

    /** A RocksDB snapshot: consistent and cheap (no copy), read from any thread; released on close. */
    @Override public View view() {
        org.rocksdb.Snapshot snap = db.getSnapshot();
        org.rocksdb.ReadOptions ro = new org.rocksdb.ReadOptions().setSnapshot(snap);
        return new View() {
            private boolean closed;

            @Override public synchronized void scan(BiPredicate<byte[], byte[]> visitor) {
                if (closed) throw new IllegalStateException("the view is closed");
                try (RocksIterator it = db.newIterator(ro)) {
                    for (it.seekToFirst(); it.isValid(); it.next()) {
                        if (!visitor.test(it.key(), it.value())) return;
                    }
                }
            }

            @Override public synchronized void close() {
                if (closed) return;
                closed = true;
                ro.close();
                db.releaseSnapshot(snap);
            }
        };
    }

    @Override public void close() {
        db.close();
        noSync.close();
        options.close();
        blockCache.close();
    }
}
