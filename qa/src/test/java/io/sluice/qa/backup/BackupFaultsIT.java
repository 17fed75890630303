package io.sluice.qa.backup;

import io.sluice.qa.Exporting;
import io.sluice.qa.LongRunning;
import io.sluice.qa.Records;
import io.sluice.qa.cluster.Await;
import io.sluice.qa.cluster.HttpAnswer;
import io.sluice.qa.cluster.QaRun;
import io.sluice.qa.cluster.RecordToWrite;
import io.sluice.qa.cluster.SluiceCluster;
import io.sluice.qa.cluster.SluiceProcess;
import io.sluice.qa.cluster.WrittenRecord;
import io.sluice.testing.LoopbackPorts;
import org.jclouds.blobstore.domain.Blob;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import tools.jackson.databind.JsonNode;

import java.io.InputStream;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Pattern;
import java.util.stream.IntStream;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Issue 26's fault must-shows, in separate JVMs against a real S3-compatible server (S3Proxy on loopback, behind a
 * slow link so an upload takes seconds and can be faulted mid-way): a broker SIGKILLed during its upload, and the S3
 * server stopped during the upload, each end the backup FAILED with the reason within seconds (the upload timeout is
 * 30 minutes) while exports flow; a corrupted and a deleted object are named by verify, and {@code sluice.jar restore}
 * refuses that backup, another layout and a data directory that is not empty, with one line, a non-zero exit and
 * nothing written. One cluster serves the three, in order.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
@Timeout(value = 6, unit = TimeUnit.MINUTES)
@LongRunning(seconds = 55)
class BackupFaultsIT
{
    private static final int PARTITIONS = 3;
    private static final String BUCKET = "sluice-backups";
    /** The link to the store: about 3 MB of partitions take ~12 s to upload over it. */
    private static final long SLOW_BYTES_PER_SECOND = 256 * 1024;
    private static final long UNDER_WAY_BYTES = 128 * 1024;
    private static final String PAD = "x".repeat(1000);

    @RegisterExtension
    static final QaRun RUN = new QaRun();

    private static final Pattern UPLOAD_OF_BACKUP_2_FAILED =
        Pattern.compile("backup 2 of partition \\d+ failed");

    private S3Server s3;
    private SlowLink link;
    private SluiceCluster cluster;

    @BeforeAll
    void startAClusterBackingUpToS3() throws Exception
    {
        s3 = new S3Server(LoopbackPorts.freePort());
        s3.start();
        s3.blobs().createContainerInLocation(null, BUCKET);
        link = new SlowLink(new InetSocketAddress("127.0.0.1", s3.port()), 0);
        cluster = RUN.cluster("faults", builder ->
        {
            builder.brokers(3).partitions(PARTITIONS).replicationFactor(3)
                // Ended by the faults themselves, never by this timeout.
                .property("sluice.backup.upload-timeout", "30m");
            storeSettings(link.port()).forEach((name, value) -> builder.property(name, value));
        });
        cluster.start();
        cluster.awaitReady();
        cluster.awaitLeaders();
        // About 1 MB a partition that the logs keep, so each upload has something to carry: a log holds what its
        // exporters have not acknowledged yet, and an operator's pause keeps all of it.
        Exporting.until200("pause before the bulk", () -> cluster.client().pause());
        Records.writeInBatches(cluster, 3000, 50,
            i -> new RecordToWrite("bulk-" + i, "{\"pad\":\"" + PAD + "\",\"i\":" + i + "}"));
    }

    @AfterAll
    void stopTheStore() throws Exception
    {
        if (link != null)
        {
            link.close();
        }
        if (s3 != null)
        {
            s3.close();
        }
    }

