package io.sluice.broker.backfill;

import io.sluice.exporter.spi.CommittedRecord;
import io.sluice.broker.exporter.ExporterConfig;
import io.sluice.broker.exporter.ExporterRegistry;
import io.sluice.broker.exporter.FileExporter;
import io.sluice.testing.QuietPeriod;
import io.sluice.broker.log.RecordLog;
import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Runners over a real on-disk {@link RecordLog} exporting through the real {@link FileExporter}; the
 * "replication" applies entries to the registry directly, as a single replica's state machine would.
 */
@Timeout(60)
class BackfillTaskRunnerTest
{
    private static final int PARTITION = 3;
    private static final Pattern POSITION = Pattern.compile("\"position\":(\\d+)");
    private static final Duration WAIT = Duration.ofSeconds(30);

    @TempDir
    Path dataDir;

    private RecordLog log;
    private final BackfillRegistry registry = new BackfillRegistry();
    private final List<BackfillEntry> replicated = new CopyOnWriteArrayList<>();
    private final ManualExportingSwitch gate = new ManualExportingSwitch();
    private final List<BackfillSupervisor> supervisors = new ArrayList<>();
    private BackfillRunnerConfig config = BackfillRunnerConfig.defaults()
        .withBatchRecords(64).withCheckpoints(500, 50).withBackoff(10, 100).withMaxAttempts(3);

    @BeforeEach
    void writeRecords() throws IOException
    {
        log = RecordLog.open(dataDir.resolve("log"), 64 * 1024, 0, 0);
        for (int i = 1; i <= 5_000; i++)
        {
            final byte[] key = ("order-" + i).getBytes(StandardCharsets.UTF_8);
            final byte[] payload = ("{\"n\":" + i + "}").getBytes(StandardCharsets.UTF_8);
            log.append(i, 1_700_000_000_000L + i, new UnsafeBuffer(key), 0, key.length,
                new UnsafeBuffer(payload), 0, payload.length);
        }
        log.flushWrites(); // appends are buffered until the state machine ends an entry
    }

    @AfterEach
    void close() throws Exception
    {
        for (final BackfillSupervisor supervisor : supervisors)
        {
            assertThat(supervisor.close(10, TimeUnit.SECONDS)).isTrue();
        }
        log.close();
    }

    @Test
    void tasksExportTheirRangesThroughTheFileExporterAndSucceed() throws IOException
    {
        // Checkpoints by count only: every 50 ms as well, a loaded machine would take more of them than the bound below.
        config = config.withCheckpoints(500, 60_000);
        final BackfillSupervisor supervisor = supervisor(factory());
        supervisor.onBecomeLeader();

        registry.register(new BackfillEntry.Register("b1", "file", 3, 1, 1_000), 1_000, 4_000);

        awaitState("b1", BackfillTaskState.SUCCEEDED);
        assertThat(exportedPositions()).containsExactlyInAnyOrderElementsOf(range(1_001, 4_000));
        assertThat(registry.tasksOf("b1")).allSatisfy(task ->
        {
            assertThat(task.exportedUpTo()).isEqualTo(task.toPosition());
            assertThat(task.attempts()).isEqualTo(1);
        });
        final long checkpoints = replicated.stream().filter(e -> e instanceof BackfillEntry.Checkpoint).count();
        assertThat(checkpoints).as("checkpoints are batched, not per record").isBetween(3L, 3L + 3_000 / 500 + 3);
        assertThat(registry.compactionFloor()).isEqualTo(Long.MAX_VALUE);
        final String firstLine = Files.readAllLines(exportFile()).get(0);
        assertThat(firstLine).matches(
            "\\{\"partitionId\":3,\"position\":\\d+,\"key\":\"order-\\d+\",\"timestamp\":\\d+,\"payload\":\\{\"n\":\\d+}}");
    }

