package io.sluice.qa.backfill;

import io.sluice.qa.Exporting;
import io.sluice.qa.Records;
import io.sluice.qa.SharedCluster;
import io.sluice.qa.cluster.Await;
import io.sluice.qa.cluster.ExportingStatus;
import io.sluice.qa.cluster.HttpAnswer;
import io.sluice.qa.cluster.SluiceCluster;
import io.sluice.qa.cluster.WrittenRecord;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.parallel.Execution;
import org.junit.jupiter.api.parallel.ExecutionMode;
import tools.jackson.databind.JsonNode;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;

import static io.sluice.qa.Exporting.STATE_TIMEOUT;
import static io.sluice.qa.Exporting.resumeAndAwaitExporting;
import static io.sluice.qa.backfill.BackfillRecords.BACKFILL_TIMEOUT;
import static io.sluice.qa.backfill.BackfillRecords.EXPORTER;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * Issue 6: reset to latest and backfill (CONTRACT §3) on a cluster of separate JVMs (3 brokers, 6 partitions,
 * RF 3). The file exporter is made to lag by pausing exporting and writing; a reset then moves its position to
 * the latest and hands the skipped range to a backfill. One cluster serves every case; each starts from every
 * broker up and exporting and leaves the cluster so. The cancel case runs last, as it leaves a range unexported.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
@Timeout(value = 6, unit = TimeUnit.MINUTES)
@Execution(ExecutionMode.SAME_THREAD)
class ResetToLatestAndBackfillIT
{
    /** Longer than a few polls of the gateway's view, so a position that moved would show. */
    private static final Duration SETTLE = Duration.ofSeconds(2);
    private static final Duration QUIET_PERIOD = Duration.ofSeconds(3);

    @RegisterExtension
    static final SharedCluster SHARED = new SharedCluster();

    private SluiceCluster cluster;
    /** Every acknowledged record of the cases that export everything, checked for gaps at each such case's end. */
    private final List<WrittenRecord> allWritten = new ArrayList<>();

    @BeforeAll
    void startCluster()
    {
        cluster = SHARED.cluster(); // reset with every partition on its preferred leader, as backfill starts ask them
    }

    @BeforeEach
    void everyBrokerUpAndExporting()
    {
        Exporting.everyBrokerUpAndExporting(cluster);
    }

    @AfterAll
    void resumeAtTheEnd()
    {
        if (cluster != null && cluster.gateway().isAlive())
        {
            cluster.log("resume at the end: " + cluster.client().resume());
        }
    }

    @Test
    @Order(1)
    void badRequestsAreRefusedAndChangeNothing()
    {
        final List<WrittenRecord> lagging = pauseAndWrite("bad-requests", 300);
        final Map<Integer, Long> positions = BackfillRecords.awaitLeaderPositionsCovering(
            cluster, Records.highestPositions(lagging));
        final Set<String> backfills = BackfillRecords.awaitBackfillIds(cluster);

        for (final String count : List.of("0", "-2", "abc", "65"))
        {
            final HttpAnswer answer = BackfillRecords.reset(cluster, EXPORTER, "?backfillTaskCount=" + count);
            assertError(answer, 400, "backfillTaskCount=" + count);
            assertNothingChanged(positions, backfills, "after backfillTaskCount=" + count);
        }
        final HttpAnswer unknown = BackfillRecords.reset(cluster, "no-such-exporter", "?backfillTaskCount=6");
        assertError(unknown, 404, "unknown exporter");
        assertThat(unknown.json().path("message").asString("")).as("%s", unknown).contains("no-such-exporter");
        assertNothingChanged(positions, backfills, "after an unknown exporter");

        // an unfinished backfill (held by the pause) makes a second one of the same exporter a 409
        final HttpAnswer first = BackfillRecords.reset(cluster, EXPORTER, "?backfillTaskCount=6");
        assertThat(first.status()).as("first reset: %s", first).isEqualTo(202);
        final String backfillId = first.json().path("backfillId").asString("");
        final Map<Integer, Long> afterFirst = awaitPositionsAtRangeEnds(ranges(first.json()));
        final Set<String> withFirst = BackfillRecords.awaitBackfillIds(cluster);
        assertThat(withFirst).as("backfills after the first reset").contains(backfillId).hasSize(backfills.size() + 1);
        final JsonNode firstView = BackfillRecords.backfill(cluster, backfillId).json();
        assertThat(firstView.path("state").asString("")).as("%s", firstView).isEqualTo("PENDING");

        final HttpAnswer second = BackfillRecords.reset(cluster, EXPORTER, "?backfillTaskCount=6");
        assertError(second, 409, "second backfill of '" + EXPORTER + "' while " + backfillId + " is unfinished");
        assertNothingChanged(afterFirst, withFirst, "after the 409");
        final JsonNode firstAgain = BackfillRecords.backfill(cluster, backfillId).json();
        assertThat(firstAgain.path("ranges")).as("ranges of %s after the 409", backfillId)
            .isEqualTo(firstView.path("ranges"));
        assertThat(firstAgain.path("tasks").size()).isEqualTo(firstView.path("tasks").size());

        resumeAndAwaitExporting(cluster);
        BackfillRecords.awaitBackfillState(cluster, backfillId, "SUCCEEDED", BACKFILL_TIMEOUT);
        allWritten.addAll(lagging);
        assertAllWrittenExportedWithoutGaps();
    }

