package dev.cairn.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.cairn.chaos.LocalCluster;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The cairn command as a user runs it (exit codes and output), against a real local cluster. */
class CliTest {
    @TempDir Path dir;
    final ByteArrayOutputStream out = new ByteArrayOutputStream(), err = new ByteArrayOutputStream();
    PrintStream oldOut, oldErr;

    @BeforeEach void capture() {
        oldOut = System.out;
        oldErr = System.err;
        System.setOut(new PrintStream(out, true, StandardCharsets.UTF_8));
        System.setErr(new PrintStream(err, true, StandardCharsets.UTF_8));
    }

    @AfterEach void restore() {
        System.setOut(oldOut);
        System.setErr(oldErr);
    }

    String out() { return out.toString(StandardCharsets.UTF_8); }

    String err() { return err.toString(StandardCharsets.UTF_8); }

    static List<Integer> freePorts(int n) throws Exception {
        List<Integer> ports = new ArrayList<>();
        for (int i = 0; i < n; i++) ports.add(dev.cairn.core.real.LoopbackPorts.take());
        return ports;
    }

    @Test void putGetLsRmAgainstALocalCluster() throws Exception {
        List<Integer> p = freePorts(4);
        String master = "127.0.0.1:" + p.get(0);
        byte[] data = new byte[3_000_000];
        new SplittableRandom(5).nextBytes(data);
        Path src = dir.resolve("src.bin"), back = dir.resolve("back.bin");
        Files.write(src, data);
        try (LocalCluster cluster = LocalCluster.start(dir.resolve("data"), p.get(0), p.subList(1, 4))) {
            cluster.awaitReady();
            assertThat(Main.run("mkdir", "--master", master, "/dir")).isZero();
            assertThat(Main.run("put", "--master", master, "--chunk-size-mb", "1", src.toString(), "/dir/f")).as(err()).isZero();
            assertThat(out()).contains("durable on every copy");
            assertThat(Main.run("ls", "--master", master, "/dir")).isZero();
            assertThat(out()).contains("3000000").contains(" f");
            assertThat(Main.run("get", "--master", master, "/dir/f", back.toString())).isZero();
            assertThat(Files.readAllBytes(back)).isEqualTo(data);
            assertThat(Main.run("get", "--master", master, "/dir/f", back.toString())).as("never over a local file silently").isEqualTo(1);
            assertThat(err()).contains("exists (--force replaces it)");
            assertThat(Main.run("get", "--master", master, "--force", "/dir/f", back.toString())).isZero();
            Path into = Files.createDirectory(dir.resolve("into"));
            assertThat(Main.run("get", "--master", master, "/dir/f", into.toString())).isZero();
            assertThat(Files.readAllBytes(into.resolve("f"))).as("into a directory: the file's own name").isEqualTo(data);
            assertThat(Main.run("get", "--master", master, "/dir/f", dir.resolve("no/such/dir/f").toString())).isEqualTo(1);
            assertThat(err()).contains("no such local directory");
            assertThat(Main.run("put", "--master", master, into.toString(), "/z")).isEqualTo(1);
            assertThat(err()).contains("is a directory");

            assertThat(Main.run("get", "--master", master, "/dir/missing", dir.resolve("x").toString())).isEqualTo(1);
            assertThat(err()).contains("/dir/missing: no such file or directory");
            assertThat(Files.exists(dir.resolve("x"))).isFalse();
            assertThat(Main.run("put", "--master", master, dir.resolve("nope").toString(), "/y")).isEqualTo(1);
            assertThat(Main.run("put", "--master", master, src.toString(), "/dir/f")).isEqualTo(1);
            assertThat(err()).contains("already exists");
            assertThat(Main.run("rm", "--master", master, "/dir")).isEqualTo(1);
            assertThat(err()).contains("not empty");
            assertThat(Main.run("rm", "--master", master, "/dir/f")).isZero();
            assertThat(Main.run("rm", "--master", master, "/dir")).isZero();
            assertThat(Main.run("ls", "--master", master, "relative")).isEqualTo(1);
            assertThat(err()).contains("must be absolute");
        }
    }

