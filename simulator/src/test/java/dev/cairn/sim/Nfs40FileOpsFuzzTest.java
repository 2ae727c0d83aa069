package dev.cairn.sim;

import com.code_intelligence.jazzer.junit.FuzzTest;
import dev.cairn.core.env.Address;
import dev.cairn.nfs.NfsGateway;
import dev.cairn.nfs.v4.CompoundState;
import dev.cairn.nfs.v4.Op;
import dev.cairn.nfs.xdr.XdrDecoder;
import dev.cairn.nfs.xdr.XdrEncoder;
import dev.cairn.sim.runtime.SimHost;
import dev.cairn.sim.runtime.SimWorld;
import dev.cairn.sim.runtime.Simulation;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.function.Consumer;
import org.junit.jupiter.api.Test;

/**
 * Coverage-guided fuzzing (Jazzer) of the NFS gateway's NFSv4.0 state: no sessions, so every open and lock owner's
 * sequence ids, the reply cached for its replays, OPEN_CONFIRM, RENEW and RELEASE_LOCKOWNER are the server's to get
 * right against whatever a client sends. Each input is up to 16 NFSv4.0 operations (numbers and arguments as they
 * come) run after PUTFH of a directory holding a 4 KiB file (or of that file), on a fresh simulated cluster (a
 * master, three chunkservers, the gateway) where a 4.0 client has confirmed itself and holds a confirmed OPEN of the
 * file. The simulator is deterministic, so the client id, the open stateid and the handles are the same for every
 * input: the seeds ({@link #seeds}) use them, and the fuzzer can find them. The properties: every call is answered
 * with a well-formed reply to its xid; no node throws an unexpected exception (the simulator's "crash" violations);
 * the gateway still serves a new 4.0 client afterwards, and the file's acknowledged 4 KiB (FILE_SYNC) still read
 * back unless the input itself wrote to or truncated the file. The corpus under {@code Nfs40FileOpsFuzzTestInputs/}
 * replays in {@code ./cairn test}; {@code ./cairn fuzz files40 --minutes N} explores.
 */
public class Nfs40FileOpsFuzzTest {
    static final long SECOND = 1_000_000_000L;
    static final int MAX_OPS = 16;
    static final int FILE_BYTES = 4096;

    @FuzzTest(maxDuration = "5m") void operations40(byte[] input) { fuzzerTestOneInput(input); }

    /** The cluster, the gateway and what the 4.0 client set up before the input runs. */
    static final class Setup {
        final Simulation sim = new Simulation(21);
        final SimHost gateway;
        final Raw40 client;
        final long clientId;
        final byte[] dir, file, openStateid;
        /** The open owner's next seqid (after OPEN and OPEN_CONFIRM). */
        final int nextSeqid = 2;