    @Test
    @Order(2)
    void dryRunAnswersThePlanAndChangesNothing()
    {
        final List<WrittenRecord> lagging = pauseAndWrite("dry-run", 300);
        final Map<Integer, Long> highest = Records.highestPositions(lagging);
        final Map<Integer, Long> positions = BackfillRecords.awaitLeaderPositionsCovering(cluster, highest);
        final Set<String> backfills = BackfillRecords.awaitBackfillIds(cluster);

        final HttpAnswer plan = BackfillRecords.reset(cluster, EXPORTER, "?backfillTaskCount=8&dryRun=true");

        assertThat(plan.status()).as("dry run: %s", plan).isEqualTo(200);
        final JsonNode json = plan.json();
        assertThat(json.path("dryRun").asBoolean(false)).as("%s", plan).isTrue();
        assertThat(json.path("exporterId").asString("")).isEqualTo(EXPORTER);
        assertThat(json.path("backfillTaskCount").asInt()).as("%s", plan).isEqualTo(8);
        final Map<Integer, long[]> ranges = ranges(json);
        final Map<Integer, Long> lowest = Records.lowestPositions(lagging);
        for (final Map.Entry<Integer, Long> entry : highest.entrySet())
        {
            final long[] range = ranges.get(entry.getKey());
            assertThat(range).as("planned range of partition %d in %s", entry.getKey(), plan).isNotNull();
            assertThat(range[0]).as("planned range start of partition %d", entry.getKey())
                .isEqualTo(positions.get(entry.getKey()) + 1).isLessThanOrEqualTo(lowest.get(entry.getKey()));
            assertThat(range[1]).as("planned range end of partition %d", entry.getKey()).isGreaterThanOrEqualTo(entry.getValue());
        }
        assertThat(json.path("tasks").size()).as("%s", plan).isEqualTo(8);
        assertNothingChanged(positions, backfills, "after a dry run");

        // not reset: the regular exporter exports the lagging records itself on resume
        resumeAndAwaitExporting(cluster);
        allWritten.addAll(lagging);
        assertAllWrittenExportedWithoutGaps();
        assertThat(BackfillRecords.awaitBackfillIds(cluster)).as("backfills after the dry run and resume").isEqualTo(backfills);
    }

    @Test
    @Order(3)
    void resetMovesPositionsToLatestAndTheBackfillExportsTheSkippedRange()
    {
        final List<WrittenRecord> lagging = pauseAndWrite("reset", 600);
        final Map<Integer, Long> highest = Records.highestPositions(lagging);
        final Map<Integer, Long> before = BackfillRecords.awaitLeaderPositionsCovering(cluster, highest);

        final HttpAnswer reset = BackfillRecords.reset(cluster, EXPORTER, "?backfillTaskCount=12");

        assertThat(reset.status()).as("reset: %s", reset).isEqualTo(202);
        final String backfillId = reset.json().path("backfillId").asString("");
        assertThat(backfillId).as("%s", reset).isNotBlank();
        final Map<Integer, long[]> ranges = ranges(reset.json());
        for (final Map.Entry<Integer, Long> entry : highest.entrySet())
        {
            final long[] range = ranges.get(entry.getKey());
            assertThat(range).as("range of partition %d in %s", entry.getKey(), reset).isNotNull();
            assertThat(range[0]).as("range start of partition %d (exported position was %d)", entry.getKey(),
                before.get(entry.getKey())).isEqualTo(before.get(entry.getKey()) + 1);
            assertThat(range[1]).as("range end of partition %d", entry.getKey()).isGreaterThanOrEqualTo(entry.getValue());
        }
        // the exporter's positions jump to the latest while still paused
        awaitPositionsAtRangeEnds(ranges);

        resumeAndAwaitExporting(cluster);
        final long resumedAt = System.nanoTime();
        final List<WrittenRecord> after = Records.write(cluster, "after-reset", 120);
        Records.awaitExported(cluster, after);
        cluster.log("records written after the reset exported " +
            Duration.ofNanos(System.nanoTime() - resumedAt).toMillis() + " ms after resume");
        final JsonNode done = BackfillRecords.awaitBackfillState(cluster, backfillId, "SUCCEEDED", BACKFILL_TIMEOUT);
        assertThat(done.path("progress").asDouble()).as("%s", done).isEqualTo(1.0);
        for (final JsonNode task : done.path("tasks"))
        {
            assertThat(task.path("exportedUpTo").asLong()).as("task %s", task)
                .isGreaterThanOrEqualTo(task.path("toPosition").asLong());
        }
        allWritten.addAll(lagging);
        allWritten.addAll(after);
        assertAllWrittenExportedWithoutGaps();
        cluster.log("backfill " + backfillId + " of " + lagging.size() + " records: " + done);
    }