    @Test
    void aTaskWhoseStartWasCompactedAwayExportsTheHeldPartAndSucceeds() throws IOException
    {
        log.roll();
        log.compact(2_000);
        final long firstHeld = log.firstPosition();
        assertThat(firstHeld).as("some segments went").isGreaterThan(1).isLessThanOrEqualTo(2_000);
        final BackfillSupervisor supervisor = supervisor(factory());
        supervisor.onBecomeLeader();

        registry.register(new BackfillEntry.Register("b1", "file", 2, 1, 1_000), 0, 4_000);

        awaitState("b1", BackfillTaskState.SUCCEEDED);
        assertThat(exportedPositions()).containsExactlyInAnyOrderElementsOf(range(firstHeld, 4_000));
        assertThat(registry.tasksOf("b1")).allSatisfy(task ->
        {
            assertThat(task.exportedUpTo()).isEqualTo(task.toPosition());
            assertThat(task.attempts()).as("never failed for the compacted part").isEqualTo(1);
        });
    }

    @Test
    void aFailedAttemptIsRetriedFromItsCheckpoint() throws IOException
    {
        final AtomicInteger opened = new AtomicInteger();
        final BackfillExporterFactory failingOnce = (exporterId, partitionId, task) ->
        {
            final BackfillExporter real = factory().open(exporterId, partitionId, task);
            final boolean fail = opened.incrementAndGet() == 1;
            return failAt(real, fail ? 2_700 : Long.MAX_VALUE);
        };
        supervisor(failingOnce).onBecomeLeader();

        registry.register(new BackfillEntry.Register("b1", "file", 1, 1, 1_000), 1_000, 4_000);

        awaitState("b1", BackfillTaskState.SUCCEEDED);
        final BackfillTask task = registry.tasksOf("b1").get(0);
        assertThat(task.attempts()).isEqualTo(2);
        assertThat(task.failureReason()).contains("sink refused position 2700");
        final List<Long> exported = exportedPositions();
        assertThat(exported).containsAll(range(1_001, 4_000));
        long checkpointBeforeFailure = 1_000; // the last checkpoint the state took before the failure
        for (final BackfillEntry entry : replicated)
        {
            if (entry instanceof BackfillEntry.AttemptFailed)
            {
                break;
            }
            if (entry instanceof BackfillEntry.Checkpoint checkpoint)
            {
                checkpointBeforeFailure = checkpoint.exportedUpTo();
            }
        }
        final long resumedAfter = checkpointBeforeFailure;
        assertThat(exported.stream().filter(p -> p == resumedAfter + 1).count())
            .as("the second attempt starts right after the last checkpoint (%s)", resumedAfter)
            .isEqualTo(resumedAfter + 1 < 2_700 ? 2 : 1);
        assertThat(exported.stream().filter(p -> p <= resumedAfter).distinct().count())
            .as("nothing up to that checkpoint is exported twice")
            .isEqualTo(exported.stream().filter(p -> p <= resumedAfter).count());
    }

    @Test
    void aTaskThatKeepsFailingEndsFailedWithTheReasonAfterTheBoundedAttempts()
    {
        supervisor((exporterId, partitionId, task) -> failAt(factory().open(exporterId, partitionId, task), 1_500))
            .onBecomeLeader();

        registry.register(new BackfillEntry.Register("b1", "file", 1, 1, 1_000), 1_000, 2_000);

        awaitState("b1", BackfillTaskState.FAILED);
        final BackfillTask task = registry.tasksOf("b1").get(0);
        assertThat(task.attempts()).isEqualTo(config.maxAttempts());
        assertThat(task.failureReason()).contains("sink refused position 1500");
        assertThat(registry.compactionFloor()).isEqualTo(Long.MAX_VALUE);
    }

    @Test
    void anUnknownExporterFailsTheTaskSayingWhich()
    {
        supervisor(factory()).onBecomeLeader();

        registry.register(new BackfillEntry.Register("b1", "nope", 1, 1, 1_000), 0, 10);

        awaitState("b1", BackfillTaskState.FAILED);
        assertThat(registry.tasksOf("b1").get(0).failureReason()).contains("exporter nope is not configured");
    }

