package io.sluice.qa.chaos;

import io.sluice.protocol.cluster.PartitionReplica;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

/**
 * Reads a {@link History} and judges the contract's promises on it (CONTRACT §2–§4), each with the first counterexample
 * when one exists. Every judgement is conservative about what the history cannot know: an operation without a definite
 * answer may or may not have taken effect; an operation in flight while another was invoked may have been ordered
 * either way (the gateway's version, not the client's clock, orders them); an exported line was written somewhere
 * between the last read of its file that lacked it and the first that held it.
 */
public final class Checker
{
    public static final String NO_LOST_APPEND = "no-lost-acknowledged-append";
    public static final String NO_DUPLICATE_APPEND = "no-duplicate-keyed-append";
    public static final String EXPORTS_IN_ORDER = "exports-in-order-without-gaps";
    public static final String NOTHING_EXPORTED_WHILE_PAUSED = "nothing-exported-while-paused";
    public static final String STATUS_READS_OWN_WRITES = "status-reads-own-writes";
    public static final String BACKFILLS_END_TERMINAL = "backfills-end-terminal";
    public static final String PAIRS_CONVERGE = "pairs-converge-after-heal";
    public static final List<String> PROPERTIES = List.of(NO_LOST_APPEND, NO_DUPLICATE_APPEND, EXPORTS_IN_ORDER,
        NOTHING_EXPORTED_WHILE_PAUSED, STATUS_READS_OWN_WRITES, BACKFILLS_END_TERMINAL, PAIRS_CONVERGE);

    private static final String UNKNOWN = "UNKNOWN";
    private static final Set<String> TERMINAL_BACKFILL = Set.of("SUCCEEDED", "FAILED", "CANCELLED");

    private final History history;
    private final List<Operation.Control> controls;

    private Checker(final History history)
    {
        this.history = history;
        this.controls = history.operations(Operation.Control.class);
    }

    /** Every property's verdict, in {@link #PROPERTIES} order. */
    public static List<Verdict> check(final History history)
    {
        final Checker checker = new Checker(history);
        return List.of(
            checker.noLostAppend(),
            checker.noDuplicateAppend(),
            checker.exportsInOrder(),
            checker.nothingExportedWhilePaused(),
            checker.statusReadsOwnWrites(),
            checker.backfillsEndTerminal(),
            checker.pairsConverge());
    }

    /**
     * How much a history gave the properties to judge: acknowledged appends, exported lines, pause holds with a
     * non-empty window (a 200 for every replica of a partition, before the next operation on it), status pair states
     * judged against an answered operation, backfills started. A run whose figures are zero proved little.
     */
    public static Map<String, Long> coverage(final History history)
    {
        final Checker checker = new Checker(history);
        final Map<String, Long> figures = new LinkedHashMap<>();
        figures.put("acknowledged-appends", (long)checker.acknowledgedAppends().size());
        figures.put("exported-lines", (long)history.exports().size());
        long holds = 0;
        for (final Operation.Control pause : checker.controls)
        {
            if (pause.action() != ControlKind.PAUSE || pause.outcome() != Outcome.OK)
            {
                continue;
            }
            for (final int partitionId : history.replicas().keySet())
            {
                if (pause.targets().containsAll(history.pairsOf(partitionId)) &&
                    checker.holdEnd(pause, partitionId) > pause.completedAt())
                {
                    holds++;
                }
            }
        }
        figures.put("pause-holds", holds);
        long judged = 0;
        for (final Operation.StatusRead read : history.operations(Operation.StatusRead.class))
        {
            for (final Map.Entry<PartitionReplica, String> entry : read.states().entrySet())
            {
                if (read.outcome() == Outcome.OK && !UNKNOWN.equals(entry.getValue()) && checker.controls.stream()
                    .anyMatch(c -> c.succeeded().contains(entry.getKey()) && c.completedAt() < read.invokedAt()))
                {
                    judged++;
                }
            }
        }
        figures.put("status-pairs-judged", judged);
        figures.put("backfills", history.operations(Operation.BackfillStart.class).stream()
            .filter(start -> start.outcome() == Outcome.OK).count());
        return figures;
    }

    // ---------------------------------------------------------------- appends