        Setup() {
            SimWorld world = new SimWorld(sim, Boolean.getBoolean("cairn.sim.verbose"));
            SimCluster cluster = new SimCluster(world, 3);
            cluster.startAll();
            sim.runUntil(sim.now() + 2 * SECOND);
            gateway = world.addHost("nfs", new Address("nfs", 2049), 0, env -> new NfsGateway(env, new Address("master", SimCluster.MASTER_PORT)));
            gateway.start();
            sim.runUntil(sim.now() + SECOND);
            client = raw(1, 40_000);
            clientId = client.establish("fuzz40");
            int[] status = new int[1];
            XdrDecoder d = client.run(status, e -> {
                e.writeInt(Op.PUTROOTFH);
                e.writeInt(Op.CREATE).writeInt(2).writeString("d").writeInt(0).writeOpaque(new byte[0]); // NF4DIR, no attributes
                e.writeInt(Op.GETFH);
            }, 3);
            Raw40.check(status, "CREATE d");
            d.readInt(); d.readInt(); // PUTROOTFH OK
            d.readInt(); d.readInt(); // CREATE OK
            d.skip(4 + 8 + 8);
            d.skip(4 * d.readInt());
            d.readInt(); d.readInt(); // GETFH OK
            dir = d.readOpaque(128);
            d = client.run(status, e -> {
                e.writeInt(Op.PUTFH).writeOpaque(dir);
                e.writeInt(Op.OPEN).writeInt(0).writeInt(3).writeInt(0).writeLong(clientId).writeOpaque("owner40".getBytes());
                e.writeInt(1).writeInt(0).writeInt(0).writeOpaque(new byte[0]); // CREATE UNCHECKED4, no attributes
                e.writeInt(0).writeString("f"); // CLAIM_NULL
                e.writeInt(Op.GETFH);
            }, 3);
            Raw40.check(status, "OPEN f");
            d.readInt(); d.readInt(); // PUTFH OK
            d.readInt(); d.readInt(); // OPEN OK
            byte[] unconfirmed = d.readFixedOpaque(16);
            d.skip(4 + 8 + 8);
            d.readInt(); // rflags
            d.skip(4 * d.readInt());
            d.readInt(); // OPEN_DELEGATE_NONE
            d.readInt(); d.readInt(); // GETFH OK
            file = d.readOpaque(128);
            d = client.run(status, e -> e.writeInt(Op.PUTFH).writeOpaque(file).writeInt(Op.OPEN_CONFIRM).writeFixedOpaque(unconfirmed).writeInt(1), 2);
            Raw40.check(status, "OPEN_CONFIRM");
            d.readInt(); d.readInt(); d.readInt(); d.readInt();
            openStateid = d.readFixedOpaque(16);
            client.run(status, e -> e.writeInt(Op.PUTFH).writeOpaque(file)
                    .writeInt(Op.WRITE).writeFixedOpaque(openStateid).writeLong(0).writeInt(2).writeOpaque(content()), 2); // FILE_SYNC
            Raw40.check(status, "WRITE");
        }

        /** A 4.0 client on connection {@code connection}, its xids from {@code firstXid}; every reply checked for form. */
        Raw40 raw(int connection, int firstXid) {
            CompoundState.Connection conn = new CompoundState.Connection(connection, "127.0.0.1");
            return new Raw40(record -> {
                byte[] reply = sim.await(gateway, () -> ((NfsGateway) gateway.node()).service().handle(record, conn), 120 * SECOND);
                if (reply == null) throw new AssertionError("a call with a header left unanswered");
                XdrDecoder d = new XdrDecoder(reply);
                if (d.readInt() != new XdrDecoder(record, 0, 4).readInt() || d.readInt() != 1 || reply.length % 4 != 0) {
                    throw new AssertionError("a malformed reply of " + reply.length + " bytes");
                }
                return reply;
            }, firstXid);
        }
    }

    static byte[] content() { return dev.cairn.sim.workload.Oracle.content(40, FILE_BYTES); }