    @Test
    void aPauseStopsExportingUntilResumeAndReportsPending() throws Exception
    {
        supervisor(throttled(factory())).onBecomeLeader();
        registry.register(new BackfillEntry.Register("b1", "file", 2, 1, 1_000), 0, 5_000);
        await().atMost(WAIT).until(() -> exportedCount() > 200);

        assertThat(gate.pause(10, TimeUnit.SECONDS)).isTrue();
        final long atPause = exportedCount();
        QuietPeriod.of(Duration.ofMillis(300), "nothing exported after the pause was applied");

        assertThat(exportedCount()).as("nothing exported after the pause was applied").isEqualTo(atPause);
        assertThat(atPause).isLessThan(5_000);
        assertThat(registry.tasksOf("b1")).allSatisfy(t -> assertThat(t.reportedState(gate.isPaused()))
            .isEqualTo(BackfillTaskState.PENDING));

        gate.resume();
        awaitState("b1", BackfillTaskState.SUCCEEDED);
        assertThat(exportedPositions()).containsAll(range(1, 5_000));
    }

    @Test
    void cancelStopsTheRunnersPromptly() throws Exception
    {
        final BackfillSupervisor supervisor = supervisor(throttled(factory()));
        supervisor.onBecomeLeader();
        registry.register(new BackfillEntry.Register("b1", "file", 2, 1, 1_000), 0, 5_000);
        await().atMost(WAIT).until(() -> exportedCount() > 200);

        registry.apply(new BackfillEntry.Cancel("b1", 2_000));

        await().atMost(WAIT).until(() -> supervisor.liveRunners() == 0);
        final long afterStop = exportedCount();
        QuietPeriod.of(Duration.ofMillis(200), "stopped runners export nothing more");
        assertThat(exportedCount()).isEqualTo(afterStop).isLessThan(5_000);
        assertThat(registry.tasksOf("b1")).extracting(BackfillTask::state)
            .containsOnly(BackfillTaskState.CANCELLED);
        assertThat(registry.compactionFloor()).isEqualTo(Long.MAX_VALUE);
    }

    @Test
    void aNewLeaderResumesFromTheReplicatedCheckpoint() throws Exception
    {
        final BackfillSupervisor first = supervisor(throttled(factory()));
        first.onBecomeLeader();
        registry.register(new BackfillEntry.Register("b1", "file", 1, 1, 1_000), 0, 5_000);
        await().atMost(WAIT).until(() -> registry.tasksOf("b1").get(0).exportedUpTo() >= 1_000);

        first.onLeadershipLost();
        await().atMost(WAIT).until(() -> first.liveRunners() == 0);
        final BackfillTask stopped = registry.tasksOf("b1").get(0);
        assertThat(stopped.state()).isEqualTo(BackfillTaskState.RUNNING);
        assertThat(registry.compactionFloor()).isEqualTo(stopped.exportedUpTo() + 1);

        final BackfillSupervisor second = supervisor(factory()); // the "new leader" over the same replicated state
        second.onBecomeLeader();

        awaitState("b1", BackfillTaskState.SUCCEEDED);
        final BackfillTask done = registry.tasksOf("b1").get(0);
        assertThat(done.attempts()).isEqualTo(2);
        final List<Long> exported = exportedPositions();
        assertThat(exported).containsAll(range(1, 5_000));
        assertThat(exported.stream().filter(p -> p == stopped.exportedUpTo() + 1).count()).isBetween(1L, 2L);
        assertThat(exported.stream().filter(p -> p <= stopped.exportedUpTo()).count())
            .as("nothing up to the checkpoint is exported again").isEqualTo(stopped.exportedUpTo());
    }

