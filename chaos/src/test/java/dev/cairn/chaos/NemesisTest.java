package dev.cairn.chaos;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import org.junit.jupiter.api.Test;

/** The fault schedule: a function of the seed, within its rules, for every scenario and many seeds. */
class NemesisTest {
    static final List<String> CS = List.of("cs1", "cs2", "cs3", "cs4", "cs5");
    static final List<String> EVERY = List.of("master", "cs1", "cs2", "cs3", "cs4", "cs5", Nemesis.GATEWAY);

    @Test void theScheduleIsTheSeedsAndKeepsItsRules() {
        for (Nemesis.Scenario s : Nemesis.Scenario.values()) {
            for (long seed = 1; seed <= 300; seed++) {
                long duration = 20_000 + seed * 997 % 600_000;
                List<Nemesis.Fault> faults = Nemesis.schedule(s, seed, duration, CS);
                assertThat(Nemesis.schedule(s, seed, duration, CS)).as("same seed, same schedule").isEqualTo(faults);
                for (Nemesis.Fault f : faults) {
                    assertThat(f.endMillis()).as("healed before the quiet tail").isLessThanOrEqualTo(duration - Nemesis.QUIET_TAIL_MILLIS);
                    switch (s) {
                        case CHUNKSERVER_KILL -> assertThat(f.kind()).isEqualTo(Nemesis.Kind.KILL);
                        case CHUNKSERVER_STALL -> assertThat(f.kind()).isEqualTo(Nemesis.Kind.STALL);
                        case MASTER_KILL -> assertThat(f.target()).isEqualTo("master");
                        case GATEWAY_KILL -> assertThat(f.target()).isEqualTo(Nemesis.GATEWAY);
                        case CLOCK_STEP -> assertThat(Math.abs(f.amount())).isBetween(Nemesis.MIN_CLOCK_STEP_SECONDS, Nemesis.MAX_CLOCK_STEP_SECONDS);
                        case DISK_STALL -> assertThat(f.amount()).isBetween(Nemesis.MIN_STALL_MILLIS, Nemesis.MAX_STALL_MILLIS);
                        case QUORUM_LOSS -> assertThat(f.target()).matches("master(\\d)\\+master(?!\\1)\\d");
                        case POWER_LOSS -> assertThat(f.nodes(EVERY)).isSubsetOf(EVERY).isNotEmpty();
                        case MIXED -> assertThat(f.kind()).isIn(Nemesis.Kind.KILL, Nemesis.Kind.STALL);
                        case STORM -> assertThat(f.kind()).isIn((Object[]) Nemesis.Scenario.STORM_KINDS);
                        case PARTITION -> {
                            assertThat(f.kind()).isEqualTo(Nemesis.Kind.PARTITION);
                            assertThat(f.amount()).isIn(Nemesis.BOTH_WAYS, Nemesis.ONE_WAY, Nemesis.FROM_MASTERS);
                            if (f.amount() == Nemesis.FROM_MASTERS) assertThat(f.target()).matches("leader|master\\d|cs\\d\\+cs\\d");
                        }
                        case PACKET_LOSS -> {
                            assertThat(f.amount()).isBetween(Nemesis.MIN_LOSS_PERCENT, Nemesis.MAX_LOSS_PERCENT);
                            assertThat(f.target()).matches("leader|cs\\d|" + Nemesis.GATEWAY);
                        }
                        default -> { }
                    }
                    if (s == Nemesis.Scenario.CHUNKSERVER_KILL || s == Nemesis.Scenario.CHUNKSERVER_STALL || s == Nemesis.Scenario.DISK_STALL
                            || s == Nemesis.Scenario.DISK_ERROR) {
                        assertThat(f.target()).isIn(CS);
                    }
                    if (f.kind() != Nemesis.Kind.CLOCK_STEP && f.kind() != Nemesis.Kind.DISK_STALL && f.kind() != Nemesis.Kind.PARTITION
                            && f.kind() != Nemesis.Kind.PACKET_LOSS) {
                        assertThat(f.amount()).isZero();
                    }
                    for (long t = f.atMillis(); t < f.endMillis(); t += 250) {
                        long at = t;
                        List<Nemesis.Fault> now = faults.stream().filter(g -> g.atMillis() <= at && at < g.endMillis()).toList();
                        List<String> hit = now.stream().flatMap(g -> g.nodes(EVERY).stream()).toList();
                        assertThat(hit.stream().distinct().count()).as("one fault per node at a time").isEqualTo(hit.size());
                        if (now.stream().noneMatch(g -> g.target().equals(Nemesis.ALL))) {
                            assertThat(hit.stream().filter(n -> n.startsWith("cs")).count()).isLessThanOrEqualTo(Nemesis.MAX_CHUNKSERVERS_AT_ONCE);
                        } else {
                            assertThat(now).as("power loss of every node overlaps nothing").hasSize(1);
                        }
                    }
                }
                if (duration >= 60_000) assertThat(faults).as(s + " seed " + seed + " fires something in a minute").isNotEmpty();
            }
        }
        assertThat(Nemesis.schedule(Nemesis.Scenario.MIXED, 1, 60_000, CS)).isNotEqualTo(Nemesis.schedule(Nemesis.Scenario.MIXED, 2, 60_000, CS));
    }

