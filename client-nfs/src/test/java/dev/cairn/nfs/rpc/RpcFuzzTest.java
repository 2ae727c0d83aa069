package dev.cairn.nfs.rpc;

import static dev.cairn.nfs.NfsTestCalls.createSession;
import static dev.cairn.nfs.NfsTestCalls.exchangeId;
import static dev.cairn.nfs.NfsTestCalls.sequence;
import static org.assertj.core.api.Assertions.assertThat;

import dev.cairn.core.async.Promise;
import dev.cairn.nfs.NfsTestCalls;
import dev.cairn.nfs.NfsTestCalls.OpCall;
import dev.cairn.nfs.v4.Op;
import dev.cairn.nfs.v4.state.ClientTable;
import dev.cairn.nfs.xdr.XdrDecoder;
import dev.cairn.nfs.xdr.XdrEncoder;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/**
 * A seeded mutation fuzzer for the RPC/XDR decoder and the COMPOUND engine: records from a small corpus
 * (src/test/resources/nfs-fuzz-corpus, valid calls a client sends) are bit-flipped, truncated, extended,
 * spliced and given absurd lengths, then framed into random fragments and fed through record marking and
 * the NFS service. Nothing may throw, every answer must be a well-formed reply to the call's xid, and
 * the gateway's memory stays bounded.
 */
class RpcFuzzTest {
    static final String CORPUS = "nfs-fuzz-corpus";
    static final String[] CORPUS_FILES = {"null.hex", "exchange-id.hex", "create-session.hex", "sequence-putrootfh.hex",
            "setclientid.hex", "putfh.hex", "minor2.hex", "unknown-op.hex"};
    static final int MUTANTS = 20_000;
    static final int MAX_RECORD = 64 * 1024;

    /** The corpus, as a client sends it (regenerate with -Dcairn.writeCorpus=DIR after changing these). */
    static List<byte[]> corpusSources() {
        byte[] session = new byte[16];
        session[7] = 1;
        List<byte[]> out = new ArrayList<>();
        out.add(NfsTestCalls.callHeader(1, NfsService.NFS_PROGRAM, 4, NfsService.PROC_NULL, 0).toByteArray());
        out.add(NfsTestCalls.compoundRecord(2, 1, List.of(exchangeId("linux-client".getBytes(StandardCharsets.UTF_8), 77))));
        out.add(NfsTestCalls.compoundRecord(3, 1, List.of(createSession(0x1_0000_0001L, 1))));
        out.add(NfsTestCalls.compoundRecord(4, 1, List.of(sequence(session, 1, 0), OpCall.of(Op.PUTROOTFH), OpCall.of(Op.GETFH),
                OpCall.of(Op.SAVEFH), OpCall.of(Op.RESTOREFH))));
        XdrEncoder sc = new XdrEncoder().writeLong(7).writeString("linux-0").writeInt(0x40000000).writeString("tcp")
                .writeString("127.0.0.1.3.4").writeInt(1);
        out.add(NfsTestCalls.compoundRecord(5, 0, List.of(new OpCall(Op.SETCLIENTID, sc))));
        out.add(NfsTestCalls.compoundRecord(6, 0, List.of(new OpCall(Op.PUTFH, new XdrEncoder().writeOpaque(
                new dev.cairn.nfs.v4.FileHandle(7, 1, 0).encode())), OpCall.of(Op.GETFH))));
        out.add(NfsTestCalls.compoundRecord(7, 2, List.of(OpCall.of(Op.PUTROOTFH))));
        out.add(NfsTestCalls.compoundRecord(8, 0, List.of(OpCall.of(Op.PUTROOTFH), OpCall.of(3333))));
        return out;
    }

    static List<byte[]> corpus() throws IOException {
        List<byte[]> out = new ArrayList<>();
        for (String f : CORPUS_FILES) {
            try (InputStream in = RpcFuzzTest.class.getClassLoader().getResourceAsStream(CORPUS + "/" + f)) {
                assertThat(in).as("corpus file " + f).isNotNull();
                out.add(HexFormat.of().parseHex(new String(in.readAllBytes(), StandardCharsets.US_ASCII).strip()));
            }
        }
        return out;
    }

    @Test void theCorpusInTheRepoIsWhatClientsSend() throws IOException {
        String dir = System.getProperty("cairn.writeCorpus");
        List<byte[]> sources = corpusSources();
        if (dir != null) {
            for (int i = 0; i < sources.size(); i++) {
                Files.writeString(Path.of(dir, CORPUS_FILES[i]), HexFormat.of().formatHex(sources.get(i)) + "\n");
            }
        }
        List<byte[]> stored = corpus();
        for (int i = 0; i < sources.size(); i++) assertThat(stored.get(i)).as(CORPUS_FILES[i]).isEqualTo(sources.get(i));
    }

