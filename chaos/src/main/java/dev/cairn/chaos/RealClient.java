package dev.cairn.chaos;

import dev.cairn.client.CairnClient;
import dev.cairn.client.SequentialReader;
import dev.cairn.client.FileWriter;
import dev.cairn.core.async.Promise;
import dev.cairn.core.env.Address;
import dev.cairn.core.proto.CairnException;
import dev.cairn.core.proto.Codec;
import dev.cairn.core.proto.Status;
import dev.cairn.core.proto.StorageClass;
import dev.cairn.core.proto.Types.DirEntry;
import dev.cairn.core.proto.Types.FileAttr;
import dev.cairn.core.proto.Types.FileType;
import dev.cairn.core.real.ClusterKey;
import dev.cairn.core.real.RealRuntime;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Function;

/**
 * A blocking facade over a {@link CairnClient} node running on the real runtime, for the CLI and tests.
 * Each call runs on the client's event loop; the calling thread waits for the answer.
 */
public final class RealClient implements AutoCloseable {
    /** Longest a single call may take before the caller gives up. */
    public static final long CALL_TIMEOUT_SECONDS = 300;
    /** Where a client looks for the cluster key when told nowhere else: the key {@code cairn up} makes by default. */
    public static final String DEFAULT_KEY_FILE = "cairn-data/" + ClusterKey.FILE_NAME;
    /** How often a waiting call looks whether the cluster refused this client's key. */
    static final long REFUSAL_CHECK_MILLIS = 200;
    /** Bytes read from or written to local files per step. */
    static final int IO_STEP = Codec.MAX_DATA_BYTES;

    private final RealRuntime runtime;
    private final boolean ownsRuntime;
    private final RealRuntime.Handle<CairnClient> handle;
    private final long callTimeoutSeconds;

    private RealClient(RealRuntime runtime, boolean owns, List<Address> masters, long callTimeoutSeconds) {
        this.runtime = runtime;
        this.ownsRuntime = owns;
        this.callTimeoutSeconds = callTimeoutSeconds;
        // a client session has no volumes and no store: its data directory is never touched
        this.handle = runtime.start("client", Path.of(System.getProperty("java.io.tmpdir")), null, List.of(),
                env -> new CairnClient(env, masters));
    }

    /** A client with its own runtime, talking to the master at {@code master}. */
    public static RealClient connect(Address master) { return connect(List.of(master)); }

    /** A client with its own runtime, talking to whichever master of the group at {@code masters} leads. */
    public static RealClient connect(List<Address> masters) {
        return new RealClient(new RealRuntime(), true, masters, CALL_TIMEOUT_SECONDS);
    }

    /** As {@link #connect(Address)}, giving up on any one call after {@code callTimeoutSeconds}. */
    public static RealClient connect(Address master, long callTimeoutSeconds) {
        return new RealClient(new RealRuntime(), true, List.of(master), callTimeoutSeconds);
    }

    /** As {@link #connect(List)}, giving up on any one call after {@code callTimeoutSeconds}. */
    public static RealClient connect(List<Address> masters, long callTimeoutSeconds) {
        return connect(masters, callTimeoutSeconds, null);
    }

    /** As above, proving membership with {@code key} (null: a client of an open cluster). */
    public static RealClient connect(List<Address> masters, long callTimeoutSeconds, ClusterKey key) {
        return new RealClient(key == null ? new RealRuntime() : new RealRuntime(key), true, masters, callTimeoutSeconds);
    }

    /** A client on an existing runtime (tests, the local cluster). */
    public static RealClient on(RealRuntime runtime, Address master) {
        return new RealClient(runtime, false, List.of(master), CALL_TIMEOUT_SECONDS);
    }

    /** The masters the client knows (those it was given, and leaders they named). */
    public List<Address> masters() { return await(c -> Promise.completed(c.masters())); }

