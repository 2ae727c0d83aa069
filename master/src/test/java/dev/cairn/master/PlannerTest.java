package dev.cairn.master;

import static org.assertj.core.api.Assertions.assertThat;
import static org.quicktheories.QuickTheory.qt;
import static org.quicktheories.generators.SourceDSL.longs;

import dev.cairn.core.proto.StorageClass;
import dev.cairn.core.proto.Types.DiskReport;
import dev.cairn.core.proto.Types.DiskState;
import dev.cairn.core.proto.Types.Topology;
import dev.cairn.master.ChunkRegistry.Holder;
import dev.cairn.master.ChunkRegistry.Server;
import dev.cairn.master.Planner.Action;
import dev.cairn.master.Planner.ChunkState;
import dev.cairn.master.Planner.Copy;
import dev.cairn.master.Planner.Drop;
import dev.cairn.master.Planner.Limits;
import dev.cairn.master.Planner.Plan;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;

/**
 * The planner's decisions on random cluster states: random servers (shared hosts and racks, disk labels,
 * usage, draining), random chunks of random classes with random current, duplicate and stale copies,
 * random actions already under way.
 */
class PlannerTest {
    static final String[] LABELS = {"", "ssd", "hdd"};

    /** A random cluster and its chunks. */
    record Cluster(List<Server> servers, List<ChunkState> chunks, Map<String, Integer> busy, Limits limits) {
        Map<Long, ChunkState> byId() {
            Map<Long, ChunkState> out = new TreeMap<>();
            for (ChunkState s : chunks) out.put(s.chunkId(), s);
            return out;
        }
    }

    static Cluster random(long seed, int extraEmptyServers) {
        SplittableRandom r = new SplittableRandom(seed);
        List<Server> servers = new ArrayList<>();
        int n = 1 + r.nextInt(14);
        for (int i = 0; i < n; i++) servers.add(server("cs" + i, "h" + r.nextInt(Math.max(1, n - r.nextInt(4))), "r" + r.nextInt(3),
                LABELS[r.nextInt(LABELS.length)], r.nextDouble(), r.nextInt(6) == 0));
        for (Server s : servers) {
            // some disks failed, full or judged slow
            switch (r.nextInt(8)) {
                case 0 -> s.disks = List.of(new DiskReport("disk0", DiskState.FAILED, 0, 0, 0));
                case 1 -> s.disks = List.of(new DiskReport("disk0", DiskState.FULL, 0, 0, 0), new DiskReport("disk1", DiskState.OK, 0, 0, 0));
                case 2 -> {
                    s.disks = List.of(new DiskReport("disk0", DiskState.OK, 0, 0, 0));
                    s.slowDisks = Set.of("disk0");
                }
                default -> s.disks = List.of(new DiskReport("disk0", DiskState.OK, 0, 0, 0));
            }
            if (r.nextInt(6) == 0) s.beatsSinceRegistration = r.nextInt(DiskJudge.BEATS); // just (re)registered
        }
        for (int i = 0; i < extraEmptyServers; i++) servers.add(server("new" + i, "nh" + i, "nr" + i, "", 0, false));
        List<ChunkState> chunks = new ArrayList<>();
        int chunkCount = r.nextInt(40);
        for (long id = 1; id <= chunkCount; id++) {
            StorageClass cls = r.nextBoolean() ? StorageClass.replicated(1 + r.nextInt(4)) : StorageClass.ec(1 + r.nextInt(4), 1 + r.nextInt(3));
            cls = cls.withDomain(StorageClass.Domain.values()[r.nextInt(3)]);
            if (extraEmptyServers == 0 && r.nextInt(5) == 0) cls = cls.withDisk(LABELS[1 + r.nextInt(2)]);
            List<Server> shuffled = new ArrayList<>(servers.subList(0, n));
            for (int i = shuffled.size() - 1; i > 0; i--) {
                int j = r.nextInt(i + 1);
                Server t = shuffled.get(i);
                shuffled.set(i, shuffled.get(j));
                shuffled.set(j, t);
            }
            int holders = r.nextInt(Math.min(n, cls.parts() + 2) + 1);
            List<Holder> current = new ArrayList<>();
            // a replicated copy may be current a version behind (left out of a lease that wrote nothing, data version 1)
            for (int i = 0; i < holders; i++) {
                current.add(new Holder(shuffled.get(i), cls.isEc() ? r.nextInt(cls.parts()) : 0, !cls.isEc() && r.nextInt(3) == 0 ? 1 : 2));
            }
            List<Server> stale = new ArrayList<>();
            for (int i = holders; i < n; i++) {
                if (r.nextInt(4) == 0) {
                    Server s = shuffled.get(i);
                    s.staleChunks.put(id, 1L);
                    stale.add(s);
                }
            }
            chunks.add(new ChunkState(id, 2, cls, current, stale));
        }
        Map<String, Integer> busy = new HashMap<>();
        for (Server s : servers) if (r.nextInt(4) == 0) busy.put(s.id, r.nextInt(3));
        Limits limits = new Limits(1 + r.nextInt(3), 1 + r.nextInt(64), 0.05, 0.95);
        return new Cluster(servers, chunks, busy, limits);
    }

