package dev.cairn.master;

import dev.cairn.core.proto.MasterProtocol;
import dev.cairn.core.proto.StorageClass;
import dev.cairn.master.ChunkRegistry.Holder;
import dev.cairn.master.ChunkRegistry.Server;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

/**
 * Decides, from a snapshot of the cluster, what the master should do to bring every chunk to its goal:
 * a pure function (no I/O, no clock, no randomness) so its decisions can be property-tested.
 *
 * <p>Priority order (DESIGN.md "Master"): chunks with the least remaining redundancy first; copy or
 * reconstruct what is missing; then delete what is extra — never before the chunk has its full goal of
 * current copies in distinct failure domains, so never the last good copy; stale copies likewise; copies
 * on draining servers, or on servers without the class's disk label, count as leaving; finally, with nothing to repair, move copies from the fullest to
 * the emptiest server until usage is within the spread. Every server takes part in at most
 * {@link Limits#perServer} actions at a time so client I/O keeps most of its bandwidth.
 */
final class Planner {
    /**
     * @param perServer actions one server may take part in at once (as source or target)
     * @param maxActions actions per plan
     * @param spread balance until every server's used fraction is within this of every other's
     * @param fullFraction a server this full gets no new copies
     */
    record Limits(int perServer, int maxActions, double spread, double fullFraction, boolean plantTidyBelowGoal) {
        static final Limits DEFAULT = new Limits(2, 64, 0.05, 0.95, false);

        Limits(int perServer, int maxActions, double spread, double fullFraction) { this(perServer, maxActions, spread, fullFraction, false); }

        /** These limits with the planted bug {@link dev.cairn.core.env.Plant#TIDY_BELOW_GOAL} (the simulator's only). */
        Limits withTidyBelowGoal() { return new Limits(perServer, maxActions, spread, fullFraction, true); }
    }

    /**
     * What the planner knows of one chunk: its version, current copies (live servers, each with its own
     * version: a replicated copy may be current a version or more behind), outdated copies, class, and the
     * servers that refused a copy of it lately (ids: not chosen as targets for it until the refusal lapses).
     */
    record ChunkState(long chunkId, long version, StorageClass cls, List<Holder> current, List<Server> stale, Set<String> refused) {
        ChunkState(long chunkId, long version, StorageClass cls, List<Holder> current, List<Server> stale) {
            this(chunkId, version, cls, current, stale, Set.of());
        }
    }

    sealed interface Action {
        long chunkId();
    }

    /**
     * Make a new current copy (or rebuild part {@code part} of an erasure-coded chunk) on {@code target}
     * from {@code sources} (one replica, or k distinct parts), at {@code version}: the sources'.
     */
    record Copy(long chunkId, long version, StorageClass cls, int part, Server target, List<Holder> sources, Reason reason, int replacesPart)
            implements Action {
        Copy(long chunkId, long version, StorageClass cls, int part, Server target, List<Holder> sources, Reason reason) {
            this(chunkId, version, cls, part, target, sources, reason, -1);
        }
    }

    /** Delete the copy on {@code server} (at {@code version}: an extra current one, or a stale one). */
    record Drop(long chunkId, long version, Server server, Reason reason) implements Action {}

    enum Reason { UNDER_GOAL, EXTRA, STALE, DRAIN, BALANCE }

    /** Counts for {@code ./cairn status}. */
    record Counts(long chunks, long underGoal, long overGoal, long endangered, long lost, long stale) {}

    record Plan(List<Action> actions, Counts counts) {}

    private Planner() {}

    /**
     * @param live live servers (draining ones included: they still serve)
     * @param chunks every chunk to consider
     * @param busy actions already under way per server id
     * @param skip chunks not to touch now (actions under way, write leases open)
     * @param deletes false during the master's start-up grace window: plan no deletions at all
     */
    static Plan plan(List<Server> live, List<ChunkState> chunks, Map<String, Integer> busy, Set<Long> skip, Limits limits, boolean deletes) {
        return plan(live, chunks, busy, skip, limits, deletes, null);
    }

    /**
     * Chunks a balancing move may take from {@code server}: those it holds, nothing under way on them. The
     * master makes them as asked (a pass only looks at chunks that changed; balance moves settled ones).
     */
    interface BalancePool {
        Iterable<ChunkState> on(Server server);
    }

