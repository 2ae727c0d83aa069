package dev.cairn.chaos;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.cairn.core.proto.Types.FileAttr;
import dev.cairn.core.proto.Types.FileType;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * The Linux kernel's NFS client against a real cluster and gateway on loopback: {@code nfs-vm} (from the
 * shared tools, next to this repository, or {@code CAIRN_NFS_VM}) boots Debian's kernel in QEMU, mounts the
 * gateway and runs {@code nfs/guest-suite.sh}. What the guest wrote is then checked on the host through the
 * cluster's own client library (checksums, names, modes, owners, sizes). Skipped, saying why, where the
 * harness is missing or cannot run (it needs root).
 */
class NfsKernelClientTest {
    static final long VM_TIMEOUT_SECONDS = 900;
    /** util-linux's flock(1), for the guest's lock checks (Debian has it in an essential package). */
    static final String FLOCK = "/usr/bin/flock";
    /** GNU coreutils' cp(1), whose --sparse copy finds data with lseek(SEEK_DATA/SEEK_HOLE): NFSv4.2 SEEK from the guest. */
    static final String GNU_CP = "/usr/bin/cp";
    /** util-linux's fallocate(1), whose --punch-hole goes over NFS as DEALLOCATE in 4.2. */
    static final String FALLOCATE = "/usr/bin/fallocate";
    /** attr's setfattr(1) and getfattr(1), for the guest's extended attribute checks in 4.2 (run without them if absent). */
    static final String SETFATTR = "/usr/bin/setfattr", GETFATTR = "/usr/bin/getfattr";
    static Path nfsVm;
    static GatewayCluster setup;
    static LocalCluster cluster;
    static LocalGateway gateway;
    @TempDir static Path data;

    @BeforeAll static void start() throws Exception {
        nfsVm = findNfsVm();
        assumeTrue(nfsVm != null, "nfs-vm not found (set CAIRN_NFS_VM, or keep ../shared/tools/nfs-vm beside the repository): kernel client suite skipped");
        assumeTrue("root".equals(System.getProperty("user.name")), "nfs-vm runs as root only: kernel client suite skipped");
        assumeTrue(Files.isExecutable(Path.of(FLOCK)), FLOCK + " (util-linux) not found: kernel client suite skipped");
        assumeTrue(Files.isExecutable(Path.of(GNU_CP)), GNU_CP + " (coreutils) not found: kernel client suite skipped");
        assumeTrue(Files.isExecutable(Path.of(FALLOCATE)), FALLOCATE + " (util-linux) not found: kernel client suite skipped");
        setup = GatewayCluster.start(data);
        cluster = setup.cluster();
        gateway = setup.gateway();
    }

    @AfterAll static void stop() {
        if (setup != null) setup.close();
    }

    static Path findNfsVm() { return KernelClient.findNfsVm(); }

    @ParameterizedTest(name = "vers={0}")
    @CsvSource({"4.1, 1000, 4.1", "4.0, 200, 4.0", "4.2, 200, 4.2", "4, 100, 4.2"}) // "4": the client's own pick, the highest served
    void kernelClientPassesTheSuite(String vers, int files, String expected) throws Exception {
        String dir = "suite-" + vers.replace('.', '_');
        // a file of 1 MiB chunks for the random overwrites (NFS creates get the 64 MiB default)
        String chunky = "chunky-" + vers.replace('.', '_') + ".bin";
        // and one for a file with holes between its 1 MiB chunks, copied by GNU cp through SEEK_DATA/SEEK_HOLE
        String holey = "holey-" + vers.replace('.', '_') + ".bin";
        try (RealClient c = cluster.client()) {
            c.put(new java.io.ByteArrayInputStream(new byte[0]), "/" + chunky, 1 << 20, dev.cairn.core.proto.StorageClass.replicated(2));
            c.put(new java.io.ByteArrayInputStream(new byte[0]), "/" + holey, 1 << 20, dev.cairn.core.proto.StorageClass.replicated(2));
        }
        Path script = Path.of(NfsKernelClientTest.class.getResource("/nfs/guest-suite.sh").toURI());
        // the guest's busybox has no flock(1): util-linux's is copied in (with its libraries) for the lock checks
        boolean xattrTools = Files.isExecutable(Path.of(SETFATTR)) && Files.isExecutable(Path.of(GETFATTR));
        List<String> cmd = new ArrayList<>(List.of(nfsVm.toString(), "--server-port", String.valueOf(gateway.port()), "--export", "/", "--vers", vers,
                "--include-bin", FLOCK, "--include-bin", GNU_CP, "--include-bin", FALLOCATE));
        if (xattrTools) cmd.addAll(List.of("--include-bin", SETFATTR, "--include-bin", GETFATTR));
        else System.out.println("note: " + SETFATTR + " (Debian's attr) not found: the guest's extended attribute checks are skipped");
        cmd.addAll(List.of("--timeout", String.valueOf(VM_TIMEOUT_SECONDS - 60), "--script", script.toString(),
                "--", dir, "8", String.valueOf(files), expected, chunky, holey));
        // the VM's output goes to a file as it runs (target/nfs-vm-VERS.log), to watch a slow run
        Path log = Path.of("target", "nfs-vm-" + vers + ".log").toAbsolutePath();
        Files.createDirectories(log.getParent());
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(log.toFile())
                .redirectInput(ProcessBuilder.Redirect.from(new java.io.File("/dev/null"))).start();
        boolean finished = p.waitFor(VM_TIMEOUT_SECONDS, TimeUnit.SECONDS);
        if (!finished) p.destroyForcibly();
        String out = Files.readString(log);
        assertThat(finished).as("nfs-vm finished within %d s: %s", VM_TIMEOUT_SECONDS, out).isTrue();
        List<String> lines = out.lines().toList();
        List<String> failed = lines.stream().filter(l -> l.startsWith("not ok")).toList();
        assertThat(failed).as(out).isEmpty();
        assertThat(p.exitValue()).as(out).isZero();
        assertThat(lines.stream().filter(l -> l.startsWith("ok ")).count()).as(out).isGreaterThanOrEqualTo(57); // every check of the suite ran
        assertThat(lines).as(out).contains("ok mounted as " + expected);
        if (xattrTools && expected.equals("4.2")) assertThat(lines).as(out).contains("ok setfattr user.color", "ok and lists it");
        lines.stream().filter(l -> l.startsWith("# ")).forEach(l -> System.out.println(expected + " " + l)); // what the guest noted (its READ_PLUS count)
        checkOnHost(lines.stream().filter(l -> l.startsWith("host ")).toList());
    }