    static byte[] mutate(byte[] in, SplittableRandom r, List<byte[]> corpus) {
        byte[] b = in.clone();
        int kind = r.nextInt(7);
        switch (kind) {
            case 0 -> { // bit flips
                for (int i = 0, n = 1 + r.nextInt(8); i < n && b.length > 0; i++) b[r.nextInt(b.length)] ^= (byte) (1 << r.nextInt(8));
            }
            case 1 -> b = java.util.Arrays.copyOf(b, r.nextInt(b.length + 1)); // truncation
            case 2 -> { // an absurd or negative length at an aligned word
                if (b.length >= 4) {
                    int at = r.nextInt(b.length / 4) * 4;
                    int v = switch (r.nextInt(4)) { case 0 -> -1; case 1 -> Integer.MAX_VALUE; case 2 -> 0x10000; default -> r.nextInt(); };
                    b[at] = (byte) (v >>> 24); b[at + 1] = (byte) (v >>> 16); b[at + 2] = (byte) (v >>> 8); b[at + 3] = (byte) v;
                }
            }
            case 3 -> { // random bytes appended
                byte[] tail = new byte[r.nextInt(200)];
                r.nextBytes(tail);
                byte[] c = java.util.Arrays.copyOf(b, b.length + tail.length);
                System.arraycopy(tail, 0, c, b.length, tail.length);
                b = c;
            }
            case 4 -> { // splice: head of this one, tail of another
                byte[] o = corpus.get(r.nextInt(corpus.size()));
                int cut = r.nextInt(b.length + 1), from = r.nextInt(o.length + 1);
                byte[] c = java.util.Arrays.copyOf(b, cut + o.length - from);
                System.arraycopy(o, from, c, cut, o.length - from);
                b = c;
            }
            case 5 -> { // pure garbage
                b = new byte[r.nextInt(300)];
                r.nextBytes(b);
            }
            default -> { // a word replaced with a small number (op numbers, discriminants, counts)
                if (b.length >= 4) {
                    int at = r.nextInt(b.length / 4) * 4;
                    int v = r.nextInt(70);
                    b[at] = 0; b[at + 1] = 0; b[at + 2] = 0; b[at + 3] = (byte) v;
                }
            }
        }
        return b;
    }

    @Test void mutatedRecordsGetWellFormedAnswersAndNothingBreaks() throws IOException {
        List<byte[]> corpus = corpus();
        SplittableRandom r = new SplittableRandom(20261122);
        NfsTestCalls nfs = new NfsTestCalls(5);
        int answered = 0, silent = 0;
        for (int i = 0; i < MUTANTS; i++) {
            byte[] rec = mutate(corpus.get(r.nextInt(corpus.size())), r, corpus);
            if (r.nextInt(3) == 0) rec = mutate(rec, r, corpus);
            Promise<byte[]> p = nfs.service.handle(rec, nfs.conn);
            assertThat(p.isDone()).isTrue();
            assertThat(p.isFailed()).as("mutant %d failed: %s", i, p.error()).isFalse();
            byte[] reply = p.value();
            if (reply == null) {
                silent++;
                // silence only for what has no call header to answer
                assertThat(rec.length < 8 || new XdrDecoder(rec, 4, 4).readInt() != 0).as("mutant %d unanswered", i).isTrue();
                continue;
            }
            answered++;
            XdrDecoder d = new XdrDecoder(reply);
            assertThat(d.readInt()).isEqualTo(new XdrDecoder(rec, 0, 4).readInt()); // the caller's xid
            assertThat(d.readInt()).isEqualTo(1); // a REPLY
            assertThat(reply.length % 4).isZero();
            assertThat(reply.length).isLessThan(MAX_RECORD);
        }
        assertThat(answered).isGreaterThan(MUTANTS / 2);
        assertThat(silent).isPositive();
        assertThat(nfs.service.nfs4().clients().clientCount()).isLessThanOrEqualTo(ClientTable.MAX_CLIENTS);
    }

    @Test void mutatedStreamsNeverOverrunTheRecordLimit() throws IOException {
        List<byte[]> corpus = corpus();
        SplittableRandom r = new SplittableRandom(7);
        for (int i = 0; i < 2000; i++) {
            RecordAssembler a = new RecordAssembler(MAX_RECORD);
            byte[] stream = mutate(RecordAssembler.frame(corpus.get(r.nextInt(corpus.size()))), r, corpus);
            for (int off = 0; off < stream.length; ) {
                int n = Math.min(stream.length - off, 1 + r.nextInt(64));
                for (byte[] rec : a.feed(stream, off, n)) assertThat(rec.length).isLessThanOrEqualTo(MAX_RECORD);
                off += n;
            }
            assertThat(a.buffered()).isLessThanOrEqualTo(MAX_RECORD);
        }
    }
}
