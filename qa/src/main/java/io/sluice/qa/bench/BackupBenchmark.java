package io.sluice.qa.bench;

import io.sluice.protocol.cluster.PartitionReplica;
import io.sluice.qa.cluster.ClassDataSharing;
import io.sluice.qa.cluster.ExportingControlAnswer;
import io.sluice.qa.cluster.GatewayClient;
import io.sluice.qa.cluster.HttpAnswer;
import io.sluice.qa.cluster.RecordToWrite;
import io.sluice.qa.cluster.SluiceCluster;
import tools.jackson.databind.JsonNode;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Backups in one call (CONTRACT §5 row {@code backup}, issue 26): 3 broker JVMs and a gateway JVM (the qa harness),
 * 6 partitions, replication factor 3, the filesystem store on the same disk as the brokers. With exporting paused (so
 * the logs keep every record: a log holds what its exporters have not acknowledged) records are written through
 * {@code POST /v1/records} until the logs hold about each size (100 MB and 1 GB; {@code --quick}: 10 and 30 MB;
 * {@code -Dsluice.bench.backup.sizes-mb=100,300} picks others), and after each a backup is taken:
 * <ul>
 *   <li>the hold: {@code holdMillis} as the 202 answers it (how long acknowledgements were held for the cut), against
 *   one pair's pause p50 over HTTP in the same run; the 202's own latency (the whole cut) beside it;</li>
 *   <li>the upload: the backup's bytes over the time from the 202 to its {@code completedAt}, against {@code tar} of the
 *   same files (the stored backup, so the same sizes) to a file on the same disk.</li>
 * </ul>
 * Headline ratio: hold / one pair's pause at the larger size; {@code upload_over_tar_*} are the second ratio.
 */
public final class BackupBenchmark
{
    private static final int BROKERS = 3;
    private static final int PARTITIONS = 6;
    private static final int REPLICATION_FACTOR = 3;
    private static final List<String> JVM_OPTIONS = List.of("-Xms128m", "-Xmx768m", "-Xshare:auto");
    private static final int PAYLOAD_CHARS = 4000;
    private static final int BATCH = 64;
    private static final int WRITERS = 4;
    private static final String SIZES_PROPERTY = "sluice.bench.backup.sizes-mb";

    private BackupBenchmark()
    {
    }

    public static void main(final String[] args)
    {
        BenchmarkRun.runAndExit("backup", args, BackupBenchmark::measure);
    }

    private static void measure(final String[] args) throws Exception
    {
        final BenchmarkRun run = BenchmarkRun.start("backup", args);
        if (System.getProperty(SluiceCluster.JAR_PROPERTY) == null)
        {
            System.setProperty(SluiceCluster.JAR_PROPERTY, "dist/target/sluice.jar"); // bench.sh runs from the root
        }
        System.setProperty(ClassDataSharing.ENABLED_PROPERTY, "false");
        final long[] sizesMb = sizes(run);
        final int pauseRounds = run.choose("pause_rounds", 5, 20);
        run.param("brokers", BROKERS).param("partitions", PARTITIONS).param("replication_factor", REPLICATION_FACTOR)
            .param("sizes_mb", java.util.Arrays.toString(sizesMb)).param("record_payload_chars", PAYLOAD_CHARS)
            .param("store", "filesystem, same disk").param("jvm_options", String.join(" ", JVM_OPTIONS));

        final Path dir = Files.createTempDirectory("sluice-backup-bench");
        final Path store = dir.resolve("store");
        try (SluiceCluster cluster = SluiceCluster.builder(dir.resolve("cluster")).brokers(BROKERS).partitions(PARTITIONS)
            .replicationFactor(REPLICATION_FACTOR).jvmOptions(JVM_OPTIONS)
            .property("sluice.backup.filesystem.path", store.toString()).build())
        {
            cluster.start();
            cluster.awaitReady();
            cluster.awaitLeaders();
            cluster.awaitPreferredLeaders();
            final GatewayClient gateway = cluster.client();

            final double pauseP50Ms = onePairPauseP50Ms(cluster, gateway, pauseRounds);
            run.result("pause_one_pair_p50_ms", pauseP50Ms);
            run.log("one pair's pause p50 %.1f ms over %d rounds", pauseP50Ms, pauseRounds);

            // A log keeps what its exporters have not acknowledged; with exporting paused it keeps every record, so
            // the backups carry all the data written (an operator's pause is left as it is by a backup).
            succeeded(gateway.exportingControl("pause", null));
            long writtenBytes = 0;
            double lastHold = 0;
            for (int i = 0; i < sizesMb.length; i++)
            {
                final long target = sizesMb[i] * 1024 * 1024;
                final long writeStart = System.nanoTime();
                final long added = writeUntil(gateway, target - writtenBytes);
                writtenBytes += added;
                run.log("%d MB of records written (%.1f MB/s)", writtenBytes >> 20,
                    added / 1e6 / ((System.nanoTime() - writeStart) / 1e9));
                final String size = sizesMb[i] + "mb";

                final long backupId = i + 1;
                final long callStart = System.nanoTime();
                final HttpAnswer taken = gateway.management("POST", "/actuator/backups",
                    "{\"backupId\": " + backupId + "}");
                final long cutNs = System.nanoTime() - callStart;
                final long acceptedAtMillis = System.currentTimeMillis();
                if (taken.status() != 202)
                {
                    throw new IllegalStateException("backup " + backupId + " not taken: " + taken);
                }
                final long holdMillis = taken.json().path("holdMillis").asLong();
                final JsonNode completed = awaitCompleted(gateway, backupId);
                final long uploadMillis = Math.max(1,
                    Instant.parse(completed.path("completedAt").asString()).toEpochMilli() - acceptedAtMillis);
                final long bytes = completed.path("bytes").asLong();
                final double uploadMbS = bytes / 1e6 / (uploadMillis / 1e3);

                final Path tar = dir.resolve("tar-" + backupId + ".tar");
                final long tarStart = System.nanoTime();
                final Process process = new ProcessBuilder("tar", "-cf", tar.toString(), "-C", store.toString(),
                    "backups/" + backupId).redirectErrorStream(true).start();
                final String tarOutput = new String(process.getInputStream().readAllBytes());
                if (!process.waitFor(10, TimeUnit.MINUTES) || process.exitValue() != 0)
                {
                    throw new IllegalStateException("tar failed: " + tarOutput);
                }
                final double tarSeconds = (System.nanoTime() - tarStart) / 1e9;
                final double tarMbS = Files.size(tar) / 1e6 / tarSeconds;
                Files.delete(tar);

                lastHold = holdMillis;
                run.result("records_mb_" + size, writtenBytes / 1e6)
                    .result("hold_ms_" + size, holdMillis)
                    .result("hold_over_pause_" + size, holdMillis / pauseP50Ms)
                    .result("cut_202_ms_" + size, cutNs / 1e6)
                    .result("backup_mb_" + size, bytes / 1e6)
                    .result("upload_ms_" + size, uploadMillis)
                    .result("upload_mb_s_" + size, uploadMbS)
                    .result("tar_mb_s_" + size, tarMbS)
                    .result("upload_over_tar_" + size, uploadMbS / tarMbS);
                run.log("%s: hold %d ms (pause p50 %.1f ms), 202 after %.1f ms; %.1f MB uploaded in %d ms = %.1f MB/s, " +
                        "tar %.1f MB/s", size, holdMillis, pauseP50Ms, cutNs / 1e6, bytes / 1e6, uploadMillis, uploadMbS,
                    tarMbS);
            }
            run.ratio(lastHold / pauseP50Ms);
            run.log("report: %s", run.finish());
        }
        finally
        {
            SluiceCluster.deleteRecursively(dir);
        }
    }