    @Test
    @Order(4)
    void pauseHoldsABackfillPendingUntilResume()
    {
        final List<WrittenRecord> lagging = pauseAndWrite("held", 300);
        BackfillRecords.awaitLeaderPositionsCovering(cluster, Records.highestPositions(lagging));
        final Map<Integer, byte[]> files = Records.snapshot(cluster);

        final HttpAnswer reset = BackfillRecords.reset(cluster, EXPORTER, "");
        assertThat(reset.status()).as("reset: %s", reset).isEqualTo(202);
        final String backfillId = reset.json().path("backfillId").asString("");

        Records.assertUnchangedFor(cluster, files, QUIET_PERIOD, "after backfill " + backfillId + " was created");
        final JsonNode held = BackfillRecords.backfill(cluster, backfillId).json();
        assertThat(held.path("state").asString("")).as("backfill while paused: %s", held).isEqualTo("PENDING");
        assertThat(held.path("exportedPositions").asLong(-1)).as("%s", held).isZero();
        for (final JsonNode task : held.path("tasks"))
        {
            assertThat(task.path("state").asString("")).as("task while paused: %s", task).isEqualTo("PENDING");
        }
        assertThat(Records.notExported(cluster, lagging)).hasSize(lagging.size());

        resumeAndAwaitExporting(cluster);
        BackfillRecords.awaitBackfillState(cluster, backfillId, "SUCCEEDED", BACKFILL_TIMEOUT);
        allWritten.addAll(lagging);
        assertAllWrittenExportedWithoutGaps();
    }

