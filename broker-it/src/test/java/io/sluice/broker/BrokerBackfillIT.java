package io.sluice.broker;

import io.sluice.broker.backfill.BackfillTaskState;
import io.sluice.testing.QuietPeriod;
import io.sluice.protocol.codecs.AdminRequestKind;
import io.sluice.protocol.codecs.BackfillRequestEncoder;
import io.sluice.protocol.codecs.BackfillState;
import io.sluice.protocol.codecs.BackfillStatusRequestEncoder;
import io.sluice.protocol.codecs.BackfillStatusResponseDecoder;
import io.sluice.protocol.codecs.CancelBackfillRequestEncoder;
import io.sluice.protocol.codecs.ErrorCode;
import io.sluice.protocol.codecs.ErrorResponseDecoder;
import io.sluice.protocol.codecs.MessageHeaderDecoder;
import io.sluice.protocol.codecs.MessageHeaderEncoder;
import org.agrona.DirectBuffer;
import org.agrona.ExpandableArrayBuffer;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.UnaryOperator;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/** Reset to latest and backfill (issue 6) through the command API of 3 real brokers. */
class BrokerBackfillIT
{
    private static final int PARTITION = 1;
    private static final String EXPORTER = "file";
    /**
     * For the tests that address the partition's leader by number: automatic balance would move it to its preferred
     * broker seconds after the start, under the test (leadership moves during backfills have tests of their own).
     */
    private static final UnaryOperator<BrokerConfig> LEADERS_STAY = (c) -> c.withAutoRebalance(false);

    @TempDir
    Path dataDir;

    @AutoClose
    private TestCluster cluster;

    @Test
    @Timeout(180)
    void resetWhilePausedExportsNothingThenBackfillsEverySkippedRecordAndKeepsStateAcrossRestart() throws Exception
    {
        // Small snapshot threshold: the backfill state goes through snapshots before the restart.
        cluster = TestCluster.start(dataDir, 3, 1, 3, (c) -> c.withSnapshots(20, 64 * 1024).withAutoRebalance(false));
        cluster.awaitLeader(PARTITION);
        cluster.appendRecords(PARTITION, 10, 5, "before");
        cluster.awaitExported(PARTITION, 10);
        setExporting(AdminRequestKind.PAUSE_EXPORTING, 1);
        final int linesAtPause = cluster.exported(PARTITION).size();
        final List<Long> skipped = cluster.appendRecords(PARTITION, 40, 5, "paused");
        final long lastSkipped = skipped.get(skipped.size() - 1);

        final int leader = cluster.awaitLeader(PARTITION);
        final int follower = cluster.distribution.replicasOf(PARTITION).stream()
            .filter((b) -> b != leader).findFirst().orElseThrow();
        final ErrorResponseDecoder notLeader = TestCluster.error(cluster.send(follower, backfillRequest("bf-1", 2)));
        assertThat(notLeader.code()).isEqualTo(ErrorCode.NOT_LEADER);
        assertThat(notLeader.leaderId()).isEqualTo(leader);

        final List<Task> registered = tasks(cluster.send(leader, backfillRequest("bf-1", 2)));
        assertThat(registered).hasSize(2);
        assertThat(registered).allSatisfy((t) -> assertThat(t.state).isEqualTo(BackfillState.PENDING));
        assertThat(registered.get(0).from).isLessThanOrEqualTo(skipped.get(0));
        assertThat(registered.get(1).to).isEqualTo(lastSkipped);
        assertThat(registered.get(0).to + 1).isEqualTo(registered.get(1).from);
        for (final int b : cluster.distribution.replicasOf(PARTITION))
        {
            await("exporter reset on broker " + b).atMost(Duration.ofSeconds(30))
                .until(() -> cluster.brokers[b].partition(PARTITION).state().exporterPosition(EXPORTER) ==
                    lastSkipped);
        }

        QuietPeriod.of(Duration.ofMillis(1500), "a paused partition exports nothing, backfills included");
        assertThat(cluster.exported(PARTITION)).as("a paused partition exports nothing, backfills included")
            .hasSize(linesAtPause);
        assertThat(statusFromTheLeader("bf-1")).allSatisfy((t) -> assertThat(t.state).isEqualTo(BackfillState.PENDING));

        setExporting(AdminRequestKind.RESUME_EXPORTING, 2);
        final List<Long> fresh = cluster.appendRecords(PARTITION, 10, 5, "fresh");
        final long last = fresh.get(fresh.size() - 1);
        cluster.awaitExported(PARTITION, last);
        await("backfill bf-1 succeeded").atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(200))
            .until(() -> statusFromTheLeader("bf-1").stream()
                .allMatch((t) -> t.state == BackfillState.SUCCEEDED));
        assertNoGaps(last);