    private static long[] sizes(final BenchmarkRun run)
    {
        final String configured = System.getProperty(SIZES_PROPERTY);
        if (configured != null)
        {
            return java.util.Arrays.stream(configured.split(",")).map(String::strip).mapToLong(Long::parseLong).toArray();
        }
        return run.quick() ? new long[] {10, 30} : new long[] {100, 1024};
    }

    /** p50 of pausing one pair over HTTP (after warm-up rounds), each followed by its resume. */
    private static double onePairPauseP50Ms(final SluiceCluster cluster, final GatewayClient gateway, final int rounds)
    {
        final List<PartitionReplica> pairs = new ArrayList<>(cluster.allPairs());
        final long[] samples = new long[rounds];
        for (int i = -5; i < rounds; i++)
        {
            final PartitionReplica pair = pairs.get(Math.floorMod(i, pairs.size()));
            final long pause = succeeded(gateway.exportingControl("pause", List.of(pair)));
            succeeded(gateway.exportingControl("resume", List.of(pair)));
            if (i >= 0)
            {
                samples[i] = pause;
            }
        }
        return Stats.percentile(samples, 50) / 1e6;
    }

    private static long succeeded(final ExportingControlAnswer answer)
    {
        if (answer.status() != 200 || !"SUCCEEDED".equals(answer.result()))
        {
            throw new IllegalStateException("exporting call failed: " + answer);
        }
        return answer.http().elapsed().toNanos();
    }

    /** Writes batches from a few threads until about {@code bytes} of payload are acknowledged; returns how many. */
    private static long writeUntil(final GatewayClient gateway, final long bytes) throws Exception
    {
        final String pad = "x".repeat(PAYLOAD_CHARS);
        final AtomicLong written = new AtomicLong();
        final AtomicLong sequence = new AtomicLong();
        final ExecutorService writers = Executors.newFixedThreadPool(WRITERS);
        try
        {
            final List<Future<?>> running = new ArrayList<>();
            for (int w = 0; w < WRITERS; w++)
            {
                running.add(writers.submit(() ->
                {
                    while (written.get() < bytes)
                    {
                        final List<RecordToWrite> batch = new ArrayList<>(BATCH);
                        long batchBytes = 0;
                        for (int i = 0; i < BATCH; i++)
                        {
                            final long n = sequence.incrementAndGet();
                            final RecordToWrite record = new RecordToWrite("k-" + n, "{\"n\":" + n + ",\"pad\":\"" +
                                pad + "\"}");
                            batch.add(record);
                            batchBytes += record.payloadJson().length() + record.key().length();
                        }
                        gateway.writeBatch(batch);
                        written.addAndGet(batchBytes);
                    }
                    return null;
                }));
            }
            for (final Future<?> writer : running)
            {
                writer.get();
            }
        }
        finally
        {
            writers.shutdownNow();
        }
        return written.get();
    }

    private static JsonNode awaitCompleted(final GatewayClient gateway, final long backupId) throws Exception
    {
        final long deadline = System.nanoTime() + TimeUnit.MINUTES.toNanos(30);
        while (System.nanoTime() < deadline)
        {
            final HttpAnswer answer = gateway.get("/actuator/backups/" + backupId);
            final String state = answer.status() == 200 ? answer.json().path("state").asString() : "";
            if ("COMPLETED".equals(state))
            {
                return answer.json();
            }
            if ("FAILED".equals(state) || "INCOMPLETE".equals(state))
            {
                throw new IllegalStateException("backup " + backupId + " " + state + ": " + answer.body());
            }
            Thread.sleep(100);
        }
        throw new IllegalStateException("backup " + backupId + " not completed within 30 minutes");
    }
}