    static Server server(String id, String host, String rack, String disk, double used, boolean draining) {
        Server s = new Server(id);
        s.topology = new Topology(host, rack, disk);
        s.capacityBytes = 1_000_000;
        s.usedBytes = (long) (used * s.capacityBytes);
        s.draining = draining;
        s.alive = true;
        s.beatsSinceRegistration = DiskJudge.BEATS; // its disks judged sound
        return s;
    }

    static Plan plan(Cluster c, boolean deletes) {
        return Planner.plan(c.servers(), c.chunks(), c.busy(), Set.of(), c.limits(), deletes);
    }

    @Test void deletionsNeverTakeAChunkBelowItsGoalNorRemoveItsLastCurrentCopy() {
        qt().withExamples(2000).forAll(longs().all()).checkAssert(seed -> {
            Cluster c = random(seed, 0);
            Plan plan = plan(c, true);
            for (ChunkState chunk : c.chunks()) {
                Set<String> dropped = new HashSet<>();
                for (Action a : plan.actions()) if (a instanceof Drop d && d.chunkId() == chunk.chunkId()) dropped.add(d.server().id);
                List<Holder> left = new ArrayList<>();
                for (Holder h : chunk.current()) if (!dropped.contains(h.server().id)) left.add(h);
                boolean droppedCurrent = left.size() < chunk.current().size();
                boolean droppedStale = false;
                for (Server s : chunk.stale()) droppedStale |= dropped.contains(s.id);
                if (droppedCurrent || droppedStale) {
                    ChunkState after = new ChunkState(chunk.chunkId(), chunk.version(), chunk.cls(), left, List.of());
                    if (Planner.missing(chunk) > 0) {
                        // none below goal, not even a second copy of an EC part to make room for a missing one: that
                        // is rebuilt over the duplicate, which goes only once the new part is durable
                        assertThat(false).as("deleting from an under-goal chunk %s", chunk).isTrue();
                    } else {
                        assertThat(Planner.missing(after)).as("deletions leave chunk %s at goal", chunk).isZero();
                    }
                    if (droppedCurrent) {
                        // what stands in for a dropped copy is on servers whose disks are judged sound since they came back
                        List<Holder> vouched = new ArrayList<>();
                        for (Holder h : left) if (h.server().vouched()) vouched.add(h);
                        ChunkState sound = new ChunkState(chunk.chunkId(), chunk.version(), chunk.cls(), vouched, List.of());
                        assertThat(Planner.missing(sound)).as("copies of %s dropped for ones on servers not vouched for", chunk).isZero();
                    }
                    assertThat(left).as("last current copy of %s", chunk).isNotEmpty();
                }
            }
        });
    }

    @Test void newCopiesGoToEligibleServersInDistinctFailureDomains() {
        qt().withExamples(2000).forAll(longs().all()).checkAssert(seed -> {
            Cluster c = random(seed, 0);
            Plan plan = plan(c, true);
            Map<Long, ChunkState> byId = c.byId();
            Map<Long, Set<String>> domains = new HashMap<>();
            for (Action a : plan.actions()) {
                if (!(a instanceof Copy copy)) continue;
                ChunkState chunk = byId.get(copy.chunkId());
                StorageClass cls = chunk.cls();
                Server t = copy.target();
                if (copy.replacesPart() >= 0) {
                    // a missing part rebuilt over a second copy of another part, where no other server can take it
                    assertThat(cls.isEc()).isTrue();
                    int twins = 0;
                    boolean targetHolds = false;
                    for (Holder h : chunk.current()) {
                        if (h.part() == copy.replacesPart()) twins++;
                        if (h.server() == t) targetHolds |= h.part() == copy.replacesPart() && !Planner.leaving(h, cls);
                        // missing, or held only where it is leaving (a draining server, a wrong disk label)
                        if (h.part() == copy.part()) assertThat(Planner.leaving(h, cls)).as("the part rebuilt is missing from %s", chunk).isTrue();
                    }
                    assertThat(targetHolds).as("the target holds the part replaced and stays in the layout").isTrue();
                    assertThat(twins).as("the part replaced is held twice or more").isGreaterThanOrEqualTo(2);
                    Set<Integer> parts = new HashSet<>();
                    for (Holder h : copy.sources()) {
                        parts.add(h.part());
                        assertThat(h.server()).isNotSameAs(t);
                    }
                    assertThat(parts).as("rebuild sources").hasSize(cls.k()).doesNotContain(copy.part());
                    continue;
                }
                // a stale copy on the target gives way to the new part only where the master judges it stale
                assertThat(copy.replacesPart() == dev.cairn.core.proto.MasterProtocol.ReplicateChunk.REPLACES_STALE)
                        .as("copy %s replaces a stale copy exactly when its target holds one of erasure-coded %s", copy, chunk)
                        .isEqualTo(cls.isEc() && chunk.stale().contains(t));
                assertThat(t.alive && !t.draining).as("target %s live and in service", t.id).isTrue();
                assertThat(t.hasUsableDisk()).as("target %s has a disk neither failed, full nor slow", t.id).isTrue();
                assertThat(cls.disk().isEmpty() || cls.disk().equals(t.topology.disk())).as("disk label").isTrue();
                for (Holder h : chunk.current()) assertThat(h.server()).as("target already holds %s", chunk).isNotSameAs(t);
                Set<String> used = domains.computeIfAbsent(copy.chunkId(), id -> {
                    Set<String> d = new HashSet<>(); // domains of copies that stay (not draining, right disk label)
                    for (Holder h : chunk.current()) if (!Planner.leaving(h, cls)) d.add(h.server().domain(cls.domain()));
                    return d;
                });
                if (copy.reason() != Planner.Reason.BALANCE) {
                    assertThat(used.add(t.domain(cls.domain()))).as("copy of %s into a domain it already uses", chunk).isTrue();
                }
                if (cls.isEc() && copy.sources().get(0).part() != copy.part()) { // a rebuild
                    Set<Integer> parts = new HashSet<>();
                    for (Holder h : copy.sources()) parts.add(h.part());
                    assertThat(parts).as("rebuild sources").hasSize(cls.k()).doesNotContain(copy.part());
                } else {
                    assertThat(copy.sources()).hasSize(1);
                    assertThat(copy.sources().get(0).part()).isEqualTo(copy.part());
                }
            }
        });
    }