    /** Every append answered 200 is in its partition's export at the position the answer gave, carrying its write. */
    Verdict noLostAppend()
    {
        final Map<Integer, Map<Long, Set<String>>> exported = new HashMap<>();
        final Map<Integer, Long> highest = new HashMap<>();
        for (final Export export : history.exports())
        {
            exported.computeIfAbsent(export.partitionId(), p -> new HashMap<>())
                .computeIfAbsent(export.position(), q -> new LinkedHashSet<>()).add(String.valueOf(export.writeId()));
            highest.merge(export.partitionId(), export.position(), Math::max);
        }
        for (final Operation.Append append : acknowledgedAppends())
        {
            final Set<String> writes = exported.getOrDefault(append.partitionId(), Map.of()).get(append.position());
            if (writes == null)
            {
                return new Verdict(NO_LOST_APPEND, describe(append) + " was never exported (partition " +
                    append.partitionId() + " exported up to position " + highest.getOrDefault(append.partitionId(), 0L) + ")");
            }
            if (!writes.contains(append.writeId()))
            {
                return new Verdict(NO_LOST_APPEND, describe(append) + ", but that position was exported carrying write " +
                    String.join(", ", writes));
            }
        }
        return Verdict.held(NO_LOST_APPEND);
    }

    /**
     * One keyed write is committed at one place: its answers (first and retries) agree, and the exports carry it at one
     * position only (a line exported again at the same position is at-least-once delivery, not a duplicate).
     */
    Verdict noDuplicateAppend()
    {
        final Map<String, Set<String>> places = new LinkedHashMap<>();
        final Map<String, List<String>> evidence = new LinkedHashMap<>();
        for (final Operation.Append append : acknowledgedAppends())
        {
            final String place = append.partitionId() + "/" + append.position();
            places.computeIfAbsent(append.writeId(), w -> new TreeSet<>()).add(place);
            evidence.computeIfAbsent(append.writeId(), w -> new ArrayList<>()).add("#" + append.id() + " answered " + place);
        }
        final List<Export> lines = new ArrayList<>(history.exports());
        lines.sort(Comparator.comparingLong(Export::presentAt).thenComparingInt(Export::partitionId).thenComparingInt(Export::line));
        for (final Export export : lines)
        {
            if (export.writeId() == null)
            {
                continue;
            }
            final String place = export.partitionId() + "/" + export.position();
            if (places.computeIfAbsent(export.writeId(), w -> new TreeSet<>()).add(place))
            {
                evidence.computeIfAbsent(export.writeId(), w -> new ArrayList<>()).add("exported at " + place);
            }
            if (places.get(export.writeId()).size() > 1)
            {
                return new Verdict(NO_DUPLICATE_APPEND, "write " + export.writeId() + " committed at partition/position " +
                    places.get(export.writeId()) + " (" + String.join("; ", evidence.get(export.writeId())) + ")");
            }
        }
        for (final Map.Entry<String, Set<String>> entry : places.entrySet())
        {
            if (entry.getValue().size() > 1)
            {
                return new Verdict(NO_DUPLICATE_APPEND, "write " + entry.getKey() + " answered at partition/position " +
                    entry.getValue() + " (" + String.join("; ", evidence.get(entry.getKey())) + ")");
            }
        }
        return Verdict.held(NO_DUPLICATE_APPEND);
    }

    private List<Operation.Append> acknowledgedAppends()
    {
        return history.operations(Operation.Append.class).stream()
            .filter(append -> append.outcome() == Outcome.OK)
            .sorted(Comparator.comparingLong(Operation.Append::completedAt))
            .toList();
    }

    // ---------------------------------------------------------------- exports

    /**
     * Per partition, each line at most one above every line before it (going back is a re-export, allowed); a jump is
     * allowed only after a reset-to-latest was invoked, one jump a reset (its backfill fills the range). In the end every position from 1
     * to the highest exported is there at least once.
     */
    Verdict exportsInOrder()
    {
        final List<Operation.BackfillStart> resets = history.operations(Operation.BackfillStart.class);
        for (final int partitionId : new TreeSet<>(history.replicas().keySet()))
        {
            long highest = 0;
            int jumps = 0;
            final Set<Long> seen = new TreeSet<>();
            for (final Export line : history.exportsOf(partitionId))
            {
                final boolean jump = line.position() > highest + 1;
                if (jump && resets.stream().filter(reset -> reset.invokedAt() < line.presentAt()).count() <= jumps)
                {
                    return new Verdict(EXPORTS_IN_ORDER, "partition " + partitionId + " line " + line.line() +
                        " exported position " + line.position() + " right after positions up to " + highest +
                        " (seen by " + line.presentAt() + " ms), skipping " + (highest + 1) + ".." +
                        (line.position() - 1) + " with no reset invoked before it to account for the jump");
                }
                jumps += jump ? 1 : 0;
                highest = Math.max(highest, line.position());
                seen.add(line.position());
            }
            long expected = 1;
            for (final long position : seen)
            {
                if (position != expected)
                {
                    return new Verdict(EXPORTS_IN_ORDER, "partition " + partitionId + " never exported position " +
                        expected + " though it exported positions up to " + highest);
                }
                expected++;
            }
        }
        return Verdict.held(EXPORTS_IN_ORDER);
    }