    /**
     * As above, with balance moves drawn from {@code pool}; null: from {@code chunks} (then every chunk).
     * Chunks not in {@code chunks} must be {@link #settled}: they count for nothing and need nothing.
     */
    static Plan plan(List<Server> live, List<ChunkState> chunks, Map<String, Integer> busy, Set<Long> skip, Limits limits, boolean deletes,
                     BalancePool pool) {
        Map<String, Integer> load = new HashMap<>(busy);
        List<Action> actions = new ArrayList<>();
        long under = 0, over = 0, endangered = 0, lost = 0, stale = 0;
        List<ChunkState> repair = new ArrayList<>();
        List<ChunkState> tidy = new ArrayList<>();
        for (ChunkState c : chunks) {
            int missing = missing(c);
            int redundancy = redundancy(c);
            if (redundancy < 0) lost++;
            else if (redundancy == 0 && c.cls().tolerance() > 0) endangered++;
            if (missing > 0) under++;
            if (extraCopies(c, missing) > 0) over++;
            stale += c.stale().size();
            if (skip.contains(c.chunkId())) continue;
            if (missing > 0 && redundancy >= 0) repair.add(c);
            if (missing == 0 || limits.plantTidyBelowGoal()) tidy.add(c);
        }
        // least remaining redundancy first; chunk id breaks ties so plans are reproducible
        repair.sort(Comparator.comparingInt(Planner::redundancy).thenComparingLong(ChunkState::chunkId));
        for (ChunkState c : repair) {
            if (actions.size() >= limits.maxActions()) break;
            planRepair(c, live, load, limits, actions, deletes);
        }
        if (deletes) {
            for (ChunkState c : tidy) {
                if (actions.size() >= limits.maxActions()) break;
                if (missing(c) == 0) planTidy(c, live, load, limits, actions);
                else plantedTidyBelowGoal(c, load, limits, actions);
            }
        }
        if (deletes && repair.isEmpty() && actions.isEmpty()) planBalance(live, pool != null ? pool : server -> tidy, load, limits, actions);
        return new Plan(actions, new Counts(chunks.size(), under, over, endangered, lost, stale));
    }

    // ---------------------------------------------------------------- accounting

    /**
     * A copy that does not count toward the goal and is to move: on a draining server, or on a server
     * without the class's disk label (placed there when the labelled servers were full and the class
     * overflows, or left by a class change).
     */
    static boolean leaving(Holder h, StorageClass cls) {
        return h.server().draining || (!cls.disk().isEmpty() && !cls.disk().equals(h.server().topology.disk()));
    }

    /** Copies (parts) that count toward the goal: not leaving ({@link #leaving}), one per failure domain. */
    static int goodCount(ChunkState c) {
        StorageClass cls = c.cls();
        List<Holder> current = c.current();
        int n = 0;
        // a chunk has a handful of holders: pairwise comparison beats building a set, per chunk per pass
        for (int i = 0; i < current.size(); i++) {
            Holder h = current.get(i);
            if (leaving(h, cls)) continue;
            boolean seen = false;
            for (int j = 0; j < i && !seen; j++) {
                Holder o = current.get(j);
                seen = !leaving(o, cls) && (cls.isEc() ? o.part() == h.part() : o.server().domain(cls.domain()).equals(h.server().domain(cls.domain())));
            }
            if (!seen) n++;
        }
        return n;
    }

    /**
     * Nothing to do for this chunk: its full goal of good copies, nothing extra or leaving, nothing stale.
     * A plan of settled chunks is empty (balance aside); only a change to the chunk unsettles it.
     */
    static boolean settled(ChunkState c) {
        return c.stale().isEmpty() && missing(c) == 0 && extraCopies(c) == 0;
    }

    static int missing(ChunkState c) { return Math.max(0, c.cls().parts() - goodCount(c)); }

    /** Further copies (parts) that may be lost before data is: negative when the chunk is unreadable. */
    static int redundancy(ChunkState c) {
        if (c.cls().isEc()) {
            List<Holder> current = c.current();
            int parts = 0;
            for (int i = 0; i < current.size(); i++) {
                boolean seen = false;
                for (int j = 0; j < i && !seen; j++) seen = current.get(j).part() == current.get(i).part();
                if (!seen) parts++;
            }
            return parts - c.cls().k();
        }
        return c.current().size() - 1;
    }

    static int extraCopies(ChunkState c) { return extraCopies(c, missing(c)); }

    private static int extraCopies(ChunkState c, int missing) {
        return Math.max(0, c.current().size() - c.cls().parts()) + (missing == 0 ? countDraining(c) : 0);
    }

    private static int countDraining(ChunkState c) {
        int n = 0;
        for (Holder h : c.current()) if (leaving(h, c.cls())) n++;
        return n;
    }