    @Test void noServerTakesPartInMoreActionsThanItsLimit() {
        qt().withExamples(2000).forAll(longs().all()).checkAssert(seed -> {
            Cluster c = random(seed, 0);
            Map<String, Integer> load = new HashMap<>(c.busy());
            for (Action a : plan(c, true).actions()) {
                if (a instanceof Copy copy) {
                    load.merge(copy.target().id, 1, Integer::sum);
                    for (Holder h : copy.sources()) load.merge(h.server().id, 1, Integer::sum);
                } else if (a instanceof Drop d) {
                    load.merge(d.server().id, 1, Integer::sum);
                }
            }
            for (Server s : c.servers()) {
                int before = c.busy().getOrDefault(s.id, 0);
                assertThat(load.getOrDefault(s.id, 0)).as("load of %s", s.id).isLessThanOrEqualTo(Math.max(before, c.limits().perServer()));
            }
        });
    }

    @Test void theMostEndangeredChunksComeFirst() {
        qt().withExamples(1000).forAll(longs().all()).checkAssert(seed -> {
            // plenty of empty servers in their own domains: every under-goal chunk could be repaired
            Cluster c = random(seed, 40);
            Cluster one = new Cluster(c.servers(), c.chunks(), Map.of(), new Limits(1_000, 1, 0.05, 0.95));
            Plan plan = plan(one, true);
            int least = Integer.MAX_VALUE;
            for (ChunkState s : c.chunks()) if (Planner.missing(s) > 0 && Planner.redundancy(s) >= 0) least = Math.min(least, Planner.redundancy(s));
            if (least == Integer.MAX_VALUE) return;
            assertThat(plan.actions()).hasSize(1);
            Copy first = (Copy) plan.actions().get(0);
            ChunkState chosen = c.chunks().stream().filter(s -> s.chunkId() == first.chunkId()).findFirst().orElseThrow();
            assertThat(Planner.redundancy(chosen)).as("repairs %s first", chosen).isEqualTo(least);
            // and in a full plan, repairs are in order of remaining redundancy
            Plan all = plan(new Cluster(c.servers(), c.chunks(), Map.of(), new Limits(1_000, 10_000, 0.05, 0.95)), true);
            int last = Integer.MIN_VALUE;
            for (Action a : all.actions()) {
                if (!(a instanceof Copy copy)) continue;
                ChunkState s = c.chunks().stream().filter(x -> x.chunkId() == copy.chunkId()).findFirst().orElseThrow();
                if (Planner.missing(s) == 0) continue; // tidying's copy of a newer leaving copy, after the repairs
                assertThat(Planner.redundancy(s)).isGreaterThanOrEqualTo(last);
                last = Planner.redundancy(s);
                // with room everywhere, every missing copy of every readable chunk is planned
            }
            for (ChunkState s : c.chunks()) {
                if (Planner.redundancy(s) < 0 || Planner.missing(s) == 0 || !s.cls().disk().isEmpty()) continue;
                long planned = all.actions().stream().filter(a -> a instanceof Copy x && x.chunkId() == s.chunkId()).count();
                assertThat(planned).as("copies planned for %s", s).isEqualTo(Planner.missing(s));
            }
        });
    }

    @Test void duringTheGraceWindowNothingIsDeleted() {
        qt().withExamples(500).forAll(longs().all()).checkAssert(seed -> {
            for (Action a : plan(random(seed, 0), false).actions()) assertThat(a).isInstanceOf(Copy.class);
        });
    }