    public <T> T await(Function<CairnClient, Promise<T>> call) {
        CompletableFuture<T> f = new CompletableFuture<>();
        handle.run(c -> {
            Promise<T> p;
            try {
                p = call.apply(c);
            } catch (RuntimeException | Error e) {
                f.completeExceptionally(e); // thrown before a promise existed: the caller hears it, not a timeout
                return;
            }
            p.onComplete((v, e) -> {
                if (e != null) f.completeExceptionally(e); else f.complete(v);
            });
        });
        try {
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(callTimeoutSeconds);
            while (true) {
                try {
                    return f.get(Math.min(REFUSAL_CHECK_MILLIS, Math.max(1, (deadline - System.nanoTime()) / 1_000_000)), TimeUnit.MILLISECONDS);
                } catch (TimeoutException e) {
                    // a handshake that settled this client is not of the cluster: no retry will change it
                    throwIfRefused();
                    if (System.nanoTime() - deadline >= 0) throw e;
                }
            }
        } catch (ExecutionException e) {
            if (e.getCause() instanceof CairnException c && c.status() == Status.UNAVAILABLE) throwIfRefused();
            if (e.getCause() instanceof RuntimeException r) throw r;
            throw new IllegalStateException(e.getCause());
        } catch (TimeoutException e) {
            throw new CairnException(Status.UNAVAILABLE, "no answer within " + callTimeoutSeconds + "s");
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new CairnException(Status.UNAVAILABLE, "interrupted");
        }
    }

    /** Says why, when a node of the cluster refused this client's key (or lack of one). */
    private void throwIfRefused() {
        String refused = handle.refusedBy();
        if (refused != null) throw new CairnException(Status.UNAVAILABLE, "refused: " + refused
                + " (the cluster key is read from --key-file, else $CAIRN_KEY_FILE, else " + DEFAULT_KEY_FILE + ")");
    }

    public FileAttr lookup(String path) { return await(c -> c.lookup(path)); }

    public FileAttr mkdir(String path) { return await(c -> c.mkdir(path)); }

    public List<DirEntry> list(String path) { return await(c -> c.list(path)); }

    public void remove(String path) { await(c -> c.remove(path)); }

    /**
     * Creates {@code path} and streams {@code in} into it; returns only when it is durable on every copy. A put that
     * fails removes the file it made (the master frees its chunks), so no short file is left to pass for a copy and
     * a retry does not meet "already exists". A put killed outright cannot; its file shows the length committed.
     */
    public long put(InputStream in, String path, int chunkSize, StorageClass storageClass) throws IOException {
        FileAttr attr = await(c -> c.create(path, chunkSize, storageClass));
        try {
            FileWriter w = await(c -> Promise.completed(c.writer(attr)));
            byte[] buf = new byte[IO_STEP];
            long total = 0;
            for (int n; (n = in.readNBytes(buf, 0, buf.length)) > 0; ) {
                byte[] piece = Arrays.copyOf(buf, n);
                await(c -> w.write(piece));
                total += n;
            }
            await(c -> w.close());
            return total;
        } catch (IOException | RuntimeException e) {
            discard(path, attr.inode(), e);
            throw e;
        }
    }

    /** Removes the file a failed put made, if the name still holds it (best effort: a failure is added to {@code cause}). */
    private void discard(String path, long inode, Exception cause) {
        try {
            if (lookup(path).inode() == inode) remove(path);
        } catch (RuntimeException e) {
            cause.addSuppressed(e);
        }
    }

    /** Streams the file at {@code path} into {@code out}; returns the byte count. */
    public long get(String path, OutputStream out) throws IOException {
        FileAttr attr = lookup(path);
        if (attr.type() != FileType.FILE) throw new CairnException(Status.IS_DIR, path);
        // reads ahead while this thread writes out what came (bounded: SequentialReader.WINDOW_BYTES)
        SequentialReader r = await(c -> Promise.completed(new SequentialReader(c.reader(attr), attr.size())));
        long off = 0;
        while (off < attr.size()) {
            byte[] b = await(c -> r.next());
            if (b.length == 0) throw new CairnException(Status.IO, "short read at " + off + " of " + attr.size());
            out.write(b);
            off += b.length;
        }
        return off;
    }

    @Override public void close() {
        if (ownsRuntime) runtime.close(); else runtime.stop(handle);
    }
}