    @Test
    @Order(1)
    void aBrokerKilledDuringItsUploadFailsTheBackupNamingItWithinSecondsNotAtTheUploadTimeout()
    {
        link.rate(SLOW_BYTES_PER_SECOND);
        final long before = link.sent();
        final HttpAnswer taken = cluster.client().management("POST", "/actuator/backups", "{\"backupId\": 1}");
        assertThat(taken.status()).as(taken.toString()).isEqualTo(202);
        final JsonNode partition = partition(backup(1), 1);
        final int victim = partition.path("brokerId").asInt();
        Await.until("the uploads under way", SluiceCluster.scaled(Duration.ofSeconds(30)),
            () -> link.sent() > before + UNDER_WAY_BYTES);
        assertThat(partition(backup(1), 1).path("state").asString()).as("partition 1 not uploaded yet")
            .isEqualTo("IN_PROGRESS");

        cluster.killBroker(victim);
        final long killed = System.nanoTime();
        final JsonNode ended = awaitEnded(1);

        assertThat(ended.path("state").asString()).as(ended.toString()).isEqualTo("FAILED");
        assertThat(ended.path("failureReason").asString())
            .contains("partition 1 on broker " + victim + ": the broker went down during the upload");
        assertThat(partition(ended, 1).path("state").asString()).isEqualTo("FAILED");
        cluster.log("backup 1 FAILED " + Duration.ofNanos(System.nanoTime() - killed).toMillis() +
            " ms after broker " + victim + " was killed");

        // A backup holds acknowledgements on every pair, as a pause does: the next one needs the broker back in the
        // gateway's view, not only running.
        cluster.startBroker(victim);
        Exporting.everyBrokerUp(cluster);
        assertThat(backup(1).path("state").asString()).as("the restarted broker does not revive it").isEqualTo("FAILED");

        // The other brokers' uploads of backup 1 stop at their next object: let the one in flight end at full speed,
        // or it would still hold their upload thread (and take the next case's store outage) when backup 2 starts.
        link.rate(0);
        for (final JsonNode other : ended.path("partitions"))
        {
            final int broker = other.path("brokerId").asInt();
            if (broker != victim)
            {
                final Pattern ended1 = Pattern.compile("backup 1 of partition " + other.path("partitionId").asInt() +
                    " (stored|dropped|failed)");
                Await.until("broker " + broker + "'s upload of backup 1 ended", SluiceCluster.scaled(Duration.ofSeconds(60)),
                    () -> ended1.matcher(cluster.broker(broker).logOfLatestRun()).find());
            }
        }
    }

    @Test
    @Order(2)
    void theStoreStoppedMidUploadFailsTheBackupWithTheReasonWhileExportsFlow() throws Exception
    {
        link.rate(SLOW_BYTES_PER_SECOND);
        final long before = link.sent();
        final HttpAnswer taken = cluster.client().management("POST", "/actuator/backups", "{\"backupId\": 2}");
        assertThat(taken.status()).as(taken.toString()).isEqualTo(202);
        // The upload goes on from the captured files while exports resume and compact the logs.
        Exporting.resumeAndAwaitExporting(cluster);
        Await.until("the uploads under way", SluiceCluster.scaled(Duration.ofSeconds(30)),
            () -> link.sent() > before + UNDER_WAY_BYTES);
        assertThat(backup(2).path("state").asString()).isEqualTo("IN_PROGRESS");

        s3.stop();
        cluster.log("S3 server stopped during backup 2's upload");
        final List<WrittenRecord> meanwhile = Records.write(cluster, "store-down", 30);
        Records.awaitExported(cluster, meanwhile);
        final HttpAnswer whileDown = cluster.client().get("/actuator/backups/2");
        assertThat(whileDown.status()).as(whileDown.toString()).isEqualTo(503);
        assertThat(whileDown.body()).contains("s3 store");

        // The store's client retries a refused request for a while: an outage shorter than that is ridden out (the
        // backup then completes). Down until an upload gave up, this one must fail the backup.
        Await.until("an upload of backup 2 failed", SluiceCluster.scaled(Duration.ofSeconds(60)), () ->
            IntStream.range(0, cluster.brokerCount()).anyMatch(id ->
                UPLOAD_OF_BACKUP_2_FAILED.matcher(cluster.broker(id).logOfLatestRun()).find()));
        s3.start();
        cluster.log("S3 server started again");
        final JsonNode ended = awaitEnded(2);
        assertThat(ended.path("state").asString()).as(ended.toString()).isEqualTo("FAILED");
        assertThat(ended.path("failureReason").asString()).contains("upload to the s3 store");
        final List<WrittenRecord> after = Records.write(cluster, "store-back", 30);
        Records.awaitExported(cluster, after);
    }