    @Test
    void aSoftPauseKeepsExportingButWithholdsCheckpoints() throws Exception
    {
        gate.softPause();
        supervisor(factory()).onBecomeLeader();
        registry.register(new BackfillEntry.Register("b1", "file", 1, 1, 1_000), 0, 3_000);

        await().atMost(WAIT).until(() -> exportedCount() == 3_000);
        QuietPeriod.of(Duration.ofMillis(200), "a soft pause withholds every checkpoint");
        final BackfillTask held = registry.tasksOf("b1").get(0);
        assertThat(held.exportedUpTo()).isZero();
        assertThat(held.state()).isEqualTo(BackfillTaskState.RUNNING);
        assertThat(registry.compactionFloor()).isEqualTo(1);

        gate.resume();
        awaitState("b1", BackfillTaskState.SUCCEEDED);
    }

    // ------------------------------------------------------------------------------------------- helpers

    private BackfillSupervisor supervisor(final BackfillExporterFactory factory)
    {
        final BackfillReplicator replicator = entry ->
            CompletableFuture.runAsync(() ->
            {
                if (registry.apply(entry) == BackfillApplyOutcome.APPLIED)
                {
                    replicated.add(entry); // what the replicated state took
                }
            });
        final BackfillSupervisor supervisor = new BackfillSupervisor(PARTITION, registry,
            new RecordLogBackfillSource(PARTITION, () -> log), factory, replicator, gate, config, Clock.systemUTC());
        supervisors.add(supervisor);
        return supervisor;
    }

    private BackfillExporterFactory factory()
    {
        return new SpiBackfillExporterFactory(0, dataDir,
            Map.of("file", new ExporterConfig("file", FileExporter.TYPE, Map.of())), ExporterRegistry.builtIn());
    }

    private static BackfillExporter failAt(final BackfillExporter real, final long failPosition)
    {
        return new BackfillExporter()
        {
            public void onRecord(final CommittedRecord record) throws Exception
            {
                if (record.position() == failPosition)
                {
                    throw new IOException("sink refused position " + failPosition);
                }
                real.onRecord(record);
            }

            public long flush() throws Exception
            {
                return real.flush();
            }

            public long acknowledged()
            {
                return real.acknowledged();
            }

            public void close() throws Exception
            {
                real.close();
            }
        };
    }

    /** Slows the real exporter a little so a test can act while a task is still running. */
    private static BackfillExporterFactory throttled(final BackfillExporterFactory factory)
    {
        return (exporterId, partitionId, task) ->
        {
            final BackfillExporter real = factory.open(exporterId, partitionId, task);
            return new BackfillExporter()
            {
                public void onRecord(final CommittedRecord record) throws Exception
                {
                    if (record.position() % 5 == 0)
                    {
                        Thread.sleep(1);
                    }
                    real.onRecord(record);
                }

                public long flush() throws Exception
                {
                    return real.flush();
                }

                public long acknowledged()
                {
                    return real.acknowledged();
                }

                public void close() throws Exception
                {
                    real.close();
                }
            };
        };
    }

    private void awaitState(final String backfillId, final BackfillTaskState state)
    {
        await().atMost(WAIT).untilAsserted(() -> assertThat(registry.tasksOf(backfillId))
            .isNotEmpty().extracting(BackfillTask::state).containsOnly(state));
    }

    private Path exportFile()
    {
        return dataDir.resolve("exports").resolve("file").resolve("partition-" + PARTITION + ".jsonl");
    }

    private long exportedCount() throws IOException
    {
        return Files.exists(exportFile()) ? Files.readAllLines(exportFile()).size() : 0;
    }

    private List<Long> exportedPositions() throws IOException
    {
        final List<Long> positions = new ArrayList<>();
        for (final String line : Files.readAllLines(exportFile()))
        {
            final Matcher matcher = POSITION.matcher(line);
            assertThat(matcher.find()).as(line).isTrue();
            positions.add(Long.parseLong(matcher.group(1)));
        }
        return positions;
    }

    private static List<Long> range(final long from, final long to)
    {
        final List<Long> result = new ArrayList<>();
        for (long p = from; p <= to; p++)
        {
            result.add(p);
        }
        return result;
    }
}