    // ---------------------------------------------------------------- repair

    private static void planRepair(ChunkState c, List<Server> live, Map<String, Integer> load, Limits limits, List<Action> actions, boolean deletes) {
        StorageClass cls = c.cls();
        Set<String> usedDomains = new HashSet<>();
        Set<String> holders = new HashSet<>(c.refused()); // never a target, as a holder is not
        for (Holder h : c.current()) {
            holders.add(h.server().id);
            if (!leaving(h, cls)) usedDomains.add(h.server().domain(cls.domain()));
        }
        if (cls.isEc()) {
            TreeMap<Integer, Holder> byPart = new TreeMap<>();
            for (Holder h : c.current()) {
                Holder prev = byPart.get(h.part());
                if (prev == null || (leaving(prev, cls) && !leaving(h, cls))) byPart.put(h.part(), h);
            }
            for (int part = 0; part < cls.parts(); part++) {
                Holder have = byPart.get(part);
                if (have != null && !leaving(have, cls)) continue;
                Server target = target(live, cls, usedDomains, holders, load, limits);
                if (target == null) {
                    if (deletes) rebuildOverDuplicatePart(c, part, byPart, load, limits, actions);
                    return;
                }
                List<Holder> sources = new ArrayList<>();
                if (have != null) {
                    if (!free(have.server(), load, limits)) continue;
                    sources.add(have); // a leaving holder: copy its part as it is
                } else {
                    for (Holder h : byPart.values()) {
                        if (sources.size() == cls.k()) break;
                        if (free(h.server(), load, limits)) sources.add(h);
                    }
                    if (sources.size() < cls.k()) return;
                }
                take(load, target, sources);
                assert sources.stream().allMatch(h -> h.version() == c.version()) : "erasure-coded parts of two versions";
                // a stale copy on the target may be another part at this version (a copy cut off short): it must give way
                int replaces = c.stale().contains(target) ? MasterProtocol.ReplicateChunk.REPLACES_STALE : -1;
                actions.add(new Copy(c.chunkId(), c.version(), cls, part, target, List.copyOf(sources), have != null ? Reason.DRAIN : Reason.UNDER_GOAL, replaces));
                usedDomains.add(target.domain(cls.domain()));
                holders.add(target.id);
                if (actions.size() >= limits.maxActions()) return;
            }
            return;
        }
        for (int need = missing(c); need > 0; need--) {
            Server target = target(live, cls, usedDomains, holders, load, limits);
            if (target == null) return;
            // the newest copy, then the least loaded: a copy a version behind holds the data too, but a late
            // commit of the newer version would make a copy of it outdated at once
            Holder source = null;
            for (Holder h : c.current()) {
                if (!free(h.server(), load, limits)) continue;
                if (source == null || h.version() > source.version()
                        || (h.version() == source.version() && load.getOrDefault(h.server().id, 0) < load.getOrDefault(source.server().id, 0))) source = h;
            }
            if (source == null) return;
            take(load, target, List.of(source));
            boolean drain = leaving(source, cls) && c.current().size() <= cls.parts();
            actions.add(new Copy(c.chunkId(), source.version(), cls, 0, target, List.of(source), drain ? Reason.DRAIN : Reason.UNDER_GOAL));
            usedDomains.add(target.domain(cls.domain()));
            holders.add(target.id);
            if (actions.size() >= limits.maxActions()) return;
        }
    }

    /**
     * No server can take missing part {@code missing}, yet some part is held twice (a copy made before a failed
     * one came back): the server of the second copy rebuilds the missing part from k others, and the new part
     * takes the duplicate's place there only once durable ({@link Copy#replacesPart}). Dropping the duplicate
     * first and copying next pass left the chunk, between the two, on a twin the master cannot tell is sound
     * (sim seed 12419: the twin kept was silently corrupt).
     */
    private static void rebuildOverDuplicatePart(ChunkState c, int missing, TreeMap<Integer, Holder> kept, Map<String, Integer> load, Limits limits,
                                                 List<Action> actions) {
        for (Holder h : c.current()) {
            Holder keep = kept.get(h.part());
            // the duplicate's server stays in the chunk's layout (a leaving one would only move the new part on again)
            if (keep == null || keep.server() == h.server() || leaving(h, c.cls()) || !free(h.server(), load, limits)) continue;
            List<Holder> sources = new ArrayList<>();
            for (Holder s : kept.values()) {
                if (sources.size() == c.cls().k()) break;
                if (s.server() != h.server() && s.part() != missing && !leaving(s, c.cls()) && free(s.server(), load, limits)) sources.add(s);
            }
            if (sources.size() < c.cls().k()) return;
            take(load, h.server(), sources);
            actions.add(new Copy(c.chunkId(), c.version(), c.cls(), missing, h.server(), List.copyOf(sources), Reason.UNDER_GOAL, h.part()));
            return;
        }
    }