    @Test void powerLossHitsOneNodeARackOrEveryNode() {
        List<String> targets = new java.util.ArrayList<>();
        for (long seed = 1; seed <= 40; seed++) {
            for (Nemesis.Fault f : Nemesis.schedule(Nemesis.Scenario.POWER_LOSS, seed, 120_000, CS)) targets.add(f.target());
        }
        assertThat(targets).contains("master", Nemesis.GATEWAY, Nemesis.ALL).anyMatch(CS::contains)
                .anySatisfy(t -> assertThat(t).matches("cs\\d\\+cs\\d"));
        assertThat(new Nemesis.Fault(0, Nemesis.Kind.POWER_LOSS, "cs2+cs4", 1, 0).nodes(EVERY)).containsExactly("cs2", "cs4");
        assertThat(new Nemesis.Fault(0, Nemesis.Kind.POWER_LOSS, Nemesis.ALL, 1, 0).nodes(EVERY)).isEqualTo(EVERY);
    }

    @Test void partitionsCutTheLeaderAMasterAServerARackOrTheGatewayEveryWay() {
        List<String> targets = new java.util.ArrayList<>();
        java.util.Set<Long> ways = new java.util.HashSet<>();
        List<String> fromMasters = new java.util.ArrayList<>();
        for (long seed = 1; seed <= 40; seed++) {
            for (Nemesis.Fault f : Nemesis.schedule(Nemesis.Scenario.PARTITION, seed, 120_000, CS)) {
                targets.add(f.target());
                ways.add(f.amount());
                if (f.amount() == Nemesis.FROM_MASTERS) fromMasters.add(f.target());
            }
        }
        assertThat(targets).contains(Nemesis.LEADER, Nemesis.GATEWAY).anyMatch(CS::contains)
                .anySatisfy(t -> assertThat(t).matches("leader\\+cs\\d"))
                .anySatisfy(t -> assertThat(t).matches("cs\\d\\+cs\\d"))
                .anySatisfy(t -> assertThat(t).matches("master\\d"));
        assertThat(ways).containsExactlyInAnyOrder(Nemesis.BOTH_WAYS, Nemesis.ONE_WAY, Nemesis.FROM_MASTERS);
        assertThat(fromMasters).as("a rack of two cut from the masters only, and a lone master from the other masters")
                .anySatisfy(t -> assertThat(t).matches("cs\\d\\+cs\\d")).anySatisfy(t -> assertThat(t).matches("leader|master\\d"));
        assertThat(Nemesis.Scenario.PARTITION.masters()).as("partitions are of a master group").isEqualTo(3);
        assertThat(Nemesis.Scenario.PARTITION.needsNetwork()).isTrue();
        assertThat(Nemesis.Scenario.MIXED.needsNetwork()).isFalse();
    }

    /** The storm mixes network faults with kills, stalls and power losses, at once on different nodes. */
    @Test void aStormMixesNetworkFaultsKillsStallsAndPowerLosses() {
        java.util.Set<Nemesis.Kind> kinds = new java.util.HashSet<>();
        boolean overlapping = false;
        for (long seed = 1; seed <= 40; seed++) {
            List<Nemesis.Fault> faults = Nemesis.schedule(Nemesis.Scenario.STORM, seed, 120_000, CS);
            for (Nemesis.Fault f : faults) kinds.add(f.kind());
            for (Nemesis.Fault a : faults) {
                for (Nemesis.Fault b : faults) {
                    boolean network = a.kind() == Nemesis.Kind.PARTITION || a.kind() == Nemesis.Kind.PACKET_LOSS;
                    if (network && b.kind() != a.kind() && b.atMillis() < a.endMillis() && a.atMillis() < b.endMillis()) overlapping = true;
                }
            }
        }
        assertThat(kinds).containsExactlyInAnyOrder(Nemesis.Scenario.STORM_KINDS);
        assertThat(overlapping).as("a network fault at once with another kind").isTrue();
        assertThat(Nemesis.Scenario.STORM.masters()).isEqualTo(3);
        assertThat(Nemesis.Scenario.STORM.needsNetwork()).isTrue();
        assertThat(Nemesis.Scenario.STORM.needsLossyDisks()).isTrue();
        assertThat(Nemesis.Scenario.STORM.metadata()).isEqualTo(LossyDisks.Metadata.JOURNALED);
    }

    @Test void scenariosAreNamedAsOnTheCommandLine() {
        assertThat(Nemesis.Scenario.parse("chunkserver-kill")).isEqualTo(Nemesis.Scenario.CHUNKSERVER_KILL);
        assertThatThrownBy(() -> Nemesis.Scenario.parse("meteor")).hasMessageContaining("known: all, chunkserver-kill");
    }
}
