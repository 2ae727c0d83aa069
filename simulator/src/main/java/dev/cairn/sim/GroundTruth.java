package dev.cairn.sim;

import dev.cairn.core.chunk.ChunkFormat;
import dev.cairn.core.chunk.ChunkFormat.Header;
import dev.cairn.core.proto.CodecException;
import dev.cairn.sim.runtime.SimDisk;
import dev.cairn.sim.runtime.SimHost;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * Reads chunk copies straight off the simulated disks, bypassing the system: what the checkers compare
 * the system's claims against. A copy's header is the valid slot with the highest sequence number, as a
 * chunkserver reads it at start-up; {@code intact} is true when every block matches its checksum.
 */
final class GroundTruth {
    record Copy(String host, String disk, long chunkId, long version, int part, long length, boolean intact, String note) {}

    private GroundTruth() {}

    /** Every chunk file on the host's disks (dead disks excluded: nothing can be read from them). */
    static List<Copy> copies(SimHost h) {
        List<Copy> out = new ArrayList<>();
        for (String dn : h.diskNames()) {
            SimDisk d = h.diskOrNull(dn);
            if (d == null || d.isDead()) continue;
            for (String file : d.files()) {
                long id = ChunkFormat.chunkIdOf(file);
                if (id < 0) continue;
                out.add(read(h.name(), dn, id, d.peek(file)));
            }
        }
        return out;
    }

    /** Chunk ids with a file on one disk of a host (for recording what a fault destroyed). */
    static List<Long> chunkIds(SimHost h, String disk) {
        List<Long> out = new ArrayList<>();
        SimDisk d = h.diskOrNull(disk);
        if (d == null) return out;
        for (String file : d.files()) {
            long id = ChunkFormat.chunkIdOf(file);
            if (id >= 0) out.add(id);
        }
        return out;
    }

    /** A copy with version -1 has no valid header (a chunk never synced, or a torn one). */
    static Copy read(String host, String disk, long id, byte[] bytes) {
        Header best = null;
        for (int slot = 0; slot < 2; slot++) {
            int off = (int) ChunkFormat.slotOffset(slot);
            if (bytes.length < off + ChunkFormat.SLOT_SIZE) continue;
            try {
                Header h = ChunkFormat.decodeHeader(Arrays.copyOfRange(bytes, off, off + ChunkFormat.SLOT_SIZE), id);
                if (best == null || h.seq() > best.seq()) best = h;
            } catch (CodecException e) {
                // blank or torn slot: the other one decides
            }
        }
        if (best == null) return new Copy(host, disk, id, -1, -1, 0, false, "no valid header");
        boolean intact = best.length() == 0 || bytes.length >= ChunkFormat.DATA_OFFSET + best.length(); // an empty chunk may end after its header
        String note = intact ? "" : "file is " + bytes.length + " bytes, header says " + best.length() + " of data";
        for (int b = 0; intact && b < best.crcs().length; b++) {
            long from = (long) b * ChunkFormat.BLOCK_SIZE;
            int n = (int) Math.min(ChunkFormat.BLOCK_SIZE, best.length() - from);
            intact = ChunkFormat.crc(bytes, (int) (ChunkFormat.DATA_OFFSET + from), n) == best.crcs()[b];
            if (!intact) note = "block " + b + " of " + best.crcs().length + " fails its checksum (header seq " + best.seq() + ")";
        }
        return new Copy(host, disk, id, best.version(), best.part(), best.length(), intact, note);
    }
}
