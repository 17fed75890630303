package io.sluice.qa.chaos;

import io.sluice.protocol.cluster.PartitionReplica;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The checker on handmade histories of one cluster (2 partitions, each on brokers 0 and 1): each kind of broken
 * promise is caught with a counterexample naming it, and the histories a correct cluster may produce pass, including
 * the ones where only the conservative reading (operations in flight, a line's arrival window) keeps them clean.
 */
class CheckerTest
{
    private static final Map<Integer, List<Integer>> REPLICAS = Map.of(1, List.of(0, 1), 2, List.of(1, 0));
    private static final Set<PartitionReplica> ALL = new TreeSet<>(Set.of(pair(0, 1), pair(1, 1), pair(0, 2), pair(1, 2)));

    private final List<Operation> operations = new ArrayList<>();
    private final List<Export> exports = new ArrayList<>();
    private final Map<Integer, Integer> lines = new LinkedHashMap<>();
    /** A reset allows one jump per partition: the gap test has none. */
    private boolean backfillInCleanRun = true;

    @Test
    void aCleanHistoryPassesEveryProperty()
    {
        cleanRun();

        assertThat(Checker.check(history())).allMatch(Verdict::holds, "every property holds")
            .extracting(Verdict::property).containsExactlyElementsOf(Checker.PROPERTIES);
    }

    @Test
    void theCoverageCountsWhatTheHistoryGaveToJudge()
    {
        cleanRun();

        assertThat(Checker.coverage(history())).containsExactly(
            Map.entry("acknowledged-appends", 5L), Map.entry("exported-lines", 5L), Map.entry("pause-holds", 2L),
            Map.entry("status-pairs-judged", 12L), Map.entry("backfills", 1L));
    }

    @Test
    void anAcknowledgedAppendMissingFromTheExportsIsALostWrite()
    {
        cleanRun();
        append("w9", 1, 4, 300, 310);

        assertThat(verdict(Checker.NO_LOST_APPEND).counterexample())
            .contains("write w9").contains("partition 1 position 4").contains("never exported");
    }

    @Test
    void anAcknowledgedPositionExportedWithAnotherWriteIsALostWrite()
    {
        cleanRun();
        append("w9", 1, 3, 300, 310); // w3 sits at 1/3

        assertThat(verdict(Checker.NO_LOST_APPEND).counterexample()).contains("write w9").contains("carrying write w3");
    }

    @Test
    void aKeyedWriteExportedAtTwoPositionsIsADuplicate()
    {
        cleanRun();
        export(1, 4, "w1", 400, 410); // w1 already at 1/1: committed twice

        assertThat(verdict(Checker.NO_DUPLICATE_APPEND).counterexample())
            .contains("write w1").contains("[1/1, 1/4]");
    }

    @Test
    void twoAnswersOfOneKeyAtDifferentPositionsAreADuplicate()
    {
        cleanRun();
        append("w1", 2, 3, 300, 310); // the retry of w1 answered elsewhere than its first answer
        export(2, 3, "w1", 320, 330);

        assertThat(verdict(Checker.NO_DUPLICATE_APPEND).counterexample()).contains("write w1").contains("1/1").contains("2/3");
    }

    @Test
    void aLineReExportedAtTheSamePositionIsNoDuplicate()
    {
        cleanRun();
        export(1, 2, "w2", 400, 410); // a leader change exports 1/2 again

        assertThat(Checker.check(history())).allMatch(Verdict::holds);
    }

    @Test
    void aJumpOverPositionsWithoutAResetIsAGap()
    {
        backfillInCleanRun = false;
        cleanRun();
        export(1, 5, null, 400, 410); // 4 is skipped

        assertThat(verdict(Checker.EXPORTS_IN_ORDER).counterexample())
            .contains("partition 1").contains("position 5").contains("skipping 4..4");
    }

    @Test
    void aJumpAfterAResetIsAllowedOnceTheBackfillFillsTheRange()
    {
        cleanRun();
        operations.add(new Operation.BackfillStart(id(), 3, 350, 360, Outcome.OK, "b1"));
        export(1, 5, null, 400, 410);
        export(1, 4, null, 420, 430); // the backfill's line, after the jump
        operations.add(new Operation.BackfillRead(id(), 3, 440, 450, Outcome.OK, "b1", "SUCCEEDED"));
        finalRead(500, "EXPORTING");

        assertThat(Checker.check(history())).allMatch(Verdict::holds);
    }

    @Test
    void aRangeTheBackfillNeverExportedIsAGap()
    {
        cleanRun();
        operations.add(new Operation.BackfillStart(id(), 3, 350, 360, Outcome.OK, "b1"));
        export(1, 6, null, 400, 410);
        export(1, 4, null, 420, 430); // 5 never comes

        assertThat(verdict(Checker.EXPORTS_IN_ORDER).counterexample())
            .isEqualTo("partition 1 never exported position 5 though it exported positions up to 6");
    }

    @Test
    void aLineWrittenAfterAPausesAnswerAndBeforeTheResumeIsAnExportInsideThePause()
    {
        cleanRun();
        control(ControlKind.PAUSE, ALL, ALL, Outcome.OK, 400, 420, 0);
        export(2, 3, "w5", 430, 440); // written after the 200, read before the resume
        control(ControlKind.RESUME, ALL, ALL, Outcome.OK, 500, 510, 0);

        assertThat(verdict(Checker.NOTHING_EXPORTED_WHILE_PAUSED).counterexample())
            .contains("partition 2 position 3").contains("between 430 and 440 ms").contains("pause #");
    }

    @Test
    void aLineThatMayHaveBeenWrittenBeforeThePausesAnswerIsNoViolation()
    {
        cleanRun();
        control(ControlKind.PAUSE, ALL, ALL, Outcome.OK, 400, 420, 0);
        export(2, 3, "w5", 410, 440); // absent at 410, seen at 440: maybe written at 415
        control(ControlKind.RESUME, ALL, ALL, Outcome.OK, 500, 510, 0);

        assertThat(verdict(Checker.NOTHING_EXPORTED_WHILE_PAUSED).holds()).isTrue();
    }

    @Test
    void aLineAfterThePausesLeaseRanOutIsNoViolation()
    {
        cleanRun();
        control(ControlKind.PAUSE, ALL, ALL, Outcome.OK, 400, 420, 100);
        export(2, 3, "w5", 510, 520); // the lease ended at 500 at the latest

        assertThat(verdict(Checker.NOTHING_EXPORTED_WHILE_PAUSED).holds()).isTrue();
    }

    @Test
    void aSoftPauseHoldsNoExportsBack()
    {
        cleanRun();
        control(ControlKind.SOFT_PAUSE, ALL, ALL, Outcome.OK, 400, 420, 0);
        export(2, 3, "w5", 430, 440);

        assertThat(verdict(Checker.NOTHING_EXPORTED_WHILE_PAUSED).holds()).isTrue();
    }

    @Test
    void aStatusReadShowingTheStateBeforeAnAnsweredPauseIsStale()
    {
        cleanRun();
        control(ControlKind.PAUSE, ALL, ALL, Outcome.OK, 400, 420, 0);
        status(430, 440, Map.of(pair(1, 2), "EXPORTING"), false);

        assertThat(verdict(Checker.STATUS_READS_OWN_WRITES).counterexample())
            .contains("showed pair 1:2 EXPORTING").contains("pause #").contains("allowed then: [PAUSED]");
    }

    @Test
    void aStatusReadMayShowAResumeInFlightOrAnUnavailableBroker()
    {
        cleanRun();
        control(ControlKind.PAUSE, ALL, ALL, Outcome.OK, 400, 420, 0);
        control(ControlKind.RESUME, Set.of(pair(0, 2)), Set.of(), Outcome.UNKNOWN, 425, Long.MAX_VALUE, 0);
        status(430, 440, Map.of(pair(1, 2), "EXPORTING", pair(0, 1), "UNKNOWN"), false);

        assertThat(verdict(Checker.STATUS_READS_OWN_WRITES).holds()).isTrue();
    }

    @Test
    void aBackfillLastSeenRunningNeverEnded()
    {
        cleanRun();
        operations.add(new Operation.BackfillStart(id(), 3, 350, 360, Outcome.OK, "b7"));
        operations.add(new Operation.BackfillRead(id(), 3, 440, 450, Outcome.OK, "b7", "RUNNING"));

        assertThat(verdict(Checker.BACKFILLS_END_TERMINAL).counterexample()).contains("backfill b7").contains("RUNNING");
    }

    @Test
    void aPairLeftInAnOlderStateAfterHealingHasNotConverged()
    {
        cleanRun();
        control(ControlKind.PAUSE, ALL, ALL, Outcome.OK, 400, 420, 0);
        finalRead(600, "PAUSED");
        operations.add(new Operation.StatusRead(id(), 9, 700, 710, Outcome.OK,
            Map.of(pair(0, 1), "PAUSED", pair(1, 1), "EXPORTING", pair(0, 2), "PAUSED", pair(1, 2), "PAUSED"), true));

        assertThat(verdict(Checker.PAIRS_CONVERGE).counterexample()).contains("pair 1:1 EXPORTING").contains("pause #");
    }

    @Test
    void aPairStillUnknownAfterHealingHasNotConverged()
    {
        cleanRun();
        finalRead(600, "UNKNOWN");

        assertThat(verdict(Checker.PAIRS_CONVERGE).counterexample()).contains("UNKNOWN");
    }

    // ---------------------------------------------------------------- a clean run and its pieces

    /**
     * Five keyed appends (one retried), a pause and a resume of every pair with status reads after each, a backfill
     * that ends, every line exported once, and an agreeing read after healing.
     */
    private void cleanRun()
    {
        append("w1", 1, 1, 0, 10);
        append("w2", 1, 2, 5, 20);
        append("w4", 2, 1, 6, 25);
        operations.add(new Operation.Append(id(), 1, 20, 60, Outcome.UNKNOWN, "w3", -1, -1)); // timed out, retried:
        append("w3", 1, 3, 61, 70);
        append("w5", 2, 2, 30, 40);
        export(1, 1, "w1", 10, 30);
        export(2, 1, "w4", 25, 30);
        export(1, 2, "w2", 30, 50);
        export(2, 2, "w5", 40, 50);
        export(1, 3, "w3", 70, 80);
        control(ControlKind.PAUSE, ALL, ALL, Outcome.OK, 100, 120, 0);
        status(130, 140, states("PAUSED"), false);
        control(ControlKind.RESUME, ALL, ALL, Outcome.OK, 200, 220, 0);
        status(230, 240, states("EXPORTING"), false);
        if (backfillInCleanRun)
        {
            operations.add(new Operation.BackfillStart(id(), 3, 250, 260, Outcome.OK, "b0"));
            operations.add(new Operation.BackfillRead(id(), 3, 270, 280, Outcome.OK, "b0", "SUCCEEDED"));
        }
        finalRead(290, "EXPORTING");
    }

    private Verdict verdict(final String property)
    {
        return Checker.check(history()).stream().filter(v -> v.property().equals(property)).findFirst().orElseThrow();
    }

    private History history()
    {
        return new History(operations, exports, REPLICAS);
    }

    private int id()
    {
        return operations.size() + 1;
    }

    private void append(final String write, final int partitionId, final long position, final long invoked, final long completed)
    {
        operations.add(new Operation.Append(id(), 1, invoked, completed, Outcome.OK, write, partitionId, position));
    }

    private void export(final int partitionId, final long position, final String write, final long absentAt, final long presentAt)
    {
        final int line = lines.merge(partitionId, 1, Integer::sum);
        exports.add(new Export(partitionId, position, write, line, absentAt, presentAt));
    }

    private void control(final ControlKind kind, final Set<PartitionReplica> targets, final Set<PartitionReplica> succeeded,
        final Outcome outcome, final long invoked, final long completed, final long lease)
    {
        operations.add(new Operation.Control(id(), 2, invoked, completed, outcome, kind, targets, succeeded, lease));
    }

    private void status(final long invoked, final long completed, final Map<PartitionReplica, String> states, final boolean afterHeal)
    {
        operations.add(new Operation.StatusRead(id(), 4, invoked, completed, Outcome.OK, states, afterHeal));
    }

    private void finalRead(final long invoked, final String state)
    {
        status(invoked, invoked + 5, states(state), true);
    }

    private static Map<PartitionReplica, String> states(final String state)
    {
        final Map<PartitionReplica, String> states = new LinkedHashMap<>();
        ALL.forEach(pair -> states.put(pair, state));
        return states;
    }

    private static PartitionReplica pair(final int brokerId, final int partitionId)
    {
        return new PartitionReplica(brokerId, partitionId);
    }
}
