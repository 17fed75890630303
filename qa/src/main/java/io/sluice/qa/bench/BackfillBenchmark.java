package io.sluice.qa.bench;

import io.sluice.qa.cluster.SluiceCluster;
import io.sluice.broker.backfill.BackfillEntry;
import io.sluice.broker.backfill.BackfillRegistry;
import io.sluice.broker.backfill.BackfillReplicator;
import io.sluice.broker.backfill.BackfillRunnerConfig;
import io.sluice.broker.backfill.BackfillSupervisor;
import io.sluice.broker.backfill.BackfillTask;
import io.sluice.broker.backfill.BackfillTaskState;
import io.sluice.broker.backfill.ManualExportingSwitch;
import io.sluice.broker.backfill.RecordLogBackfillSource;
import io.sluice.broker.backfill.SpiBackfillExporterFactory;
import io.sluice.broker.exporter.ExporterConfig;
import io.sluice.broker.exporter.ExporterRegistry;
import io.sluice.broker.exporter.FileExporter;
import io.sluice.broker.log.RecordLog;
import org.agrona.concurrent.UnsafeBuffer;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/**
 * Backfill records/s of one partition's skipped range with 1, 2, 4 and 8 tasks: the real runners (one
 * thread per task), the real on-disk record log and the real file exporter, in one JVM; checkpoints are
 * "replicated" by applying them to the registry directly, so the figure is the runner's, not Raft's.
 * Baseline: 1 task over the same range. Ratio = 8 tasks / 1 task. Each figure is the median of the runs;
 * every run checks that the export file holds exactly the range's records.
 */
public final class BackfillBenchmark
{
    private static final int[] TASK_COUNTS = {1, 2, 4, 8};
    private static final int PARTITION = 1;

    private BackfillBenchmark()
    {
    }

    public static void main(final String[] args) throws Exception
    {
        final BenchmarkRun run = BenchmarkRun.start("backfill", args);
        final int records = run.choose("records", 30_000, 200_000);
        final int runs = run.choose("runs", 1, 3);
        final int payloadBytes = 100;
        run.param("payload_bytes", payloadBytes);
        final BackfillRunnerConfig config = BackfillRunnerConfig.defaults().withMaxConcurrentTasks(8);
        run.param("batch_records", config.batchRecords());
        run.param("checkpoint_every_records", config.checkpointEveryRecords());

        final Path dir = Files.createTempDirectory("sluice-backfill-bench");
        try (RecordLog log = RecordLog.open(dir.resolve("log"), 64L * 1024 * 1024, 0, 0))
        {
            final long writeStartNs = System.nanoTime();
            writeRecords(log, records, payloadBytes);
            run.log("wrote %,d records to the record log in %.1f s", records, (System.nanoTime() - writeStartNs) / 1e9);

            backfill(log, dir.resolve("warmup"), Math.min(records, 20_000), 2, config); // JIT, page cache
            final double[] perSecond = new double[TASK_COUNTS.length];
            for (int i = 0; i < TASK_COUNTS.length; i++)
            {
                final double[] samples = new double[runs];
                for (int r = 0; r < runs; r++)
                {
                    samples[r] = backfill(log, dir.resolve("run-" + TASK_COUNTS[i] + "-" + r), records, TASK_COUNTS[i], config);
                    run.log("%d task(s), run %d: %,.0f records/s", TASK_COUNTS[i], r + 1, samples[r]);
                }
                perSecond[i] = Stats.median(samples);
                run.result("records_per_s_" + TASK_COUNTS[i] + (TASK_COUNTS[i] == 1 ? "_task" : "_tasks"), perSecond[i]);
            }
            run.ratio(perSecond[TASK_COUNTS.length - 1] / perSecond[0]);
        }
        finally
        {
            SluiceCluster.deleteRecursively(dir);
        }
        run.finish();
    }

    /** Backfills (0, records] with the given tasks into a fresh export folder; returns records/s. */
    private static double backfill(
        final RecordLog log, final Path runDir, final int records, final int tasks, final BackfillRunnerConfig config)
        throws Exception
    {
        final BackfillRegistry registry = new BackfillRegistry();
        final BackfillReplicator replicator = entry ->
        {
            registry.apply(entry);
            return CompletableFuture.completedFuture(null);
        };
        final SpiBackfillExporterFactory exporters = new SpiBackfillExporterFactory(0, runDir,
            Map.of("file", new ExporterConfig("file", FileExporter.TYPE, Map.of())), ExporterRegistry.builtIn());
        final BackfillSupervisor supervisor = new BackfillSupervisor(PARTITION, registry,
            new RecordLogBackfillSource(PARTITION, () -> log), exporters, replicator, new ManualExportingSwitch(), config,
            Clock.systemUTC());
        try
        {
            supervisor.onBecomeLeader();
            final long startNs = System.nanoTime();
            registry.register(new BackfillEntry.Register("bench", "file", tasks, 1, System.currentTimeMillis()), 0, records);
            final long deadlineNs = startNs + TimeUnit.MINUTES.toNanos(5);
            while (!allSucceeded(registry.tasksOf("bench")))
            {
                if (System.nanoTime() > deadlineNs)
                {
                    throw new IllegalStateException("backfill with " + tasks + " tasks did not finish in 5 minutes: " +
                        registry.tasksOf("bench"));
                }
                failIfAnyFailed(registry.tasksOf("bench"));
                Thread.sleep(1);
            }
            final long elapsedNs = System.nanoTime() - startNs;
            final Path file = runDir.resolve("exports").resolve("file").resolve("partition-" + PARTITION + ".jsonl");
            final long lines;
            try (Stream<String> stream = Files.lines(file))
            {
                lines = stream.count();
            }
            if (lines != records)
            {
                throw new IllegalStateException("expected " + records + " exported lines with " + tasks +
                    " tasks, found " + lines);
            }
            return Stats.perSecond(records, elapsedNs);
        }
        finally
        {
            supervisor.close(30, TimeUnit.SECONDS);
            SluiceCluster.deleteRecursively(runDir);
        }
    }

    private static boolean allSucceeded(final List<BackfillTask> tasks)
    {
        return !tasks.isEmpty() && tasks.stream().allMatch(t -> t.state() == BackfillTaskState.SUCCEEDED);
    }

    private static void failIfAnyFailed(final List<BackfillTask> tasks)
    {
        for (final BackfillTask task : tasks)
        {
            if (task.state() == BackfillTaskState.FAILED)
            {
                throw new IllegalStateException(task.key() + " failed: " + task.failureReason());
            }
        }
    }

    private static void writeRecords(final RecordLog log, final int records, final int payloadBytes) throws IOException
    {
        final byte[] payload = new byte[payloadBytes];
        Arrays.fill(payload, (byte)'x');
        final byte[] prefix = "{\"v\":\"".getBytes(StandardCharsets.US_ASCII);
        System.arraycopy(prefix, 0, payload, 0, prefix.length);
        payload[payloadBytes - 2] = '"';
        payload[payloadBytes - 1] = '}';
        final UnsafeBuffer payloadBuffer = new UnsafeBuffer(payload);
        final UnsafeBuffer keyBuffer = new UnsafeBuffer(new byte[32]);
        for (int i = 1; i <= records; i++)
        {
            final int keyLength = keyBuffer.putStringWithoutLengthAscii(0, "order-" + i);
            log.append(i, 1_700_000_000_000L + i, keyBuffer, 0, keyLength, payloadBuffer, 0, payloadBytes);
        }
        log.flushWrites(); // appends are buffered until the state machine ends an entry
    }

}