    /**
     * After a pause's 200 covering every replica of a partition, no line of it is written until the next operation on
     * the partition that may have been ordered after the pause is invoked, or the pause's lease can have ended.
     */
    Verdict nothingExportedWhilePaused()
    {
        Verdict first = null;
        long firstAt = Long.MAX_VALUE;
        for (final Operation.Control pause : controls)
        {
            if (pause.action() != ControlKind.PAUSE || pause.outcome() != Outcome.OK)
            {
                continue;
            }
            for (final int partitionId : new TreeSet<>(history.replicas().keySet()))
            {
                if (!pause.targets().containsAll(history.pairsOf(partitionId)))
                {
                    continue; // a pause of some pairs only: the contract's window is a whole partition's
                }
                final long start = pause.completedAt();
                final long end = holdEnd(pause, partitionId);
                for (final Export line : history.exportsOf(partitionId))
                {
                    if (line.absentAt() >= start && line.presentAt() <= end && line.absentAt() < firstAt)
                    {
                        firstAt = line.absentAt();
                        first = new Verdict(NOTHING_EXPORTED_WHILE_PAUSED, "partition " + partitionId + " position " +
                            line.position() + " (line " + line.line() + ") was written between " + line.absentAt() +
                            " and " + line.presentAt() + " ms, inside the hold of " + describe(pause) +
                            ", which lasts until " + (end == Long.MAX_VALUE ? "the end" : end + " ms"));
                    }
                }
            }
        }
        return first == null ? Verdict.held(NOTHING_EXPORTED_WHILE_PAUSED) : first;
    }

    /** The latest moment the pause's hold of the partition must last to: the lease's end or the next operation's start. */
    private long holdEnd(final Operation.Control pause, final int partitionId)
    {
        long end = pause.leaseMillis() > 0 ? pause.invokedAt() + pause.leaseMillis() : Long.MAX_VALUE;
        for (final Operation.Control other : controls)
        {
            if (other != pause && other.touches(partitionId) && mayBeOrderedAfter(other, pause))
            {
                end = Math.min(end, other.invokedAt());
            }
        }
        return end;
    }

    // ---------------------------------------------------------------- exporting status

    /**
     * A status read invoked after an operation answered a pair SUCCEEDED shows that operation's state for the pair,
     * or the state of an operation on the partition that may have been ordered after it, or EXPORTING once a lease can
     * have ended, or UNKNOWN (the broker unavailable): never an older state.
     */
    Verdict statusReadsOwnWrites()
    {
        for (final Operation.StatusRead read : history.operations(Operation.StatusRead.class))
        {
            if (read.outcome() != Outcome.OK)
            {
                continue;
            }
            for (final Map.Entry<PartitionReplica, String> entry : new java.util.TreeMap<>(read.states()).entrySet())
            {
                final PartitionReplica pair = entry.getKey();
                final String state = entry.getValue();
                if (state == null || UNKNOWN.equals(state))
                {
                    continue;
                }
                final Operation.Control acknowledged = latest(controls.stream()
                    .filter(c -> c.succeeded().contains(pair) && c.completedAt() < read.invokedAt()).toList());
                if (acknowledged == null)
                {
                    continue; // nothing answered yet for this pair: any state an operation in flight may set
                }
                final Set<String> allowed = allowedStates(pair.partitionId(), acknowledged, read.completedAt());
                if (!allowed.contains(state))
                {
                    return new Verdict(STATUS_READS_OWN_WRITES, describe(read) + " showed pair " + pair.label() + " " +
                        state + " after " + describe(acknowledged) + " answered it SUCCEEDED; allowed then: " + allowed);
                }
            }
        }
        return Verdict.held(STATUS_READS_OWN_WRITES);
    }

    /** After healing, every pair of a partition shows one known state: the last acknowledged operation's (or later's). */
    Verdict pairsConverge()
    {
        final List<Operation.StatusRead> reads = history.operations(Operation.StatusRead.class).stream()
            .filter(read -> read.afterHeal() && read.outcome() == Outcome.OK).toList();
        if (reads.isEmpty())
        {
            return new Verdict(PAIRS_CONVERGE, "no status read answered after healing");
        }
        final Operation.StatusRead last = reads.get(reads.size() - 1);
        for (final int partitionId : new TreeSet<>(history.replicas().keySet()))
        {
            final Set<PartitionReplica> pairs = history.pairsOf(partitionId);
            final Operation.Control acknowledged = latest(controls.stream()
                .filter(c -> c.completedAt() < last.invokedAt() && c.succeeded().stream().anyMatch(pairs::contains))
                .toList());
            final Set<String> allowed = acknowledged == null ?
                allowedInitially(partitionId, last.completedAt()) : allowedStates(partitionId, acknowledged, last.completedAt());
            final Set<String> shown = new TreeSet<>();
            for (final PartitionReplica pair : pairs)
            {
                final String state = last.states().get(pair);
                shown.add(String.valueOf(state));
                if (state == null || UNKNOWN.equals(state) || !allowed.contains(state))
                {
                    return new Verdict(PAIRS_CONVERGE, describe(last) + " after healing showed pair " + pair.label() + " " +
                        state + "; the last acknowledged operation on partition " + partitionId + " was " +
                        (acknowledged == null ? "none" : describe(acknowledged)) + ", allowing " + allowed);
                }
            }
            if (shown.size() > 1)
            {
                return new Verdict(PAIRS_CONVERGE, describe(last) + " after healing showed the pairs of partition " +
                    partitionId + " in different states " + shown);
            }
        }
        return Verdict.held(PAIRS_CONVERGE);
    }

