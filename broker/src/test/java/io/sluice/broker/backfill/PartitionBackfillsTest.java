package io.sluice.broker.backfill;

import io.sluice.broker.exporter.ExporterConfig;
import io.sluice.broker.exporter.ExporterRegistry;
import io.sluice.broker.exporter.FileExporter;
import io.sluice.broker.log.RecordLog;
import io.sluice.protocol.transport.MessageWriter;
import org.agrona.ExpandableArrayBuffer;
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
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

/**
 * One replica's backfills as its state machine would drive them: entries go through their encoding and one
 * apply thread (standing in for the Raft log), over a real record log and the real file exporter.
 */
@Timeout(60)
class PartitionBackfillsTest implements PartitionBackfills.StateView
{
    private static final int PARTITION = 4;

    @TempDir
    Path dataDir;

    private final ExecutorService applyThread = Executors.newSingleThreadExecutor();
    private final Map<String, Long> exporterPositions = new ConcurrentHashMap<>(Map.of("file", 0L));
    private RecordLog log;
    private PartitionBackfills backfills;

    @BeforeEach
    void open() throws IOException
    {
        log = RecordLog.open(dataDir.resolve("log"), 1024 * 1024, 0, 0);
        for (int i = 1; i <= 2_000; i++)
        {
            final byte[] payload = ("{\"n\":" + i + "}").getBytes(StandardCharsets.UTF_8);
            log.append(i, i, null, 0, 0, new UnsafeBuffer(payload), 0, payload.length);
        }
        log.flushWrites(); // appends are buffered until the state machine ends an entry
        exporterPositions.put("file", 500L);
        backfills = newBackfills();
    }

    @AfterEach
    void close() throws Exception
    {
        backfills.close();
        applyThread.shutdownNow();
        log.close();
    }

    private PartitionBackfills newBackfills()
    {
        final AtomicReference<PartitionBackfills> self = new AtomicReference<>();
        final BackfillReplicator replicator = entry ->
        {
            final byte[] bytes = BackfillMessages.encode(entry); // what the Raft log carries
            return CompletableFuture.runAsync(() -> self.get().apply(new UnsafeBuffer(bytes), 0, bytes.length), applyThread);
        };
        final PartitionBackfills created = new PartitionBackfills(0, PARTITION, this,
            new RecordLogBackfillSource(PARTITION, () -> log),
            new SpiBackfillExporterFactory(0, dataDir,
                Map.of("file", new ExporterConfig("file", FileExporter.TYPE, Map.of())), ExporterRegistry.builtIn()),
            replicator, new ManualExportingSwitch(), () -> false,
            BackfillRunnerConfig.defaults().withCheckpoints(300, 20).withBackoff(10, 100), Clock.systemUTC());
        self.set(created);
        return created;
    }

    @Test
    void aBackfillRequestResetsTheExporterAndItsTasksExportTheSkippedRange() throws Exception
    {
        backfills.onBecomeLeader();

        final AtomicReference<MessageWriter> answer = new AtomicReference<>();
        backfills.handler().onStart(PARTITION, "bf", "file", 3, 1, answer::set);

        await().atMost(Duration.ofSeconds(10)).until(() -> answer.get() != null);
        assertThat(exporterPosition("file")).as("reset to the latest position").isEqualTo(2_000);
        assertThat(backfills.registry().tasksOf("bf")).extracting(BackfillTask::fromPosition)
            .containsExactly(501L, 1_001L, 1_501L);
        await().atMost(Duration.ofSeconds(30)).until(() -> backfills.registry().tasksOf("bf").stream()
            .allMatch(t -> t.state() == BackfillTaskState.SUCCEEDED));
        final Path file = dataDir.resolve("exports/file/partition-" + PARTITION + ".jsonl");
        assertThat(Files.readAllLines(file)).hasSize(1_500);
        assertThat(backfills.compactionFloor()).isEqualTo(Long.MAX_VALUE);
    }

    @Test
    void aSnapshotCarriesTheBackfillsToAFreshReplica() throws Exception
    {
        applyOnLogThread(new BackfillEntry.Register("bf", "file", 2, 1, 1_000));
        applyOnLogThread(new BackfillEntry.AttemptStarted("bf", 1, 2_000));
        applyOnLogThread(new BackfillEntry.Checkpoint("bf", 1, 600, 3_000));
        final ExpandableArrayBuffer snapshot = new ExpandableArrayBuffer();
        final int length = backfills.writeSnapshot(snapshot, 0);

        final PartitionBackfills restored = newBackfills();
        try
        {
            restored.readSnapshot(snapshot, 0, length);
            assertThat(restored.registry().tasks()).isEqualTo(backfills.registry().tasks());
            assertThat(restored.compactionFloor()).isEqualTo(601);
        }
        finally
        {
            restored.close();
        }
    }

    @Test
    void aRegistrationAppliedAgainOverALongerLogKeepsTheRangeItWasProposedWith() throws Exception
    {
        // Proposed when the leader's last position was 1,200; the log (2,000 records) already holds later ones,
        // as it does on a replica that applies the entry again after a restart.
        applyOnLogThread(new BackfillEntry.Register("bf", "file", 2, 1, 1_000, 1_200));

        assertThat(backfills.registry().tasks()).extracting(BackfillTask::fromPosition, BackfillTask::toPosition)
            .containsExactly(org.assertj.core.groups.Tuple.tuple(501L, 850L), org.assertj.core.groups.Tuple.tuple(851L, 1_200L));
        assertThat(exporterPosition("file")).isEqualTo(1_200);
    }

    @Test
    void aRegistrationForAnUnknownExporterOrGarbageBytesChangeNothing()
    {
        assertThat(backfills.apply(new BackfillEntry.Register("bf", "kafka", 1, 1, 1_000)))
            .isEqualTo(BackfillApplyOutcome.INVALID_ARGUMENT);
        assertThatThrownBy(() -> backfills.apply(new UnsafeBuffer(new byte[] {1, 3, 0}), 0, 3))
            .isInstanceOf(BackfillCodecException.class);
        assertThat(backfills.registry().tasks()).isEmpty();
        assertThat(exporterPosition("file")).isEqualTo(500);
    }

    private void applyOnLogThread(final BackfillEntry entry) throws Exception
    {
        final byte[] bytes = BackfillMessages.encode(entry);
        applyThread.submit(() -> backfills.apply(new UnsafeBuffer(bytes), 0, bytes.length)).get(10, TimeUnit.SECONDS);
    }

    // ------------------------------------------------------------------------------- PartitionState

    @Override
    public Set<String> exporterIds()
    {
        return Set.of("file");
    }

    @Override
    public long exporterPosition(final String exporterId)
    {
        return exporterPositions.getOrDefault(exporterId, 0L);
    }

    @Override
    public long lastPosition()
    {
        return log.lastPosition();
    }

    @Override
    public void advanceExporterPosition(final String exporterId, final long position)
    {
        exporterPositions.merge(exporterId, position, Math::max);
    }
}
