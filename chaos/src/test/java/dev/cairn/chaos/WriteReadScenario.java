package dev.cairn.chaos;

import dev.cairn.client.CairnClient;
import dev.cairn.client.FileWriter;
import dev.cairn.core.async.Promise;
import dev.cairn.core.proto.CairnException;
import dev.cairn.core.proto.Status;
import dev.cairn.core.proto.StorageClass;
import dev.cairn.core.proto.Types.DirEntry;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.SplittableRandom;

/**
 * One client scenario written once against the client library and run unchanged on real sockets and
 * disks and in the simulator: directories, a multi-chunk file written in uneven pieces, an empty file,
 * listing, read-back, removal. Returns the list of what went wrong (empty when all is well).
 */
final class WriteReadScenario {
    static final int CHUNK = 128 << 10;
    static final int SIZE = 5 * CHUNK + 12345;

    private WriteReadScenario() {}

    static byte[] content() {
        byte[] b = new byte[SIZE];
        new SplittableRandom(2026).nextBytes(b);
        return b;
    }

    static Promise<List<String>> run(CairnClient c) {
        List<String> problems = new ArrayList<>();
        byte[] data = content();
        return c.mkdir("/s")
                .flatMap(d -> c.create("/s/a", CHUNK, StorageClass.replicated(3)))
                .flatMap(attr -> {
                    FileWriter w = c.writer(attr);
                    return writeIn(w, data, 0, 1).flatMap(v -> w.close());
                })
                .flatMap(v -> c.create("/s/empty", CHUNK, StorageClass.DEFAULT))
                .flatMap(attr -> c.writer(attr).close())
                .flatMap(v -> c.list("/s"))
                .flatMap(entries -> {
                    List<String> names = entries.stream().map(DirEntry::name).toList();
                    if (!names.equals(List.of("a", "empty"))) problems.add("listing is " + names);
                    for (DirEntry e : entries) {
                        long want = e.name().equals("a") ? SIZE : 0;
                        if (e.attr().size() != want) problems.add(e.name() + " has size " + e.attr().size());
                    }
                    return c.lookup("/s/a");
                })
                .flatMap(attr -> c.reader(attr).readAll())
                .flatMap(back -> {
                    if (!Arrays.equals(back, data)) problems.add("read-back differs at " + Arrays.mismatch(back, data));
                    return c.lookup("/s/a").flatMap(attr -> c.reader(attr).read(SIZE - 10, 100));
                })
                .flatMap(tail -> {
                    if (!Arrays.equals(tail, Arrays.copyOfRange(data, SIZE - 10, SIZE))) problems.add("a read past the end returned " + tail.length + " bytes");
                    return Promise.completed(null);
                })
                .flatMap(v -> c.remove("/s/a"))
                .flatMap(v -> c.lookup("/s/a").then((a, e) -> {
                    if (e == null || CairnException.statusOf(e) != Status.NOT_FOUND) problems.add("removed file still found");
                    return c.lookup("/nope");
                }))
                .then((v, e) -> {
                    if (e == null || CairnException.statusOf(e) != Status.NOT_FOUND) problems.add("lookup of a missing path: " + e);
                    return Promise.completed(problems);
                });
    }

    /** Writes in growing uneven pieces (1, 3, 9, ... bytes, capped) so pieces straddle blocks and chunks. */
    private static Promise<Void> writeIn(FileWriter w, byte[] data, int off, int piece) {
        if (off >= data.length) return Promise.completed(null);
        int n = Math.min(data.length - off, piece);
        return w.write(data, off, n).flatMap(v -> writeIn(w, data, off + n, Math.min(piece * 3 + 1, 300_000)));
    }
}