        cluster.stopAll();
        for (int b = 0; b < 3; b++)
        {
            cluster.startBroker(b);
        }
        final List<Task> restored = statusFromTheLeader("bf-1");
        assertThat(restored).hasSize(2)
            .allSatisfy((t) -> assertThat(t.state).isEqualTo(BackfillState.SUCCEEDED))
            .allSatisfy((t) -> assertThat(t.exportedUpTo).isEqualTo(t.to));
    }

    @Test
    @Timeout(180)
    void tasksResumeOnTheNewLeaderAfterTheLeaderCloses() throws Exception
    {
        cluster = TestCluster.start(dataDir, 3, 1, 3);
        cluster.awaitLeader(PARTITION);
        setExporting(AdminRequestKind.PAUSE_EXPORTING, 1);
        final List<Long> skipped = cluster.appendRecords(PARTITION, 600, 50, "skipped");
        final int oldLeader = cluster.awaitLeader(PARTITION);
        assertThat(tasks(cluster.send(oldLeader, backfillRequest("bf-2", 3)))).hasSize(3);

        setExporting(AdminRequestKind.RESUME_EXPORTING, 2);
        cluster.crashBroker(oldLeader); // mid-backfill or before it started: either way the new leader finishes
        final int newLeader = cluster.awaitLeader(PARTITION);
        assertThat(newLeader).isNotEqualTo(oldLeader);
        await("backfill bf-2 succeeded on the new leader").atMost(Duration.ofSeconds(90))
            .pollInterval(Duration.ofMillis(200))
            .until(() -> statusFromTheLeader("bf-2").stream()
                .allMatch((t) -> t.state == BackfillState.SUCCEEDED));
        assertNoGaps(skipped.get(skipped.size() - 1));
    }

    @Test
    @Timeout(120)
    void cancelledBackfillIsCancelledOnEveryReplica() throws Exception
    {
        cluster = TestCluster.start(dataDir, 3, 1, 3, LEADERS_STAY);
        cluster.awaitLeader(PARTITION);
        setExporting(AdminRequestKind.PAUSE_EXPORTING, 1);
        cluster.appendRecords(PARTITION, 20, 5, "skipped");
        final int leader = cluster.awaitLeader(PARTITION);
        assertThat(tasks(cluster.send(leader, backfillRequest("bf-3", 2)))).hasSize(2);

        final List<Task> cancelled = tasks(cluster.send(leader, cancelRequest("bf-3")));
        assertThat(cancelled).hasSize(2).allSatisfy((t) -> assertThat(t.state).isEqualTo(BackfillState.CANCELLED));
        setExporting(AdminRequestKind.RESUME_EXPORTING, 2);
        QuietPeriod.of(Duration.ofSeconds(1), "a cancelled backfill stays cancelled after the resume");
        assertThat(statusFromTheLeader("bf-3")).allSatisfy((t) -> assertThat(t.state).isEqualTo(BackfillState.CANCELLED));
        assertThat(cluster.brokers[cluster.awaitLeader(PARTITION)].partition(PARTITION).state().compactionFloor())
            .as("a cancelled backfill no longer holds records").isGreaterThan(20);
        await("the cancel on every replica").atMost(Duration.ofSeconds(30)).untilAsserted(() ->
        {
            for (final int b : cluster.distribution.replicasOf(PARTITION))
            {
                assertThat(cluster.brokers[b].partition(PARTITION).backfills().registry().tasksOf("bf-3")).as("broker %d", b)
                    .hasSize(2).allSatisfy((t) -> assertThat(t.state()).isEqualTo(BackfillTaskState.CANCELLED));
            }
        });
    }

    @Test
    @Timeout(120)
    void aCancelArrivingWhileTheLeaderHandsOverWaitsForTheTransferAndNamesTheNewLeader() throws Exception
    {
        cluster = TestCluster.start(dataDir, 3, 1, 3, LEADERS_STAY);
        cluster.awaitLeader(PARTITION);
        setExporting(AdminRequestKind.PAUSE_EXPORTING, 1);
        cluster.appendRecords(PARTITION, 20, 5, "skipped");
        final int leader = cluster.awaitLeader(PARTITION);
        assertThat(tasks(cluster.send(leader, backfillRequest("bf-4", 2)))).hasSize(2);
        final int target = cluster.distribution.replicasOf(PARTITION).stream()
            .filter((b) -> b != leader).findFirst().orElseThrow();

        // The transfer holds the leader's proposals from the moment it is asked for; the cancel lands in that hold.
        final var transfer = cluster.brokers[leader].partition(PARTITION).transferLeadership(target, Duration.ofSeconds(5));
        final DirectBuffer answer = cluster.send(leader, cancelRequest("bf-4"));
        assertThat(transfer.get(10, java.util.concurrent.TimeUnit.SECONDS)).isEqualTo(target);

        final ErrorResponseDecoder error = TestCluster.error(answer);
        assertThat(error.code()).as("a cancel held by a transfer is not refused as unavailable: %s", error.message())
            .isEqualTo(ErrorCode.NOT_LEADER);
        assertThat(error.leaderId()).as("it names the leader the transfer made").isEqualTo(target);
        assertThat(tasks(cluster.send(target, cancelRequest("bf-4"))))
            .hasSize(2).allSatisfy((t) -> assertThat(t.state).isEqualTo(BackfillState.CANCELLED));
    }

    // ---------------------------------------------------------------------------------------------- helpers

    private void setExporting(final AdminRequestKind kind, final long version)
    {
        for (final int b : cluster.distribution.replicasOf(PARTITION))
        {
            if (cluster.brokers[b] != null)
            {
                cluster.admin(b, PARTITION, kind, version);
            }
        }
    }

    private void assertNoGaps(final long last) throws Exception
    {
        final Set<Long> positions = cluster.exportedByPosition(PARTITION).keySet();
        final List<Long> missing = new ArrayList<>();
        for (long p = 1; p <= last; p++)
        {
            if (!positions.contains(p))
            {
                missing.add(p);
            }
        }
        assertThat(missing).as("positions never exported").isEmpty();
    }

    /**
     * The backfill's tasks as the partition's leader reports them. Automatic balance moves the partition to its
     * preferred broker seconds after a start, so a NOT_LEADER answer is asked again of whoever leads then.
     */
    private List<Task> statusFromTheLeader(final String backfillId)
    {
        final AtomicReference<List<Task>> answer = new AtomicReference<>();
        await("the status of " + backfillId + " from the partition's leader").atMost(Duration.ofSeconds(30))
            .pollInterval(Duration.ofMillis(100))
            .untilAsserted(() -> answer.set(status(cluster.awaitLeader(PARTITION), backfillId)));
        return answer.get();
    }

    private List<Task> status(final int brokerId, final String backfillId)
    {
        final ExpandableArrayBuffer buffer = new ExpandableArrayBuffer(64);
        final BackfillStatusRequestEncoder encoder = new BackfillStatusRequestEncoder()
            .wrapAndApplyHeader(buffer, 0, new MessageHeaderEncoder())
            .partitionId(PARTITION)
            .backfillId(backfillId);
        return tasks(cluster.send(brokerId, TestCluster.bytes(buffer,
            MessageHeaderEncoder.ENCODED_LENGTH + encoder.encodedLength())));
    }

    private static io.sluice.protocol.transport.MessageWriter backfillRequest(final String backfillId, final int tasks)
    {
        final ExpandableArrayBuffer buffer = new ExpandableArrayBuffer(64);
        final BackfillRequestEncoder encoder = new BackfillRequestEncoder()
            .wrapAndApplyHeader(buffer, 0, new MessageHeaderEncoder())
            .partitionId(PARTITION)
            .taskCount(tasks)
            .firstTaskId(0)
            .backfillId(backfillId)
            .exporterId(EXPORTER);
        return TestCluster.bytes(buffer, MessageHeaderEncoder.ENCODED_LENGTH + encoder.encodedLength());
    }

    private static io.sluice.protocol.transport.MessageWriter cancelRequest(final String backfillId)
    {
        final ExpandableArrayBuffer buffer = new ExpandableArrayBuffer(64);
        final CancelBackfillRequestEncoder encoder = new CancelBackfillRequestEncoder()
            .wrapAndApplyHeader(buffer, 0, new MessageHeaderEncoder())
            .partitionId(PARTITION)
            .backfillId(backfillId);
        return TestCluster.bytes(buffer, MessageHeaderEncoder.ENCODED_LENGTH + encoder.encodedLength());
    }

    private record Task(int id, BackfillState state, long from, long to, long exportedUpTo)
    {
    }

    private static List<Task> tasks(final DirectBuffer response)
    {
        final MessageHeaderDecoder header = new MessageHeaderDecoder().wrap(response, 0);
        if (header.templateId() != BackfillStatusResponseDecoder.TEMPLATE_ID)
        {
            final ErrorResponseDecoder error = TestCluster.error(response);
            throw new AssertionError("expected backfill tasks, got " + error.code() + " " + error.message());
        }
        final BackfillStatusResponseDecoder decoder = new BackfillStatusResponseDecoder()
            .wrap(response, header.encodedLength(), header.blockLength(), header.version());
        final List<Task> tasks = new ArrayList<>();
        for (final BackfillStatusResponseDecoder.TasksDecoder t : decoder.tasks())
        {
            tasks.add(new Task(t.taskId(), t.state(), t.fromPosition(), t.toPosition(), t.exportedUpTo()));
            t.skipBackfillId();
            t.skipExporterId();
            t.skipFailureReason();
        }
        return tasks;
    }
}