    /** What the guest says must hold, checked through the cluster's client library (not through NFS). */
    private static void checkOnHost(List<String> checks) throws IOException {
        assertThat(checks).isNotEmpty();
        try (RealClient c = cluster.client()) {
            List<String> md5s = new ArrayList<>();
            for (String line : checks) {
                String[] f = line.split(" ", 4);
                String path = "/" + f[2];
                switch (f[1]) {
                    case "md5" -> md5s.add(path + " " + f[3]);
                    case "content" -> assertThat(new String(read(c, path), StandardCharsets.UTF_8)).as(line).isEqualTo(f[3] + "\n");
                    case "absent" -> assertThat(c.list(parent(path)).stream().map(e -> e.name()).toList()).as(line).doesNotContain(name(path));
                    case "symlink" -> {
                        FileAttr a = c.lookup(path);
                        assertThat(a.type()).as(line).isEqualTo(FileType.SYMLINK);
                        assertThat(a.target()).as(line).isEqualTo(f[3]);
                    }
                    case "type" -> { // "host type PATH KIND [major:minor]": a special file, and a device's number
                        String[] want = f[3].split(" ");
                        FileAttr a = c.lookup(path);
                        assertThat(a.type()).as(line).isEqualTo(FileType.valueOf(want[0]));
                        if (want.length > 1) assertThat(a.target()).as(line).isEqualTo(want[1]);
                    }
                    case "mode" -> assertThat(Integer.toOctalString(c.lookup(path).mode())).as(line).isEqualTo(f[3]);
                    case "owner" -> assertThat(c.lookup(path).uid() + ":" + c.lookup(path).gid()).as(line).isEqualTo(f[3]);
                    case "size" -> assertThat(c.lookup(path).size()).as(line).isEqualTo(Long.parseLong(f[3]));
                    case "xattr", "noxattr" -> { // "host xattr PATH NAME VALUE", "host noxattr PATH NAME": as the master holds them
                        String[] nv = f[3].split(" ", 2);
                        long ino = c.lookup(path).inode();
                        List<String> names = c.await(cc -> cc.listXattrs(ino));
                        if (f[1].equals("noxattr")) {
                            assertThat(names).as(line).doesNotContain(nv[0]);
                        } else {
                            assertThat(names).as(line).contains(nv[0]);
                            assertThat(new String(c.await(cc -> cc.getXattr(ino, nv[0])), StandardCharsets.UTF_8)).as(line).isEqualTo(nv[1]);
                        }
                    }
                    default -> throw new AssertionError("unknown host check: " + line);
                }
            }
            // the last checksum of each file is what it holds now (the suite overwrites files in place)
            java.util.Map<String, String> last = new java.util.TreeMap<>();
            for (String m : md5s) last.put(m.substring(0, m.indexOf(' ')), m.substring(m.indexOf(' ') + 1));
            assertThat(last).as("files the suite checksummed").hasSizeGreaterThanOrEqualTo(2);
            for (var e : last.entrySet()) assertThat(md5(read(c, e.getKey()))).as(e.getKey()).isEqualTo(e.getValue());
        }
    }

    private static byte[] read(RealClient c, String path) throws IOException {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        c.get(path, out);
        return out.toByteArray();
    }

    private static String parent(String path) { return path.substring(0, path.lastIndexOf('/')).isEmpty() ? "/" : path.substring(0, path.lastIndexOf('/')); }

    private static String name(String path) { return path.substring(path.lastIndexOf('/') + 1); }

    private static String md5(byte[] b) {
        try {
            return HexFormat.of().formatHex(MessageDigest.getInstance("MD5").digest(b));
        } catch (java.security.NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }

}