    @Test void aDeadServersChunksAreCopiedAndItsReturnLeavesExtrasThatAreDropped() {
        List<Server> s = new ArrayList<>();
        for (int i = 0; i < 4; i++) s.add(server("cs" + i, "h" + i, "r0", "", 0.1 * i, false));
        StorageClass three = StorageClass.replicated(3);
        // cs2 is gone: the chunk has two copies left
        ChunkState under = new ChunkState(7, 3, three, List.of(new Holder(s.get(0), 0, 3), new Holder(s.get(1), 0, 3)), List.of());
        Plan p = Planner.plan(List.of(s.get(0), s.get(1), s.get(3)), List.of(under), Map.of(), Set.of(), Limits.DEFAULT, true);
        assertThat(p.actions()).singleElement().isInstanceOfSatisfying(Copy.class, c -> assertThat(c.target()).isSameAs(s.get(3)));
        assertThat(p.counts().underGoal()).isEqualTo(1);
        // copied to cs3, then cs2 comes back with its copy: four copies, the one on the fullest server goes
        ChunkState over = new ChunkState(7, 3, three, List.of(new Holder(s.get(0), 0, 3), new Holder(s.get(1), 0, 3), new Holder(s.get(2), 0, 3),
                new Holder(s.get(3), 0, 3)), List.of());
        // while two of the four servers have just re-registered (their disks not yet judged), one of them must be kept,
        // and nothing is dropped: its copy may be on a disk that stalled or died while it was away (sim group seed 48)
        s.get(2).beatsSinceRegistration = 0;
        s.get(3).beatsSinceRegistration = DiskJudge.BEATS - 1;
        assertThat(Planner.plan(s, List.of(over), Map.of(), Set.of(), Limits.DEFAULT, true).actions()).isEmpty();
        // one judged sound: the copy of the other (not vouched for) is the extra that goes
        s.get(3).beatsSinceRegistration = DiskJudge.BEATS;
        assertThat(Planner.plan(s, List.of(over), Map.of(), Set.of(), Limits.DEFAULT, true).actions())
                .singleElement().isInstanceOfSatisfying(Drop.class, d -> assertThat(d.server()).isSameAs(s.get(2)));
        s.get(2).beatsSinceRegistration = DiskJudge.BEATS;
        p = Planner.plan(s, List.of(over), Map.of(), Set.of(), Limits.DEFAULT, true);
        assertThat(p.actions()).singleElement().isInstanceOfSatisfying(Drop.class, d -> assertThat(d.server()).isSameAs(s.get(3)));
        assertThat(p.counts().overGoal()).isEqualTo(1);
        // a lost erasure-coded part is rebuilt from k others
        ChunkState ec = new ChunkState(8, 1, StorageClass.ec(2, 1), List.of(new Holder(s.get(0), 0, 1), new Holder(s.get(1), 2, 1)), List.of());
        p = Planner.plan(s, List.of(ec), Map.of(), Set.of(), Limits.DEFAULT, true);
        assertThat(p.actions()).singleElement().isInstanceOfSatisfying(Copy.class, c -> {
            assertThat(c.part()).isEqualTo(1);
            assertThat(c.sources()).extracting(Holder::part).containsExactlyInAnyOrder(0, 2);
        });
    }

    /**
     * A draining copy at v3 and a copy current a version behind (v1: the data committed is v1's, but writes synced
     * under the v3 lease may not be committed yet): the v3 copy is not dropped for the v1 one; v3 is copied to a
     * server that stays first (sim seed 13090: dropped, and the commit then acknowledged two copies of three).
     */
    @Test void aDrainingCopyNewerThanAKeptOneIsCopiedBeforeItIsDropped() {
        List<Server> s = new ArrayList<>();
        for (int i = 0; i < 5; i++) s.add(server("cs" + i, "h" + i, "r0", "", 0.1 * i, i == 2));
        ChunkState c = new ChunkState(11, 3, StorageClass.replicated(3), List.of(new Holder(s.get(0), 0, 3), new Holder(s.get(1), 0, 3),
                new Holder(s.get(2), 0, 3), new Holder(s.get(3), 0, 1)), List.of());
        Plan p = Planner.plan(s, List.of(c), Map.of(), Set.of(), Limits.DEFAULT, true);
        assertThat(p.actions()).noneMatch(a -> a instanceof Drop);
        assertThat(p.actions()).singleElement().isInstanceOfSatisfying(Copy.class, copy -> {
            assertThat(copy.target()).isSameAs(s.get(4));
            assertThat(copy.version()).isEqualTo(3);
        });
        // no server to copy to: dropped as before (kept, the chunk would stay over goal for good if v3 is never committed)
        Plan none = Planner.plan(s.subList(0, 4), List.of(c), Map.of(), Set.of(), Limits.DEFAULT, true);
        assertThat(none.actions()).singleElement().isInstanceOfSatisfying(Drop.class, d -> assertThat(d.server()).isSameAs(s.get(2)));
        // all kept copies at v3: the draining one goes
        ChunkState settled = new ChunkState(11, 3, StorageClass.replicated(3), List.of(new Holder(s.get(0), 0, 3), new Holder(s.get(1), 0, 3),
                new Holder(s.get(2), 0, 3), new Holder(s.get(4), 0, 3)), List.of());
        assertThat(Planner.plan(s, List.of(settled), Map.of(), Set.of(), Limits.DEFAULT, true).actions()).singleElement()
                .isInstanceOfSatisfying(Drop.class, d -> assertThat(d.server()).isSameAs(s.get(2)));
    }