    /** A keyed cluster: its clients prove the key; one without it, or with another, is told so at once, not after a timeout. */
    @Test void aClusterWithAKeyServesClientsThatHoldItAndRefusesOthersAtOnce() throws Exception {
        List<Integer> p = freePorts(4);
        String master = "127.0.0.1:" + p.get(0);
        Path keyFile = dir.resolve("k").resolve(dev.cairn.core.real.ClusterKey.FILE_NAME);
        Path otherKey = dir.resolve("other").resolve(dev.cairn.core.real.ClusterKey.FILE_NAME);
        dev.cairn.core.real.ClusterKey.loadOrCreate(otherKey);
        try (LocalCluster cluster = LocalCluster.start(dir.resolve("data"), p.get(0), p.subList(1, 4),
                dev.cairn.core.real.ClusterKey.loadOrCreate(keyFile))) {
            cluster.awaitReady();
            assertThat(Main.run("mkdir", "--master", master, "--key-file", keyFile.toString(), "/d")).as(err()).isZero();
            assertThat(Main.run("ls", "--master", master, "--key-file", keyFile.toString(), "/")).isZero();
            assertThat(out()).contains(" d");
            long t0 = System.nanoTime();
            assertThat(Main.run("ls", "--master", master, "/")).as("no key").isEqualTo(1);
            assertThat(err()).contains("refused: " + master + " requires the cluster key, and this node has none");
            assertThat(Main.run("ls", "--master", master, "--key-file", otherKey.toString(), "/")).as("another cluster's key").isEqualTo(1);
            assertThat(err()).contains("refused: " + master + " it does not hold this cluster's key");
            assertThat(java.util.concurrent.TimeUnit.NANOSECONDS.toSeconds(System.nanoTime() - t0)).as("not a call timeout").isLessThan(30);
            Files.writeString(otherKey, "garbage");
            assertThat(Main.run("ls", "--master", master, "--key-file", otherKey.toString(), "/")).isNotZero();
            assertThat(err()).contains("is not 64 hex digits");
        }
    }

    /** fsck against a real cluster: healthy, then a chunkserver down (under goal), then every holder down (lost), then back. */
    @Test void fsckNamesWhatIsUnderGoalOrLostAndSaysSoInItsExitStatus() throws Exception {
        List<Integer> p = freePorts(4);
        String master = "127.0.0.1:" + p.get(0);
        Path src = dir.resolve("src.bin");
        byte[] data = new byte[1_500_000];
        new SplittableRandom(6).nextBytes(data);
        Files.write(src, data);
        try (LocalCluster cluster = LocalCluster.start(dir.resolve("data"), p.get(0), p.subList(1, 4))) {
            cluster.awaitReady();
            assertThat(Main.run("put", "--master", master, "--chunk-size-mb", "1", "--class", "replicated(3)", src.toString(), "/f")).as(err()).isZero();
            assertThat(Main.run("fsck", "--master", master)).as(out()).isEqualTo(Fsck.HEALTHY);
            assertThat(out()).contains("checked 1 files, 1 directories, 2 chunks").contains("status: HEALTHY");
            cluster.stopChunkserver(0);
            assertThat(fsckUntil(master, Fsck.DEGRADED)).as(out()).isEqualTo(Fsck.DEGRADED);
            assertThat(out()).contains("/f  chunk 0").contains("under goal: 2 of 3 copies on servers that are up");
            cluster.stopChunkserver(1);
            cluster.stopChunkserver(2);
            assertThat(fsckUntil(master, Fsck.LOST)).as(out()).isEqualTo(Fsck.LOST);
            assertThat(out()).contains("LOST: 0 of 3 copies").contains("status: LOST");
            for (int i = 0; i < 3; i++) cluster.restartChunkserver(i);
            assertThat(fsckUntil(master, Fsck.HEALTHY)).as(out()).isEqualTo(Fsck.HEALTHY);
            assertThat(Main.run("fsck", "--master", master, "/nope")).isEqualTo(1);
            assertThat(err()).contains("no such file or directory");
        }
    }