    public static void fuzzerTestOneInput(byte[] input) {
        if (input.length < 2) return;
        Setup s = new Setup();
        int count = 1 + (input[0] & (MAX_OPS - 1));
        byte[] on = (input[1] & 1) == 0 ? s.dir : s.file;
        // XDR comes in 4-byte units: the fuzzer's bytes padded with zeros to the next one
        byte[] ops = Arrays.copyOfRange(input, 2, 2 + ((input.length - 2 + 3) & ~3));
        try {
            int[] status = new int[1];
            s.client.run(status, e -> {
                e.writeInt(Op.PUTFH).writeOpaque(on);
                e.writeFixedOpaque(ops);
            }, count + 1);
            if (Boolean.getBoolean("cairn.fuzz.verbose")) System.out.println("COMPOUND of " + count + " operations: status " + status[0]);
        } catch (IllegalStateException e) {
            if (String.valueOf(e.getMessage()).contains("did not finish")) throw new AssertionError("a COMPOUND left unanswered; the simulator saw: " + s.sim.violations(), e);
            throw e;
        } catch (dev.cairn.nfs.xdr.XdrException e) {
            // the reply's header is checked above; past it, a reply cut short by an error is the COMPOUND's to end
        }
        // the gateway still serves a new 4.0 client, and the file still holds what was written FILE_SYNC
        Raw40 other = s.raw(2, 90_000);
        long id = other.establish("after40");
        int[] status = new int[1];
        XdrDecoder d = other.run(status, e -> e.writeInt(Op.PUTFH).writeOpaque(s.file).writeInt(Op.READ).writeFixedOpaque(new byte[16])
                .writeLong(0).writeInt(FILE_BYTES), 2);
        if (status[0] == 0 && !touchesTheFile(input)) {
            d.readInt(); d.readInt(); d.readInt(); d.readInt();
            d.readInt(); // eof
            byte[] read = d.readOpaque(FILE_BYTES);
            if (!Arrays.equals(read, content())) {
                throw new AssertionError("the file's FILE_SYNC bytes no longer read back (" + read.length + " bytes) after an input that wrote nothing");
            }
        }
        if (!s.sim.violations().isEmpty()) throw new AssertionError("the simulator saw: " + s.sim.violations() + " (client " + id + ")");
    }

    /**
     * Whether the input may have changed the file's bytes (any WRITE, SETATTR, COPY, CLONE, DEALLOCATE, REMOVE or
     * RENAME anywhere in it, or OPEN, which may truncate): then its content is not checked. Conservative: an operation
     * number found anywhere counts.
     */
    static boolean touchesTheFile(byte[] input) {
        int[] writes = {Op.WRITE, Op.SETATTR, Op.OPEN, Op.REMOVE, Op.RENAME, 60 /* COPY */, 71 /* CLONE */, 67 /* DEALLOCATE */};
        for (int i = 2; i + 4 <= input.length; i += 4) {
            int word = ((input[i] & 0xff) << 24) | ((input[i + 1] & 0xff) << 16) | ((input[i + 2] & 0xff) << 8) | (input[i + 3] & 0xff);
            for (int w : writes) if (word == w) return true;
        }
        return false;
    }

    // ---------------------------------------------------------------- the seeds