    /**
     * Part 0 held twice (a server came back with it after it was copied elsewhere), part 2 missing, and no other
     * server to take it: part 2 is rebuilt over the second part 0, which is not dropped first (sim seed 12419:
     * dropped first, its twin turned out silently corrupt).
     */
    @Test void aMissingPartWithNoServerFreeIsRebuiltOverADuplicatePartNotAfterDroppingIt() {
        List<Server> s = new ArrayList<>();
        for (int i = 0; i < 3; i++) s.add(server("cs" + i, "h" + i, "r0", "", 0.1 * i, false));
        ChunkState dup = new ChunkState(9, 1, StorageClass.ec(2, 1), List.of(new Holder(s.get(0), 0, 1), new Holder(s.get(1), 0, 1),
                new Holder(s.get(2), 1, 1)), List.of());
        Plan p = Planner.plan(s, List.of(dup), Map.of(), Set.of(), Limits.DEFAULT, true);
        assertThat(p.actions()).singleElement().isInstanceOfSatisfying(Copy.class, c -> {
            assertThat(c.part()).isEqualTo(2);
            assertThat(c.replacesPart()).isZero();
            assertThat(c.target()).isIn(s.get(0), s.get(1));
            assertThat(c.sources()).extracting(Holder::part).containsExactlyInAnyOrder(0, 1);
            assertThat(c.sources()).extracting(Holder::server).doesNotContain(c.target());
        });
        assertThat(Planner.plan(s, List.of(dup), Map.of(), Set.of(), Limits.DEFAULT, false).actions()).as("not during the grace window").isEmpty();
    }

    @Test void anEmptyServerIsFilledUntilUsageIsWithinTheSpread() {
        List<Server> s = new ArrayList<>();
        for (int i = 0; i < 3; i++) s.add(server("cs" + i, "h" + i, "r0", "", 0.5, false));
        Server empty = server("cs3", "h3", "r0", "", 0.0, false);
        s.add(empty);
        List<ChunkState> chunks = new ArrayList<>();
        for (long id = 1; id <= 10; id++) {
            chunks.add(new ChunkState(id, 1, StorageClass.replicated(2), List.of(new Holder(s.get((int) id % 3), 0, 1), new Holder(s.get((int) (id + 1) % 3), 0, 1)), List.of()));
        }
        Plan p = Planner.plan(s, chunks, Map.of(), Set.of(), Limits.DEFAULT, true);
        assertThat(p.actions()).isNotEmpty().allSatisfy(a -> assertThat(((Copy) a).target()).isSameAs(empty));
        for (Server x : s) x.usedBytes = x.capacityBytes * 30 / 100; // balanced
        assertThat(Planner.plan(s, chunks, Map.of(), Set.of(), Limits.DEFAULT, true).actions()).isEmpty();
    }

    @Test void copiesTakeTheirSourcesVersionAndTidyingKeepsTheNewestCopy() {
        qt().withExamples(2000).forAll(longs().all()).checkAssert(seed -> {
            Cluster c = random(seed, 0);
            Plan plan = plan(c, true);
            Map<Long, ChunkState> byId = c.byId();
            Map<Long, Set<String>> dropped = new HashMap<>();
            for (Action a : plan.actions()) {
                if (a instanceof Copy copy) {
                    // a copy is made at its sources' version: reading a source at any other version fails
                    for (Holder h : copy.sources()) assertThat(h.version()).as("source of %s", copy).isEqualTo(copy.version());
                    if (copy.cls().isEc()) assertThat(copy.version()).isEqualTo(byId.get(copy.chunkId()).version());
                } else if (a instanceof Drop d && d.reason() != Planner.Reason.STALE) {
                    dropped.computeIfAbsent(d.chunkId(), k -> new HashSet<>()).add(d.server().id);
                    long held = -1;
                    for (Holder h : byId.get(d.chunkId()).current()) if (h.server() == d.server()) held = h.version();
                    assertThat(d.version()).as("drop of %s at the version it holds", d).isEqualTo(held);
                }
            }
            for (Map.Entry<Long, Set<String>> e : dropped.entrySet()) {
                ChunkState chunk = byId.get(e.getKey());
                if (chunk.current().stream().anyMatch(h -> Planner.leaving(h, chunk.cls()))) continue;
                long newest = chunk.current().stream().mapToLong(Holder::version).max().orElseThrow();
                boolean kept = chunk.current().stream().anyMatch(h -> h.version() == newest && !e.getValue().contains(h.server().id));
                // a late commit of the newest version would make every older copy outdated at once
                assertThat(kept).as("a copy at the newest version v%d of %s survives", newest, chunk).isTrue();
            }
        });
    }