    /** Runs fsck until it exits with {@code want} (the master takes a moment to see servers go and come), for 30 s at most. */
    int fsckUntil(String master, int want) throws InterruptedException {
        long deadline = System.currentTimeMillis() + 30_000;
        int got;
        do {
            out.reset();
            got = Main.run("fsck", "--master", master);
            if (got == want) return got;
            Thread.sleep(200);
        } while (System.currentTimeMillis() < deadline);
        return got;
    }

    @Test void extendedAttributesFromTheCommandLine() throws Exception {
        List<Integer> p = freePorts(4);
        String master = "127.0.0.1:" + p.get(0);
        byte[] binary = {0, 1, 2, (byte) 0xff, 10, 0};
        Path valueFile = dir.resolve("value.bin");
        Files.write(valueFile, binary);
        try (LocalCluster cluster = LocalCluster.start(dir.resolve("data"), p.get(0), p.subList(1, 4))) {
            cluster.awaitReady();
            assertThat(Main.run("mkdir", "--master", master, "/d")).isZero();
            assertThat(Main.run("xattr", "set", "--master", master, "/d", "colour", "blue")).as(err()).isZero();
            assertThat(Main.run("xattr", "set", "--master", master, "/d", "raw", "--value-file", valueFile.toString())).as(err()).isZero();
            out.reset();
            assertThat(Main.run("xattr", "get", "--master", master, "/d", "raw")).isZero();
            assertThat(out.toByteArray()).as("the value's bytes, as they are").isEqualTo(binary);
            out.reset();
            assertThat(Main.run("xattr", "list", "--master", master, "/d")).isZero();
            assertThat(out()).isEqualTo("colour" + System.lineSeparator() + "raw" + System.lineSeparator());

            assertThat(Main.run("xattr", "set", "--master", master, "--create", "/d", "colour", "red")).isEqualTo(1);
            assertThat(err()).contains("/d: attribute colour is set already");
            assertThat(Main.run("xattr", "set", "--master", master, "--replace", "/d", "shape", "round")).isEqualTo(1);
            assertThat(err()).contains("/d: no attribute shape");
            assertThat(Main.run("xattr", "set", "--master", master, "--replace", "/d", "colour", "red")).isZero();
            out.reset();
            assertThat(Main.run("xattr", "get", "--master", master, "/d", "colour")).isZero();
            assertThat(out()).isEqualTo("red");

            assertThat(Main.run("xattr", "rm", "--master", master, "/d", "colour")).isZero();
            assertThat(Main.run("xattr", "get", "--master", master, "/d", "colour")).isEqualTo(1);
            assertThat(err()).contains("/d: no attribute colour");
            assertThat(Main.run("xattr", "rm", "--master", master, "/d", "colour")).isEqualTo(1);
            assertThat(Main.run("xattr", "list", "--master", master, "/missing")).isEqualTo(1);
            assertThat(err()).contains("/missing: no such file or directory");
            assertThat(Main.run("xattr", "set", "--master", master, "/d", "both", "x", "--value-file", valueFile.toString()))
                    .as("a value and a value file").isEqualTo(Main.EXIT_USAGE);
            out.reset();
            assertThat(Main.run("xattr", "list", "--master", master, "/d")).isZero();
            assertThat(out()).isEqualTo("raw" + System.lineSeparator());
        }
    }

    @Test void aClusterThatIsNotThereIsAClearError() throws Exception {
        int port = freePorts(1).get(0);
        assertThat(Main.run("ls", "--master", "127.0.0.1:" + port, "/")).isEqualTo(1);
        assertThat(err()).contains("cluster unavailable");
    }

    @Test void simRunsOneSeedAndASweep() {
        assertThat(Main.run("sim", "--seed", "3", "--duration", "5s")).isZero();
        assertThat(out()).contains("seed 3: PASS").contains("trace hash");
        assertThat(Main.run("sim", "--seeds", "1..3", "--duration", "3s", "--jobs", "2")).isZero();
        assertThat(out()).contains("3 seeds run, 0 failed");
    }