    @Test
    @Order(5)
    void backfillResumesOnTheNewLeaderAfterItsLeaderIsKilled()
    {
        // one key, so one partition and one task with a range long enough (one runner exports ~100k records/s here,
        // checkpointing every 10k) to be caught running after a replicated checkpoint
        final String key = "killed-" + System.nanoTime();
        final WrittenRecord probe = cluster.client().write(key, "{\"probe\":true}");
        Records.awaitExported(cluster, List.of(probe));
        Exporting.awaitAcknowledged(cluster, Records.highestPositions(List.of(probe)));
        final long writeStart = System.nanoTime();
        final List<WrittenRecord> lagging = pauseAndWrite(key, 120_000, true);
        cluster.log("wrote " + lagging.size() + " records to partition " + probe.partitionId() + " in " +
            Duration.ofNanos(System.nanoTime() - writeStart).toMillis() + " ms");
        assertThat(Records.highestPositions(lagging).keySet()).as("partitions written").containsExactly(probe.partitionId());
        BackfillRecords.awaitLeaderPositionsCovering(cluster, Records.highestPositions(lagging));
        final HttpAnswer reset = BackfillRecords.reset(cluster, EXPORTER, "?backfillTaskCount=1");
        assertThat(reset.status()).as("reset: %s", reset).isEqualTo(202);
        final String backfillId = reset.json().path("backfillId").asString("");
        final ExportingStatus leaders = cluster.awaitLeaders();

        // Poll from the resume's 200 on, not from when the polled view shows EXPORTING: the task may be
        // half done by then (one runner exports ~200k records/s on an idle machine).
        Exporting.until200("resume", () -> cluster.client().resume());
        final long resumedAt = System.nanoTime();
        // the task running past a replicated checkpoint, with positions left: kill the leader of its partition
        final JsonNode running = Await.value("the task of " + backfillId + " running past a checkpoint", STATE_TIMEOUT,
            Duration.ofMillis(20), () ->
        {
            final JsonNode view = BackfillRecords.backfill(cluster, backfillId).json();
            if ("SUCCEEDED".equals(view.path("state").asString("")))
            {
                throw new AssertionError("backfill " + backfillId + " SUCCEEDED before its task could be caught " +
                    "running past a checkpoint; make the range bigger: " + view);
            }
            for (final JsonNode task : view.path("tasks"))
            {
                final long exportedUpTo = task.path("exportedUpTo").asLong();
                if ("RUNNING".equals(task.path("state").asString("")) &&
                    exportedUpTo >= task.path("fromPosition").asLong() && exportedUpTo < task.path("toPosition").asLong())
                {
                    return Optional.of(task);
                }
            }
            return Optional.empty();
        });
        final int partitionId = running.path("partitionId").asInt();
        final int taskId = running.path("taskId").asInt();
        final int victim = leaders.leaderOf(partitionId).orElseThrow();
        cluster.log("killing broker " + victim + ", leader of partition " + partitionId + ", " +
            Duration.ofNanos(System.nanoTime() - resumedAt).toMillis() + " ms after resume, task: " + running);
        cluster.killBroker(victim);

        cluster.awaitLeaders();
        final JsonNode done = BackfillRecords.awaitBackfillState(cluster, backfillId, "SUCCEEDED", BACKFILL_TIMEOUT);
        cluster.log("backfill " + backfillId + " SUCCEEDED " +
            Duration.ofNanos(System.nanoTime() - resumedAt).toMillis() + " ms after resume: " + done);
        for (final JsonNode task : done.path("tasks"))
        {
            assertThat(task.path("state").asString("")).as("task %s", task).isEqualTo("SUCCEEDED");
            assertThat(task.path("exportedUpTo").asLong()).as("task %s", task)
                .isGreaterThanOrEqualTo(task.path("toPosition").asLong());
            if (task.path("partitionId").asInt() == partitionId && task.path("taskId").asInt() == taskId)
            {
                assertThat(task.path("attempts").asInt()).as("attempts of task %d of partition %d, whose leader %d " +
                    "was killed while it ran (%s)", taskId, partitionId, victim, running).isGreaterThanOrEqualTo(2);
            }
        }
        // resumed from its checkpoint, not from the start: nothing at or below the checkpoint seen before the kill
        // was exported twice (a re-export from the start would repeat all of it)
        final long checkpoint = running.path("exportedUpTo").asLong();
        final long fromPosition = running.path("fromPosition").asLong();
        final Map<Long, Integer> lines = new TreeMap<>();
        cluster.exportedRecords(partitionId).stream()
            .filter(record -> record.position() >= fromPosition && record.position() <= checkpoint)
            .forEach(record -> lines.merge(record.position(), 1, Integer::sum));
        final List<Long> twice = lines.entrySet().stream().filter(e -> e.getValue() > 1).map(Map.Entry::getKey).toList();
        assertThat(twice).as("positions %d..%d of partition %d (below checkpoint %d) exported more than once, so the " +
            "task did not resume from its checkpoint; first: %s", fromPosition, checkpoint, partitionId, checkpoint,
            twice.subList(0, Math.min(5, twice.size()))).isEmpty();
        allWritten.addAll(lagging);
        assertAllWrittenExportedWithoutGaps();

        cluster.startBroker(victim);
        cluster.awaitBrokerAvailable(victim);
    }