    @Test void aCopyLeftOutOfALeaseIsDroppedBeforeTheCopiesThatTookIt() {
        List<Server> s = new ArrayList<>();
        for (int i = 0; i < 4; i++) s.add(server("cs" + i, "h" + i, "r0", "", 0.1 * (3 - i), false));
        // cs3 (the emptiest) was left out of the lease at v5: still current at v4, yet the one to go
        ChunkState over = new ChunkState(7, 5, StorageClass.replicated(3), List.of(new Holder(s.get(0), 0, 5), new Holder(s.get(1), 0, 5),
                new Holder(s.get(2), 0, 5), new Holder(s.get(3), 0, 4)), List.of());
        Plan p = Planner.plan(s, List.of(over), Map.of(), Set.of(), Limits.DEFAULT, true);
        assertThat(p.actions()).singleElement().isInstanceOfSatisfying(Drop.class, d -> {
            assertThat(d.server()).isSameAs(s.get(3));
            assertThat(d.version()).isEqualTo(4);
        });
        // with only it and one newer copy left, the newer one is the copy's source
        ChunkState under = new ChunkState(7, 5, StorageClass.replicated(3), List.of(new Holder(s.get(0), 0, 5), new Holder(s.get(3), 0, 4)), List.of());
        p = Planner.plan(s, List.of(under), Map.of(), Set.of(), Limits.DEFAULT, true);
        assertThat(p.actions()).singleElement().isInstanceOfSatisfying(Copy.class, c -> {
            assertThat(c.sources()).extracting(h -> h.server()).containsExactly(s.get(0));
            assertThat(c.version()).isEqualTo(5);
        });
    }

    /**
     * The master plans only chunks that changed since they were last found settled: a settled chunk must need
     * nothing (balance aside), whatever the servers around it, so leaving it out changes no plan.
     */
    /**
     * A repair copies from the newest copy (a copy a version behind holds the data too, but a late commit of the newer
     * version would make the new copy outdated at once), then from the least loaded, then the first listed (boundaries
     * the mutation run found unjudged).
     */
    @Test void aRepairCopiesFromTheNewestCopyThenTheLeastLoaded() {
        List<Server> s = new ArrayList<>();
        for (int i = 0; i < 4; i++) s.add(server("cs" + i, "h" + i, "r0", "", 0.1, false));
        ChunkState mixed = new ChunkState(21, 3, StorageClass.replicated(3), List.of(new Holder(s.get(0), 0, 2), new Holder(s.get(1), 0, 3)), List.of());
        assertThat(Planner.plan(s, List.of(mixed), Map.of(), Set.of(), Limits.DEFAULT, true).actions()).singleElement()
                .isInstanceOfSatisfying(Copy.class, copy -> {
                    assertThat(copy.sources()).extracting(h -> h.server().id).containsExactly("cs1");
                    assertThat(copy.version()).isEqualTo(3);
                });
        ChunkState same = new ChunkState(22, 3, StorageClass.replicated(3), List.of(new Holder(s.get(0), 0, 3), new Holder(s.get(1), 0, 3)), List.of());
        assertThat(Planner.plan(s, List.of(same), Map.of("cs0", 1), Set.of(), Limits.DEFAULT, true).actions()).singleElement()
                .isInstanceOfSatisfying(Copy.class, copy -> assertThat(copy.sources()).extracting(h -> h.server().id).containsExactly("cs1"));
        assertThat(Planner.plan(s, List.of(same), Map.of(), Set.of(), Limits.DEFAULT, true).actions()).singleElement()
                .isInstanceOfSatisfying(Copy.class, copy -> assertThat(copy.sources()).extracting(h -> h.server().id).containsExactly("cs0"));
    }

    @Test void aSettledChunkNeedsNothing() {
        qt().withExamples(2000).forAll(longs().all()).checkAssert(seed -> {
            Cluster c = random(seed, 0);
            Limits noBalance = new Limits(c.limits().perServer(), c.limits().maxActions(), 1.0, c.limits().fullFraction());
            for (ChunkState chunk : c.chunks()) {
                if (!Planner.settled(chunk)) continue;
                Plan p = Planner.plan(c.servers(), List.of(chunk), Map.of(), Set.of(), noBalance, true);
                assertThat(p.actions()).as("settled chunk %s", chunk).isEmpty();
                assertThat(p.counts().underGoal() + p.counts().overGoal() + p.counts().stale() + p.counts().lost()).isZero();
            }
        });
    }