    /** States a pair of the partition may show once {@code acknowledged} was answered, read until {@code until}. */
    private Set<String> allowedStates(final int partitionId, final Operation.Control acknowledged, final long until)
    {
        final Set<String> allowed = new TreeSet<>();
        addWithLease(allowed, acknowledged, until);
        for (final Operation.Control other : controls)
        {
            if (other != acknowledged && other.touches(partitionId) && other.invokedAt() < until &&
                mayBeOrderedAfter(other, acknowledged))
            {
                addWithLease(allowed, other, until);
            }
        }
        return allowed;
    }

    private Set<String> allowedInitially(final int partitionId, final long until)
    {
        final Set<String> allowed = new TreeSet<>(Set.of(ControlKind.RESUME.state()));
        for (final Operation.Control other : controls)
        {
            if (other.touches(partitionId) && other.invokedAt() < until)
            {
                addWithLease(allowed, other, until);
            }
        }
        return allowed;
    }

    private static void addWithLease(final Set<String> allowed, final Operation.Control control, final long until)
    {
        allowed.add(control.action().state());
        if (control.leaseMillis() > 0 && control.invokedAt() + control.leaseMillis() <= until)
        {
            allowed.add(ControlKind.RESUME.state());
        }
    }

    /**
     * Whether {@code other} may hold a newer version than {@code than}: it was still in flight (or never answered) when
     * {@code than} was invoked. One that completed before {@code than} was invoked has an older version.
     */
    private static boolean mayBeOrderedAfter(final Operation.Control other, final Operation.Control than)
    {
        return other.completedAt() > than.invokedAt();
    }

    private static Operation.Control latest(final List<Operation.Control> candidates)
    {
        return candidates.stream().max(Comparator.comparingLong(Operation.Control::invokedAt)
            .thenComparingInt(Operation.Control::id)).orElse(null);
    }

    // ---------------------------------------------------------------- backfills

    /** Every backfill started (202) was last seen in a terminal state. */
    Verdict backfillsEndTerminal()
    {
        final List<Operation.BackfillRead> reads = history.operations(Operation.BackfillRead.class);
        for (final Operation.BackfillStart start : history.operations(Operation.BackfillStart.class))
        {
            if (start.outcome() != Outcome.OK)
            {
                continue;
            }
            final Operation.BackfillRead last = reads.stream()
                .filter(read -> read.outcome() == Outcome.OK && start.backfillId().equals(read.backfillId()))
                .max(Comparator.comparingLong(Operation.BackfillRead::invokedAt)).orElse(null);
            if (last == null)
            {
                return new Verdict(BACKFILLS_END_TERMINAL, "backfill " + start.backfillId() + " started by " +
                    describe(start) + " was never read back");
            }
            if (!TERMINAL_BACKFILL.contains(last.state()))
            {
                return new Verdict(BACKFILLS_END_TERMINAL, "backfill " + start.backfillId() + " started by " +
                    describe(start) + " was last seen " + last.state() + " by " + describe(last));
            }
        }
        return Verdict.held(BACKFILLS_END_TERMINAL);
    }

    // ---------------------------------------------------------------- text

    static String describe(final Operation operation)
    {
        final String timing = " (process " + operation.process() + ", invoked " + operation.invokedAt() + " ms, " +
            (operation.completedAt() == Long.MAX_VALUE ? "never completed" : "completed " + operation.completedAt() + " ms") +
            ", " + operation.outcome() + ")";
        if (operation instanceof Operation.Append append)
        {
            return "append #" + append.id() + " of write " + append.writeId() + timing +
                (append.outcome() == Outcome.OK ? " acknowledged at partition " + append.partitionId() + " position " +
                    append.position() : "");
        }
        if (operation instanceof Operation.Control control)
        {
            return control.kind() + " #" + control.id() + timing + " of " + control.targets().size() + " pairs" +
                (control.leaseMillis() > 0 ? " with a lease of " + control.leaseMillis() + " ms" : "");
        }
        return operation.kind() + " #" + operation.id() + timing;
    }
}