    @Test
    @Order(6)
    void cancelEndsTheBackfillAndNothingMoreOfItIsExported()
    {
        final List<WrittenRecord> lagging = pauseAndWrite("cancelled", 300);
        BackfillRecords.awaitLeaderPositionsCovering(cluster, Records.highestPositions(lagging));
        final HttpAnswer reset = BackfillRecords.reset(cluster, EXPORTER, "");
        assertThat(reset.status()).as("reset: %s", reset).isEqualTo(202);
        final String backfillId = reset.json().path("backfillId").asString("");

        final HttpAnswer cancel = cluster.client().management("DELETE", "/actuator/backfills/" + backfillId, null);

        assertThat(cancel.status()).as("cancel: %s", cancel).isEqualTo(200);
        assertThat(cancel.json().path("state").asString("")).as("%s", cancel).isEqualTo("CANCELLED");
        resumeAndAwaitExporting(cluster);
        final List<WrittenRecord> after = Records.write(cluster, "after-cancel", 120);
        Records.awaitExported(cluster, after);
        Await.quietPeriod("a cancelled backfill gets time to export something it must not", QUIET_PERIOD);
        final JsonNode view = BackfillRecords.backfill(cluster, backfillId).json();
        assertThat(view.path("state").asString("")).as("backfill after cancel and resume: %s", view).isEqualTo("CANCELLED");
        for (final JsonNode task : view.path("tasks"))
        {
            assertThat(task.path("state").asString("")).as("task %s", task).isEqualTo("CANCELLED");
        }
        assertThat(Records.exported(cluster, lagging))
            .as("records of the cancelled backfill %s exported after resume", backfillId).isEmpty();
    }

    // ------------------------------------------------------------------------------------------ helpers

    private List<WrittenRecord> pauseAndWrite(final String prefix, final int count)
    {
        return pauseAndWrite(prefix, count, false);
    }

    /** Writes a few records and waits for their export, pauses, then writes {@code count} (all with one key if asked). */
    private List<WrittenRecord> pauseAndWrite(final String prefix, final int count, final boolean oneKey)
    {
        final List<WrittenRecord> before = Records.write(cluster, prefix + "-before", 30);
        Records.awaitExported(cluster, before);
        // Acknowledged too, or the reset's backfill range starts below them and exports them a second time.
        Exporting.awaitAcknowledged(cluster, Records.highestPositions(before));
        final HttpAnswer pause = cluster.client().pause().http();
        assertThat(pause.status()).as("pause: %s", pause).isEqualTo(200);
        Exporting.awaitClusterState(cluster, "PAUSED");
        return oneKey ? BackfillRecords.writeOneKey(cluster, prefix, count, 1_000) :
            Records.write(cluster, prefix, count);
    }

    private void assertError(final HttpAnswer answer, final int status, final String what)
    {
        assertThat(answer.status()).as("%s: %s", what, answer).isEqualTo(status);
        final JsonNode json = answer.json();
        assertThat(json.path("error").asString("")).as("error of %s: %s", what, answer).isNotBlank();
        assertThat(json.path("message").asString("")).as("message of %s: %s", what, answer).isNotBlank();
    }

    /** Every record of the cases so far exported, and the files without gaps: backfilled ranges meet the rest. */
    private void assertAllWrittenExportedWithoutGaps()
    {
        Records.awaitExported(cluster, allWritten);
        Records.assertExportedWithoutGaps(cluster, allWritten);
    }

    /** After a few polls of the view: every leader's exported position and the list of backfills as before. */
    private void assertNothingChanged(final Map<Integer, Long> positions, final Set<String> backfills, final String when)
    {
        assertThat(BackfillRecords.awaitBackfillIds(cluster)).as("backfills %s", when).isEqualTo(backfills);
        Await.quietPeriod("a few polls of the view: positions must not move", SETTLE);
        final ExportingStatus status = cluster.client().exporting();
        assertThat(Exporting.leaderExportedPositions(status, cluster.partitionCount()))
            .as("leaders' exported positions %s: %s", when, status).contains(positions);
    }

    /** Waits until every leader's exported position is its partition's range end; the positions then. */
    private Map<Integer, Long> awaitPositionsAtRangeEnds(final Map<Integer, long[]> ranges)
    {
        return Await.value("every leader's exported position at its range end " + describe(ranges), STATE_TIMEOUT, () ->
            Exporting.leaderExportedPositions(cluster.client().exporting(), cluster.partitionCount())
                .filter(now -> ranges.entrySet().stream().allMatch(e -> now.get(e.getKey()) == e.getValue()[1])));
    }

    private static Map<Integer, long[]> ranges(final JsonNode answer)
    {
        final Map<Integer, long[]> ranges = new TreeMap<>();
        for (final JsonNode range : answer.path("ranges"))
        {
            ranges.put(range.path("partitionId").asInt(),
                new long[] {range.path("fromPosition").asLong(), range.path("toPosition").asLong()});
        }
        return ranges;
    }

    private static String describe(final Map<Integer, long[]> ranges)
    {
        final Set<String> parts = new TreeSet<>();
        ranges.forEach((partitionId, range) -> parts.add(partitionId + ":" + range[0] + ".." + range[1]));
        return parts.toString();
    }
}