    @Test void balanceMovesComeFromThePoolTheMasterOffers() {
        List<Server> s = new ArrayList<>();
        for (int i = 0; i < 4; i++) s.add(server("cs" + i, "h" + i, "r" + i, "", i == 0 ? 0.9 : i == 3 ? 0.0 : 0.5, false));
        ChunkState onFull = new ChunkState(7, 2, StorageClass.replicated(2), List.of(new Holder(s.get(0), 0, 2), new Holder(s.get(1), 0, 2)), List.of());
        // the pass looked at no chunk (nothing changed); the balance move still finds one on the fullest server
        Plan p = Planner.plan(s, List.of(), Map.of(), Set.of(), Limits.DEFAULT, true, server -> server == s.get(0) ? List.of(onFull) : List.of());
        assertThat(p.actions()).singleElement().satisfies(a -> {
            assertThat(a).isInstanceOf(Copy.class);
            assertThat(((Copy) a).target().id).isEqualTo("cs3");
            assertThat(((Copy) a).sources()).extracting(h -> h.server().id).containsExactly("cs0");
        });
    }
    /**
     * {@code ./cairn status}'s counts, one chunk of each kind (boundaries the mutation run found unjudged): a chunk
     * with no copy is lost, one a single loss from lost is endangered unless its class tolerates none, a draining copy
     * of a chunk still short of its goal is not an extra one, and every stale copy counts.
     */
    @Test void statusCountsEachKindOfChunk() {
        List<Server> s = new ArrayList<>();
        for (int i = 0; i < 4; i++) s.add(server("cs" + i, "h" + i, "r0", "", 0.1, i == 3));
        StorageClass two = StorageClass.replicated(2);
        List<ChunkState> chunks = List.of(
                new ChunkState(1, 1, two, List.of(), List.of()), // lost (and under goal)
                new ChunkState(2, 1, two, List.of(new Holder(s.get(0), 0, 1)), List.of()), // endangered, under goal
                new ChunkState(3, 1, StorageClass.replicated(1), List.of(new Holder(s.get(0), 0, 1)), List.of()), // tolerates no loss: fine
                new ChunkState(4, 1, StorageClass.ec(2, 1), List.of(new Holder(s.get(0), 0, 1), new Holder(s.get(1), 1, 1)), List.of()), // endangered, under
                new ChunkState(5, 1, two, List.of(new Holder(s.get(0), 0, 1), new Holder(s.get(1), 0, 1), new Holder(s.get(2), 0, 1)), List.of()), // over
                new ChunkState(6, 1, two, List.of(new Holder(s.get(0), 0, 1), new Holder(s.get(3), 0, 1)), List.of()), // draining copy: under, not over, not endangered
                new ChunkState(7, 2, two, List.of(new Holder(s.get(0), 0, 2), new Holder(s.get(1), 0, 2)), List.of(s.get(2), s.get(3)))); // 2 stale
        Planner.Counts counts = Planner.plan(s, chunks, Map.of(), Set.of(), Limits.DEFAULT, false).counts();
        assertThat(counts).isEqualTo(new Planner.Counts(7, 4, 1, 2, 1, 2));
    }

    /** A chunk with exactly its goal of current copies and a stale one: the stale copy goes, nothing else does. */
    @Test void aStaleCopyOfAChunkAtExactlyItsGoalIsDropped() {
        List<Server> s = new ArrayList<>();
        for (int i = 0; i < 3; i++) s.add(server("cs" + i, "h" + i, "r0", "", 0.1, false));
        s.get(2).staleChunks.put(7L, 1L);
        ChunkState c = new ChunkState(7, 2, StorageClass.replicated(2), List.of(new Holder(s.get(0), 0, 2), new Holder(s.get(1), 0, 2)), List.of(s.get(2)));
        assertThat(Planner.plan(s, List.of(c), Map.of(), Set.of(), Limits.DEFAULT, true).actions()).singleElement()
                .isInstanceOfSatisfying(Drop.class, d -> {
                    assertThat(d.server()).isSameAs(s.get(2));
                    assertThat(d.reason()).isEqualTo(Planner.Reason.STALE);
                    assertThat(d.version()).isEqualTo(1);
                });
    }

    /**
     * A class with a disk label: a copy on a server without the label leaves (copied to a labelled server first, then
     * dropped); a class without one is content on labelled servers.
     */
    @Test void aCopyOnAServerWithoutTheClassesLabelIsMovedToOneWithIt() {
        List<Server> s = List.of(server("cs0", "h0", "r0", "ssd", 0.1, false), server("cs1", "h1", "r0", "hdd", 0.1, false),
                server("cs2", "h2", "r0", "", 0.0, false), server("cs3", "h3", "r0", "ssd", 0.2, false));
        StorageClass ssd = StorageClass.replicated(2).withDisk("ssd");
        ChunkState misplaced = new ChunkState(7, 1, ssd, List.of(new Holder(s.get(0), 0, 1), new Holder(s.get(1), 0, 1)), List.of());
        assertThat(Planner.plan(s, List.of(misplaced), Map.of(), Set.of(), Limits.DEFAULT, true).actions()).singleElement()
                .isInstanceOfSatisfying(Copy.class, c -> {
                    assertThat(c.target()).as("the only other ssd server, though not the emptiest").isSameAs(s.get(3));
                    assertThat(c.sources()).extracting(h -> h.server().id).containsExactly("cs0");
                });
        ChunkState moved = new ChunkState(7, 1, ssd, List.of(new Holder(s.get(0), 0, 1), new Holder(s.get(1), 0, 1), new Holder(s.get(3), 0, 1)), List.of());
        assertThat(Planner.plan(s, List.of(moved), Map.of(), Set.of(), Limits.DEFAULT, true).actions()).singleElement()
                .isInstanceOfSatisfying(Drop.class, d -> {
                    assertThat(d.server()).isSameAs(s.get(1));
                    assertThat(d.reason()).isEqualTo(Planner.Reason.DRAIN);
                });
        Limits noBalance = new Limits(2, 64, 1.0, 0.95);
        ChunkState anywhere = new ChunkState(8, 1, StorageClass.replicated(2), List.of(new Holder(s.get(0), 0, 1), new Holder(s.get(1), 0, 1)), List.of());
        assertThat(Planner.settled(anywhere)).isTrue();
        assertThat(Planner.plan(s, List.of(anywhere), Map.of(), Set.of(), noBalance, true).actions()).isEmpty();
    }