    @Test void simWritesATraceThatReplaysIdentically() throws Exception {
        Path t1 = dir.resolve("t1"), t2 = dir.resolve("t2");
        assertThat(Main.run("sim", "--seed", "11", "--duration", "3s", "--trace", t1.toString())).isZero();
        assertThat(Main.run("sim", "--seed", "11", "--duration", "3s", "--trace", t2.toString())).isZero();
        assertThat(Files.readAllLines(t1)).isNotEmpty().isEqualTo(Files.readAllLines(t2));
    }

    @Test void theSimHelpNamesEveryPlantedBug() {
        Main.run("sim", "--help"); // prints the usage, every option described
        String usage = (out() + err()).replaceAll("\\s+", " ");
        for (dev.cairn.core.env.Plant p : dev.cairn.core.env.Plant.values()) assertThat(usage).contains(p.cliName());
    }

    /** Every subcommand answers --help with its usage and exit status 0 (`cairn up --help` was "Unknown option"). */
    @Test void everySubcommandHasHelp() {
        for (String cmd : new String[] {"up", "master", "chunkserver", "nfs", "put", "get", "ls", "mkdir", "rm", "status", "fileinfo", "drain", "setclass", "fsck", "sim"}) {
            assertThat(Main.run(cmd, "--help")).as(cmd).isZero();
            assertThat(out()).as(cmd).contains("Usage: cairn " + cmd);
        }
    }

    /**
     * What ./cairn up prints to start a dead server again pastes into a shell as one command: the exports rule
     * (spaces) quoted, the heap it ran with kept (CAIRN_JAVA_OPTS, which ./cairn hands to the JVM).
     */
    @Test void restartCommandsPasteIntoAShell() throws Exception {
        String cmd = ProcessCluster.restartCommand(ProcessCluster.GATEWAY_HEAP,
                List.of("nfs", "--exports", "127.0.0.1/32 rw no_root_squash", "--data", "/tmp/it's here"));
        assertThat(cmd).isEqualTo("CAIRN_JAVA_OPTS='-XX:+UseSerialGC -Xms16m -XX:+UnlockExperimentalVMOptions -XX:+IgnoreUnrecognizedVMOptions"
                + " -XX:TrimNativeHeapInterval=1000 -Xmx512m' ./cairn nfs --exports '127.0.0.1/32 rw no_root_squash' "
                + "--data '/tmp/it'\\''s here'");
        Process sh = new ProcessBuilder("bash", "-c", "set -- " + cmd.substring(cmd.indexOf("./cairn") + "./cairn".length()) + "; printf '%s\\n' \"$@\"")
                .redirectErrorStream(true).start();
        List<String> words = new String(sh.getInputStream().readAllBytes(), StandardCharsets.UTF_8).lines().toList();
        assertThat(words).containsExactly("nfs", "--exports", "127.0.0.1/32 rw no_root_squash", "--data", "/tmp/it's here");
    }

    @Test void badArgumentsAreUsageErrors() {
        assertThat(Main.run("sim", "--seed", "1", "--duration", "soon")).isEqualTo(Main.EXIT_USAGE);
        assertThat(err()).contains("bad duration");
        assertThat(Main.run("sim", "--seed", "1", "--faults", "meteor")).isEqualTo(Main.EXIT_USAGE);
        assertThat(Main.run("sim")).isEqualTo(Main.EXIT_USAGE);
        assertThat(Main.run("ls", "--master", "nonsense", "/")).isEqualTo(Main.EXIT_USAGE);
        assertThat(Main.run("no-such-command")).isEqualTo(Main.EXIT_USAGE);
    }

    @Test void durationsParse() {
        assertThat(Durations.parseNanos("60s")).isEqualTo(60_000_000_000L);
        assertThat(Durations.parseNanos("2m")).isEqualTo(120_000_000_000L);
        assertThat(Durations.parseNanos("500ms")).isEqualTo(500_000_000L);
        assertThat(Durations.parseNanos("1.5")).isEqualTo(1_500_000_000L);
    }
}
