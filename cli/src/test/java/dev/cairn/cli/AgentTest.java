package dev.cairn.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.cairn.chaos.LocalCluster;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The resident CLI as {@code ./cairn} reaches it: the launcher's own bash client ({@code build-support/agent-client.sh})
 * against an {@link Agent}, against a real local cluster. Output, errors and exit statuses must be what the same
 * command gives in a JVM of its own; a request the agent did not take must say so, so the launcher runs it itself.
 */
class AgentTest {
    @TempDir Path dir;
    static final Path CLIENT = Path.of("..", "build-support", "agent-client.sh").toAbsolutePath().normalize();

    /** What one call of the bash client did. */
    record Call(int served, String rc, String out, String err) {}

    private static Call call(Path agentDir, String... args) throws Exception {
        List<String> cmd = new ArrayList<>(List.of("bash", "-c",
                ". \"$0\"; d=\"$1\"; shift; if cairn_agent_call \"$d\" \"$@\"; then echo \"served rc=$CAIRN_AGENT_RC\" >&2; else echo 'not served' >&2; fi",
                CLIENT.toString(), agentDir.toString()));
        cmd.addAll(List.of(args));
        Process p = new ProcessBuilder(cmd).start();
        byte[] out = p.getInputStream().readAllBytes();
        String err = new String(p.getErrorStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(p.waitFor(60, TimeUnit.SECONDS)).isTrue();
        int at = err.lastIndexOf("served rc=");
        boolean served = at >= 0 && !err.contains("not served");
        return new Call(served ? 1 : 0, served ? err.substring(at + "served rc=".length()).strip() : "", new String(out, StandardCharsets.UTF_8),
                at >= 0 ? err.substring(0, at) : err.replace("not served", "").strip());
    }

    @Test void clientCommandsRunInTheAgentWithTheirOutputErrorsAndExitStatus() throws Exception {
        List<Integer> p = CliTest.freePorts(4);
        String master = "127.0.0.1:" + p.get(0);
        byte[] data = new byte[200_000];
        new SplittableRandom(9).nextBytes(data);
        Path src = dir.resolve("src.bin"), back = dir.resolve("back.bin"), agentDir = dir.resolve("agent");
        Files.write(src, data);
        Agent agent = Agent.open(agentDir, 60_000);
        Thread serving = new Thread(() -> {
            try {
                agent.serve();
            } catch (Exception e) {
                throw new AssertionError(e);
            }
        });
        serving.setDaemon(true);
        serving.start();
        assertThat(Files.getPosixFilePermissions(agentDir.resolve("token"))).as("the token is its owner's only")
                .containsExactlyInAnyOrder(java.nio.file.attribute.PosixFilePermission.OWNER_READ, java.nio.file.attribute.PosixFilePermission.OWNER_WRITE);
        try (LocalCluster cluster = LocalCluster.start(dir.resolve("data"), p.get(0), p.subList(1, 4))) {
            cluster.awaitReady();
            Call put = call(agentDir, "put", "--master", master, src.toString(), "/f");
            assertThat(put.served()).as(put.err()).isEqualTo(1);
            assertThat(put.rc()).as(put.err()).isEqualTo("0");
            assertThat(put.out()).contains("durable on every copy");

            Call get = call(agentDir, "get", "--master", master, "/f", back.toString());
            assertThat(get.rc()).as(get.err()).isEqualTo("0");
            assertThat(Files.readAllBytes(back)).isEqualTo(data);

            Call ls = call(agentDir, "ls", "--master", master, "/");
            assertThat(ls.rc()).isEqualTo("0");
            assertThat(ls.out()).contains("200000").contains(" f");

            Call again = call(agentDir, "put", "--master", master, src.toString(), "/f");
            assertThat(again.rc()).as("an error's status").isEqualTo("1");
            assertThat(again.err()).contains("already exists");
            assertThat(again.out()).isEmpty();

            Call missing = call(agentDir, "ls", "--master", master, "/nope");
            assertThat(missing.rc()).isEqualTo("1");
            assertThat(missing.err()).contains("no such file or directory");

            Call server = call(agentDir, "up");
            assertThat(server.rc()).as("servers are not the agent's").isEqualTo(String.valueOf(Main.EXIT_USAGE));
            assertThat(server.err()).contains("not run by the agent");

            Files.writeString(agentDir.resolve("token"), "not-the-token");
            Call stranger = call(agentDir, "mkdir", "--master", master, "/d");
            assertThat(stranger.served()).as("a request with the wrong token is not taken, and nothing is run").isZero();
            assertThat(Main.run("ls", "--master", master, "/d")).isEqualTo(1);
        }
        try (var left = Files.list(agentDir)) {
            assertThat(left.map(f -> f.getFileName().toString()).filter(n -> n.endsWith(".rc") || n.endsWith(".err")).toList())
                    .as("request files are removed by the caller").isEmpty();
        }
    }

    @Test void anIdleAgentExitsAndIsThenNotServing() throws Exception {
        Path agentDir = dir.resolve("idle");
        Agent agent = Agent.open(agentDir, 300);
        agent.serve(); // returns once idle
        assertThat(agentDir.resolve("port")).doesNotExist();
        assertThat(call(agentDir, "ls", "/").served()).isZero();
    }
}