    @Test
    @Order(3)
    void aCorruptedAndADeletedObjectAreNamedByVerifyAndRestoreRefusesThemAndBadTargetsWritingNothing()
        throws Exception
    {
        link.rate(0);
        final HttpAnswer taken = cluster.client().management("POST", "/actuator/backups", "{\"backupId\": 3}");
        assertThat(taken.status()).as(taken.toString()).isEqualTo(202);
        assertThat(awaitEnded(3).path("state").asString()).isEqualTo("COMPLETED");
        assertThat(cluster.client().management("POST", "/actuator/backups/3/verify", null).json()
            .path("ok").asBoolean()).isTrue();

        // Bad targets, on a backup that verifies.
        final Path target = RUN.directory().resolve("restore-target");
        final SluiceProcess otherLayout = restore("restore-other-layout", target, PARTITIONS + 1, "--all-brokers");
        assertRefusedInOneLine(otherLayout, "was taken of a cluster of 3 brokers, 3 partitions");
        assertThat(target).doesNotExist();
        final List<String> live = names(cluster.dataDirectory());
        final List<String> liveBroker = names(cluster.brokerDataDirectory(0));
        final SluiceProcess notEmpty = restore("restore-not-empty", cluster.dataDirectory(), PARTITIONS,
            "--node-id", "0");
        assertRefusedInOneLine(notEmpty, "is not empty");
        assertThat(names(cluster.dataDirectory())).isEqualTo(live);
        assertThat(names(cluster.brokerDataDirectory(0))).isEqualTo(liveBroker);

        // Bit rot in one object, another gone.
        final String corrupted = "backups/3/partition-1/state";
        final String deleted = "backups/3/partition-2/state";
        final Blob blob = s3.blobs().getBlob(BUCKET, corrupted);
        final byte[] bytes;
        try (InputStream in = blob.getPayload().openStream())
        {
            bytes = in.readAllBytes();
        }
        bytes[bytes.length / 2] ^= 0x5A;
        s3.blobs().putBlob(BUCKET, s3.blobs().blobBuilder(corrupted).payload(bytes).build());
        s3.blobs().removeBlob(BUCKET, deleted);

        final JsonNode verified = cluster.client().management("POST", "/actuator/backups/3/verify", null).json();
        assertThat(verified.path("ok").asBoolean()).as(verified.toString()).isFalse();
        final List<String> problems = new ArrayList<>();
        for (final JsonNode problem : verified.path("problems"))
        {
            problems.add(problem.path("object").asString() + ": " + problem.path("problem").asString());
        }
        assertThat(problems).as(verified.toString()).hasSize(2)
            .anyMatch((p) -> p.startsWith(corrupted + ": SHA-256 "))
            .anyMatch((p) -> p.equals(deleted + ": missing"));

        final SluiceProcess refused = restore("restore-not-verifying", target, PARTITIONS, "--all-brokers");
        assertRefusedInOneLine(refused, "backup 3 does not verify: ");
        assertThat(target).doesNotExist();
    }

    private JsonNode backup(final long id)
    {
        final HttpAnswer answer = cluster.client().get("/actuator/backups/" + id);
        assertThat(answer.status()).as(answer.toString()).isEqualTo(200);
        return answer.json();
    }

    private static JsonNode partition(final JsonNode backup, final int partitionId)
    {
        for (final JsonNode partition : backup.path("partitions"))
        {
            if (partition.path("partitionId").asInt() == partitionId)
            {
                return partition;
            }
        }
        throw new AssertionError("no partition " + partitionId + " in " + backup);
    }

    /** Bounded well below the 30-minute upload timeout: the backup must end by what happened, not by that. */
    private JsonNode awaitEnded(final long id)
    {
        return Await.value("backup " + id + " no longer IN_PROGRESS", SluiceCluster.scaled(Duration.ofSeconds(90)), () ->
        {
            final HttpAnswer answer = cluster.client().get("/actuator/backups/" + id);
            return answer.status() == 200 && !"IN_PROGRESS".equals(answer.json().path("state").asString()) ?
                Optional.of(answer.json()) : Optional.empty();
        });
    }

    private static java.util.Map<String, String> storeSettings(final int port)
    {
        final java.util.Map<String, String> settings = new java.util.LinkedHashMap<>();
        settings.put("sluice.backup.store", "s3");
        settings.put("sluice.backup.s3.bucket", BUCKET);
        settings.put("sluice.backup.s3.endpoint", "http://127.0.0.1:" + port);
        settings.put("sluice.backup.s3.region", "us-east-1");
        settings.put("sluice.backup.s3.access-key", S3Server.IDENTITY);
        settings.put("sluice.backup.s3.secret-key", S3Server.CREDENTIAL);
        settings.put("sluice.backup.s3.path-style-access", "true");
        return settings;
    }

    private SluiceProcess restore(final String name, final Path dataDir, final int partitions, final String... target)
    {
        final List<String> args = new ArrayList<>(List.of("--backup-id", "3"));
        args.addAll(List.of(target));
        args.addAll(List.of(
            "--sluice.cluster.brokers=" + cluster.brokerList(),
            "--sluice.cluster.partitions=" + partitions,
            "--sluice.cluster.replication-factor=3",
            "--sluice.data-dir=" + dataDir));
        storeSettings(s3.port()).forEach((setting, value) -> args.add("--" + setting + "=" + value));
        final SluiceProcess process = RUN.process(name, "restore", args, RUN.directory());
        process.start();
        assertThat(process.awaitExit(SluiceCluster.scaled(Duration.ofSeconds(60)))).as(name + " exits").isTrue();
        return process;
    }

    /** Exit code non-zero and one line of output (after the harness's start line) saying why. */
    private static void assertRefusedInOneLine(final SluiceProcess process, final String why)
    {
        final String log = process.logOfLatestRun();
        final List<String> printed = log.lines().skip(1).filter((line) -> !line.isBlank()).toList();
        assertThat(process.exitCode()).as(log).isPresent().get().isNotEqualTo(0);
        assertThat(printed).as(log).hasSize(1);
        assertThat(printed.get(0)).startsWith("restore: refused, nothing written: ").contains(why);
    }

    private static List<String> names(final Path directory) throws Exception
    {
        try (Stream<Path> files = Files.list(directory))
        {
            return files.map((f) -> f.getFileName().toString()).sorted().toList();
        }
    }
}