    /**
     * A new copy goes to the least-full eligible server (the first listed of equals); tidying drops the copy on the
     * fullest server whatever the servers' names.
     */
    @Test void newCopiesGoToTheEmptiestServerAndExtrasLeaveTheFullest() {
        List<Server> s = List.of(server("cs0", "h0", "r0", "", 0.3, false), server("cs1", "h1", "r0", "", 0.4, false),
                server("cs2", "h2", "r0", "", 0.2, false), server("cs3", "h3", "r0", "", 0.1, false), server("cs4", "h4", "r0", "", 0.1, false),
                server("cs5", "h5", "r0", "", 0.5, false));
        ChunkState under = new ChunkState(7, 1, StorageClass.replicated(2), List.of(new Holder(s.get(0), 0, 1)), List.of());
        assertThat(Planner.plan(s, List.of(under), Map.of(), Set.of(), Limits.DEFAULT, true).actions()).singleElement()
                .isInstanceOfSatisfying(Copy.class, c -> assertThat(c.target()).isSameAs(s.get(3)));
        ChunkState over = new ChunkState(8, 1, StorageClass.replicated(2), List.of(new Holder(s.get(1), 0, 1), new Holder(s.get(0), 0, 1),
                new Holder(s.get(2), 0, 1)), List.of());
        assertThat(Planner.plan(s, List.of(over), Map.of(), Set.of(), Limits.DEFAULT, true).actions()).singleElement()
                .isInstanceOfSatisfying(Drop.class, d -> {
                    assertThat(d.server()).as("the fullest holder").isSameAs(s.get(1));
                    assertThat(d.reason()).isEqualTo(Planner.Reason.EXTRA);
                });
    }

    /** The newest version of a leaving copy is copied from a copy that stays where there is one, not from the leaving one. */
    @Test void aNewerDrainingCopyIsReplacedFromACopyThatStays() {
        List<Server> s = new ArrayList<>();
        for (int i = 0; i < 5; i++) s.add(server("cs" + i, "h" + i, "r0", "", 0.1 * i, i == 2));
        // cs0 at v3 stays (not leaving), cs2 at v3 drains, cs3 is a version behind: cs3 is kept over cs2, so v3 is copied first
        ChunkState c = new ChunkState(11, 3, StorageClass.replicated(2), List.of(new Holder(s.get(0), 0, 3), new Holder(s.get(2), 0, 3),
                new Holder(s.get(3), 0, 1)), List.of());
        assertThat(Planner.plan(s, List.of(c), Map.of(), Set.of(), Limits.DEFAULT, true).actions()).singleElement()
                .isInstanceOfSatisfying(Copy.class, copy -> {
                    assertThat(copy.sources()).extracting(h -> h.server().id).containsExactly("cs0");
                    assertThat(copy.version()).isEqualTo(3);
                    assertThat(copy.target()).isSameAs(s.get(1));
                });
        // the copy that stays busy: the draining one is the source (it still serves), and nothing is dropped
        assertThat(Planner.plan(s, List.of(c), Map.of("cs0", 2), Set.of(), Limits.DEFAULT, true).actions()).singleElement()
                .isInstanceOfSatisfying(Copy.class, copy -> assertThat(copy.sources()).extracting(h -> h.server().id).containsExactly("cs2"));
    }

    /**
     * Balance moves: none when the usage spread is exactly the limit, at most the servers' action limit counting what is
     * already under way, and never to a server without the class's disk label.
     */
    @Test void balanceMovesStayWithinTheSpreadTheLimitsAndTheLabels() {
        List<Server> s = new ArrayList<>();
        for (int i = 0; i < 3; i++) s.add(server("cs" + i, "h" + i, "r" + i, "ssd", i == 0 ? 0.5 : 0.25, false));
        s.add(server("cs3", "h3", "r3", "hdd", 0.0, false));
        List<ChunkState> onFull = new ArrayList<>();
        for (long id = 1; id <= 6; id++) onFull.add(new ChunkState(id, 1, StorageClass.replicated(2), List.of(new Holder(s.get(0), 0, 1), new Holder(s.get(1), 0, 1)), List.of()));
        Planner.BalancePool pool = server -> server == s.get(0) ? onFull : List.of();
        Limits halfSpread = new Limits(2, 64, 0.5, 0.95);
        assertThat(Planner.plan(s, List.of(), Map.of(), Set.of(), halfSpread, true, pool).actions()).as("0.5 apart, spread 0.5").isEmpty();
        Limits spread = new Limits(2, 64, 0.25, 0.95);
        assertThat(Planner.plan(s, List.of(), Map.of(), Set.of(), spread, true, pool).actions()).hasSize(2)
                .allSatisfy(a -> assertThat(((Copy) a).target()).isSameAs(s.get(3)));
        assertThat(Planner.plan(s, List.of(), Map.of("cs0", 1), Set.of(), spread, true, pool).actions()).as("one action under way on cs0").hasSize(1);
        List<ChunkState> labelled = new ArrayList<>();
        for (ChunkState c : onFull) labelled.add(new ChunkState(c.chunkId(), 1, c.cls().withDisk("ssd"), c.current(), List.of()));
        assertThat(Planner.plan(s, List.of(), Map.of(), Set.of(), spread, true, server -> server == s.get(0) ? labelled : List.of()).actions())
                .as("the emptiest server has no ssd").isEmpty();
    }
}