    /** Operations on the confirmed open and its owner, encoded with the setup's ids: each seed is one COMPOUND's worth. */
    static List<byte[]> seeds(Setup s) {
        List<byte[]> out = new ArrayList<>();
        int seq = s.nextSeqid;
        byte[] sid = s.openStateid;
        out.add(seed(true, 1, e -> e.writeInt(Op.READ).writeFixedOpaque(sid).writeLong(0).writeInt(FILE_BYTES)));
        out.add(seed(true, 2, e -> {
            e.writeInt(Op.WRITE).writeFixedOpaque(sid).writeLong(100).writeInt(0).writeOpaque("unstable".getBytes());
            e.writeInt(Op.COMMIT).writeLong(0).writeInt(0);
        }));
        // a new lock owner from the open (open_to_lock_owner4), then a test and an unlock of it
        out.add(seed(true, 2, e -> {
            e.writeInt(Op.LOCK).writeInt(2).writeInt(0).writeLong(0).writeLong(100).writeInt(1); // WRITE_LT, not a reclaim, 0..100, new owner
            e.writeInt(seq).writeFixedOpaque(sid).writeInt(0).writeLong(s.clientId).writeOpaque("locker".getBytes());
            e.writeInt(Op.LOCKT).writeInt(2).writeLong(0).writeLong(100).writeLong(s.clientId).writeOpaque("other".getBytes());
        }));
        out.add(seed(true, 1, e -> e.writeInt(Op.OPEN_DOWNGRADE).writeFixedOpaque(sid).writeInt(seq).writeInt(1).writeInt(0)));
        out.add(seed(true, 1, e -> e.writeInt(Op.CLOSE).writeInt(seq).writeFixedOpaque(sid)));
        // the same CLOSE twice: the second is a replay of the owner's last seqid
        out.add(seed(true, 2, e -> {
            e.writeInt(Op.CLOSE).writeInt(seq).writeFixedOpaque(sid);
            e.writeInt(Op.CLOSE).writeInt(seq).writeFixedOpaque(sid);
        }));
        out.add(seed(true, 1, e -> e.writeInt(Op.OPEN_CONFIRM).writeFixedOpaque(sid).writeInt(seq)));
        out.add(seed(false, 1, e -> e.writeInt(Op.RENEW).writeLong(s.clientId)));
        out.add(seed(false, 1, e -> e.writeInt(Op.RELEASE_LOCKOWNER).writeLong(s.clientId).writeOpaque("locker".getBytes())));
        // a second OPEN of the file by the same owner (seqid moves on), then its stateid read
        out.add(seed(false, 2, e -> {
            e.writeInt(Op.OPEN).writeInt(seq).writeInt(1).writeInt(0).writeLong(s.clientId).writeOpaque("owner40".getBytes());
            e.writeInt(0); // OPEN4_NOCREATE
            e.writeInt(0).writeString("f");
            e.writeInt(Op.GETATTR).writeInt(1).writeInt(1 << dev.cairn.nfs.v4.Fattr.SIZE);
        }));
        out.add(seed(true, 1, e -> e.writeInt(Op.SETATTR).writeFixedOpaque(sid).writeInt(1).writeInt(1 << dev.cairn.nfs.v4.Fattr.SIZE)
                .writeOpaque(new XdrEncoder().writeLong(10).toByteArray())));
        out.add(seed(false, 3, e -> {
            e.writeInt(Op.SAVEFH);
            e.writeInt(Op.LOOKUP).writeString("f");
            e.writeInt(Op.GETFH);
        }));
        return out;
    }

    /** An input: the operation count's byte, the handle's (file or directory), then the operations. */
    static byte[] seed(boolean onFile, int count, Consumer<XdrEncoder> ops) {
        XdrEncoder e = new XdrEncoder();
        ops.accept(e);
        byte[] body = e.toByteArray();
        byte[] out = new byte[2 + body.length];
        out[0] = (byte) (count - 1);
        out[1] = (byte) (onFile ? 1 : 0);
        System.arraycopy(body, 0, out, 2, body.length);
        return out;
    }

    /**
     * Every seed runs through the target (so a seed that no longer fits the setup is seen), and with
     * {@code -Dcairn.writeCorpus=DIR} they are written there (the corpus directory's {@code operations40}).
     */
    @Test void theSeedsRunAndAreAnsweredWithTheirOperationsDone() throws IOException {
        Setup s = new Setup();
        List<byte[]> seeds = seeds(s);
        String dir = System.getProperty("cairn.writeCorpus");
        for (int i = 0; i < seeds.size(); i++) {
            fuzzerTestOneInput(seeds.get(i));
            if (dir != null) Files.write(Files.createDirectories(Path.of(dir)).resolve(String.format("seed-%02d", i)), seeds.get(i));
        }
        // the seeds reach real state: a READ with the setup's stateid is answered OK with the file's bytes
        int[] status = new int[1];
        XdrDecoder d = s.client.run(status, e -> {
            e.writeInt(Op.PUTFH).writeOpaque(s.file);
            e.writeFixedOpaque(Arrays.copyOfRange(seeds.get(0), 2, seeds.get(0).length));
        }, 2);
        org.assertj.core.api.Assertions.assertThat(status[0]).as("the first seed's READ with the setup's stateid").isZero();
        d.readInt(); d.readInt(); d.readInt(); d.readInt();
        d.readInt();
        org.assertj.core.api.Assertions.assertThat(d.readOpaque(FILE_BYTES)).isEqualTo(content());
    }
}