    /**
     * The least-full eligible server: live, taking chunks (not draining, not full, with a disk neither
     * failed, full nor slow), right disk label, in a domain the chunk does not use yet.
     */
    private static Server target(List<Server> live, StorageClass cls, Set<String> usedDomains, Set<String> holders,
                                 Map<String, Integer> load, Limits limits) {
        Server best = null;
        for (Server s : live) {
            if (holders.contains(s.id) || !free(s, load, limits) || !s.acceptsChunks(limits.fullFraction())) continue;
            if (!cls.disk().isEmpty() && !cls.disk().equals(s.topology.disk())) continue;
            if (usedDomains.contains(s.domain(cls.domain()))) continue;
            if (best == null || s.usedFraction() < best.usedFraction()) best = s;
        }
        return best;
    }

    private static boolean free(Server s, Map<String, Integer> load, Limits limits) {
        return load.getOrDefault(s.id, 0) < limits.perServer();
    }

    private static void take(Map<String, Integer> load, Server target, List<Holder> sources) {
        load.merge(target.id, 1, Integer::sum);
        for (Holder h : sources) load.merge(h.server().id, 1, Integer::sum);
    }

    // ---------------------------------------------------------------- deletion (chunk at full goal)

    /**
     * The chunk has its full goal of good copies: keep one good copy per needed domain (part), the newest
     * versions first, then on the least-full servers, and drop every other current copy and every stale one.
     */
    private static void planTidy(ChunkState c, List<Server> live, Map<String, Integer> load, Limits limits, List<Action> actions) {
        assert missing(c) == 0;
        StorageClass cls = c.cls();
        // at goal with exactly its goal of copies (so none leaving, all in distinct domains) and nothing stale:
        // every copy is kept. Most chunks, most passes.
        if (c.stale().isEmpty() && c.current().size() == cls.parts()) return;
        List<Holder> good = new ArrayList<>();
        for (Holder h : c.current()) if (!leaving(h, cls)) good.add(h);
        // the newest versions first, then copies on vouched servers (Server.vouched), then the least full
        good.sort(Comparator.comparingLong((Holder h) -> -h.version()).thenComparing(h -> !h.server().vouched())
                .thenComparingDouble(h -> h.server().usedFraction()).thenComparing(h -> h.server().id));
        Set<String> keep = new HashSet<>();
        Set<Object> covered = new HashSet<>();
        for (Holder h : good) {
            Object key = cls.isEc() ? (Object) h.part() : h.server().domain(cls.domain());
            if (keep.size() < cls.parts() && covered.add(key)) keep.add(h.server().id);
        }
        assert keep.size() == cls.parts() : "tidying a chunk below its goal";
        // a copy kept in place of one dropped must be on a server whose disks are judged sound since it came back;
        // until then nothing current goes (stale copies still do: they hold nothing a reader is sent to)
        boolean keepersVouched = true;
        for (Holder h : good) if (keep.contains(h.server().id) && !h.server().vouched()) keepersVouched = false;
        long oldestKept = Long.MAX_VALUE;
        for (Holder h : good) if (keep.contains(h.server().id)) oldestKept = Math.min(oldestKept, h.version());
        boolean copying = false;
        for (Holder h : c.current()) {
            if (!keepersVouched || keep.contains(h.server().id) || !free(h.server(), load, limits)) continue;
            if (!cls.isEc() && h.version() > oldestKept) {
                // a leaving copy newer than one kept: the kept one is current only by the committed data's version,
                // and may lack writes synced under the newer one's lease and not yet committed (sim seed 13090: a
                // draining v3 copy dropped for a v1 one, then the commit acknowledged with two copies of three).
                // The newest version is copied to a server that stays first; the older copy then goes as extra. If no
                // server can take it, the copy is dropped as before: kept, the chunk would stay over goal for good
                // when the newer version is never committed (sim seeds 13193, 13373: a class with a disk label).
                if (copying) continue;
                if (copyNewestBeforeDropping(c, h, live, load, limits, actions)) {
                    copying = true;
                    continue;
                }
            }
            load.merge(h.server().id, 1, Integer::sum);
            actions.add(new Drop(c.chunkId(), h.version(), h.server(), leaving(h, cls) ? Reason.DRAIN : Reason.EXTRA));
        }
        for (Server s : c.stale()) {
            if (!free(s, load, limits)) continue;
            load.merge(s.id, 1, Integer::sum);
            actions.add(new Drop(c.chunkId(), s.staleChunks.getOrDefault(c.chunkId(), -1L), s, Reason.STALE));
        }
    }

    /**
     * {@code newer} is leaving and newer than a copy kept in its place: a copy of the newest version to a server in
     * a domain the chunk does not use yet; false if no server can take one.
     */
    private static boolean copyNewestBeforeDropping(ChunkState c, Holder newer, List<Server> live, Map<String, Integer> load, Limits limits,
                                                 List<Action> actions) {
        StorageClass cls = c.cls();
        Set<String> holders = new HashSet<>(c.refused());
        Set<String> usedDomains = new HashSet<>();
        for (Holder h : c.current()) {
            holders.add(h.server().id);
            if (!leaving(h, cls)) usedDomains.add(h.server().domain(cls.domain()));
        }
        Holder source = newer;
        for (Holder h : c.current()) {
            if (h.version() >= source.version() && !leaving(h, cls) && free(h.server(), load, limits)) source = h;
        }
        Server target = target(live, cls, usedDomains, holders, load, limits);
        if (target == null) return false;
        if (free(source.server(), load, limits)) {
            take(load, target, List.of(source));
            actions.add(new Copy(c.chunkId(), source.version(), cls, 0, target, List.of(source), Reason.DRAIN));
        }
        return true; // (a busy source: the copy waits for a later pass, and the newer copy stays meanwhile)
    }

    /**
     * The planted bug {@link dev.cairn.core.env.Plant#TIDY_BELOW_GOAL}: a chunk short of its goal is tidied as
     * if it were at it: its leaving copies (draining server, wrong label) and its stale ones are dropped,
     * though the repair has not made their replacements yet.
     */
    private static void plantedTidyBelowGoal(ChunkState c, Map<String, Integer> load, Limits limits, List<Action> actions) {
        for (Holder h : c.current()) {
            if (!leaving(h, c.cls()) || !free(h.server(), load, limits)) continue;
            load.merge(h.server().id, 1, Integer::sum);
            actions.add(new Drop(c.chunkId(), h.version(), h.server(), Reason.DRAIN));
        }
        for (Server s : c.stale()) {
            if (!free(s, load, limits)) continue;
            load.merge(s.id, 1, Integer::sum);
            actions.add(new Drop(c.chunkId(), s.staleChunks.getOrDefault(c.chunkId(), -1L), s, Reason.STALE));
        }
    }

    // ---------------------------------------------------------------- balance

    /**
     * Copies a chunk from the fullest server to the emptiest one when their used fractions differ by
     * more than the spread; the next plan sees the chunk over goal and drops the copy on the fuller server.
     */
    private static void planBalance(List<Server> live, BalancePool pool, Map<String, Integer> load, Limits limits, List<Action> actions) {
        Server full = null, empty = null;
        for (Server s : live) {
            if (s.draining) continue;
            if (full == null || s.usedFraction() > full.usedFraction()) full = s;
            if (s.acceptsChunks(limits.fullFraction()) && (empty == null || s.usedFraction() < empty.usedFraction())) empty = s;
        }
        if (full == null || empty == null || full == empty || full.usedFraction() - empty.usedFraction() <= limits.spread()) return;
        for (ChunkState c : pool.on(full)) {
            // each move takes a turn of both servers, so their action limit bounds the moves per pass
            if (!free(full, load, limits) || !free(empty, load, limits)) return;
            if (c.current().size() != c.cls().parts() || !c.stale().isEmpty()) continue;
            Holder from = null;
            Set<String> otherDomains = new HashSet<>();
            boolean emptyHolds = false;
            for (Holder h : c.current()) {
                if (h.server() == full) from = h;
                else otherDomains.add(h.server().domain(c.cls().domain()));
                if (h.server() == empty) emptyHolds = true;
            }
            if (from == null || emptyHolds || c.refused().contains(empty.id) || otherDomains.contains(empty.domain(c.cls().domain()))) continue;
            if (!c.cls().disk().isEmpty() && !c.cls().disk().equals(empty.topology.disk())) continue;
            take(load, empty, List.of(from));
            actions.add(new Copy(c.chunkId(), from.version(), c.cls(), from.part(), empty, List.of(from), Reason.BALANCE));
        }
    }
}
