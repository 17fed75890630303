package io.sluice.qa.backup;

import io.sluice.qa.cluster.Await;
import io.sluice.qa.cluster.ExportedRecord;
import io.sluice.qa.cluster.HttpAnswer;
import io.sluice.qa.cluster.QaRun;
import io.sluice.qa.cluster.SluiceCluster;
import io.sluice.qa.cluster.SluiceProcess;
import io.sluice.qa.cluster.WriteLoad;
import io.sluice.qa.cluster.WrittenRecord;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import tools.jackson.databind.JsonNode;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Issue 26, separate JVMs: under steady writes one call takes a backup that completes; the cluster is then wiped and
 * restored with {@code sluice.jar restore --all-brokers}: after a restart every record acknowledged before the backup
 * was asked for is in the restored log (exported again from it above the file exporter's backed-up position), and no
 * record written after the 202. A restore into a data directory that is not empty is refused with one line.
 */
@Timeout(value = 8, unit = TimeUnit.MINUTES)
class BackupRestoreIT
{
    private static final int PARTITIONS = 3;

    @RegisterExtension
    static final QaRun RUN = new QaRun();

    @Test
    void aBackupTakenUnderWritesRestoresEveryRecordAcknowledgedBeforeItAndNoneWrittenAfterIt() throws Exception
    {
        final Path store = RUN.directory().resolve("backups");
        final SluiceCluster cluster = RUN.cluster("backup", builder -> builder
            .brokers(3).partitions(PARTITIONS).replicationFactor(3)
            .property("sluice.backup.filesystem.path", store.toString()));
        cluster.start();
        cluster.awaitReady();
        cluster.awaitLeaders();

        final List<WrittenRecord> before;
        final HttpAnswer taken;
        try (WriteLoad load = new WriteLoad(cluster, "before", 2, 10, Duration.ofMillis(10), Duration.ofMinutes(2)))
        {
            Await.until("some records acknowledged", SluiceCluster.scaled(Duration.ofSeconds(30)),
                () -> load.acknowledged().size() >= 500);
            before = List.copyOf(load.acknowledged());
            taken = cluster.client().management("POST", "/actuator/backups", "{\"backupId\": 42}");
            load.stop();
        }
        assertThat(taken.status()).as(taken.toString()).isEqualTo(202);
        assertThat(taken.json().path("state").asString()).isEqualTo("IN_PROGRESS");
        final List<WrittenRecord> after = new ArrayList<>();
        for (int i = 0; i < 30; i++)
        {
            after.add(cluster.client().write("after-" + i, "{\"after\":" + i + "}"));
        }

        final JsonNode backup = Await.value("backup 42 completed", SluiceCluster.scaled(Duration.ofSeconds(60)), () ->
        {
            final JsonNode view = cluster.client().get("/actuator/backups/42").json();
            return "COMPLETED".equals(view.path("state").asString()) ? java.util.Optional.of(view) :
                java.util.Optional.empty();
        });
        final Map<Integer, Long> checkpoints = new HashMap<>();
        final Map<Integer, Long> exported = new HashMap<>();
        for (final JsonNode partition : backup.path("partitions"))
        {
            checkpoints.put(partition.path("partitionId").asInt(), partition.path("checkpointPosition").asLong());
            final JsonNode file = partition.path("exporterPositions").path("file");
            exported.put(partition.path("partitionId").asInt(), file.isMissingNode() ? 0 : file.asLong());
        }
        assertThat(checkpoints).hasSize(PARTITIONS);
        final JsonNode verified = cluster.client().management("POST", "/actuator/backups/42/verify", null).json();
        assertThat(verified.path("ok").asBoolean()).as(verified.toString()).isTrue();
        for (final WrittenRecord record : before)
        {
            assertThat(record.position()).as("%s acknowledged before the backup is at or below its checkpoint", record)
                .isLessThanOrEqualTo(checkpoints.get(record.partitionId()));
        }
        for (final WrittenRecord record : after)
        {
            assertThat(record.position()).as("%s written after the 202 is above the checkpoint", record)
                .isGreaterThan(checkpoints.get(record.partitionId()));
        }

        // Wipe the brokers' data and the exports, restore every broker from the store, start again.
        for (int b = 0; b < 3; b++)
        {
            cluster.killBroker(b);
        }
        SluiceCluster.deleteRecursively(cluster.dataDirectory());
        Files.createDirectories(cluster.dataDirectory());
        final SluiceProcess restore = restore(cluster, store, "restore", "--all-brokers");
        assertThat(restore.exitCode()).as(restore.log()).contains(0);
        final SluiceProcess again = restore(cluster, store, "restore-again", "--node-id", "1");
        assertThat(again.exitCode()).as(again.log()).isNotEqualTo(java.util.Optional.of(0));
        assertThat(again.log()).contains("is not empty");
        for (int b = 0; b < 3; b++)
        {
            cluster.startBroker(b);
        }
        cluster.awaitReady();
        cluster.awaitLeaders();
        cluster.readWholeExports();

        final Map<Integer, Map<Long, String>> acknowledgedKeys = new HashMap<>();
        for (final WrittenRecord record : before)
        {
            acknowledgedKeys.computeIfAbsent(record.partitionId(), (p) -> new HashMap<>())
                .put(record.position(), record.key());
        }
        for (int p = 1; p <= PARTITIONS; p++)
        {
            final int partition = p;
            final long from = exported.get(p) + 1;
            final long to = checkpoints.get(p);
            Await.until("partition " + p + " exported again from the restored log up to its checkpoint",
                SluiceCluster.scaled(Duration.ofSeconds(90)), () -> cluster.exportedRecords(partition).stream()
                    .anyMatch((r) -> r.position() == to) || from > to);
            final Map<Long, String> restored = new HashMap<>();
            for (final ExportedRecord record : cluster.exportedRecords(p))
            {
                restored.put(record.position(), record.key());
            }
            assertThat(restored.keySet()).as("partition %d: nothing above its checkpoint, nothing at or below the " +
                "exporter's backed-up position", p).allMatch((position) -> position >= from && position <= to);
            for (final Map.Entry<Long, String> ack : acknowledgedKeys.getOrDefault(p, Map.of()).entrySet())
            {
                if (ack.getKey() >= from)
                {
                    assertThat(restored.get(ack.getKey())).as("partition %d position %d", p, ack.getKey())
                        .isEqualTo(ack.getValue());
                }
            }
        }
        // Writes go on after the restored records.
        final WrittenRecord next = cluster.client().write("restored-next", "{}");
        assertThat(next.position()).isGreaterThan(checkpoints.get(next.partitionId()));
    }

    private static SluiceProcess restore(
        final SluiceCluster cluster, final Path store, final String name, final String... target)
    {
        final List<String> args = new ArrayList<>(List.of("--backup-id", "42"));
        args.addAll(List.of(target));
        args.addAll(List.of(
            "--sluice.cluster.brokers=" + cluster.brokerList(),
            "--sluice.cluster.partitions=" + cluster.partitionCount(),
            "--sluice.cluster.replication-factor=" + cluster.replicasOf(1).size(),
            "--sluice.data-dir=" + cluster.dataDirectory(),
            "--sluice.backup.filesystem.path=" + store));
        final SluiceProcess process = RUN.process(name, "restore", args, RUN.directory());
        process.start();
        assertThat(process.awaitExit(SluiceCluster.scaled(Duration.ofSeconds(60)))).as(name + " exits").isTrue();
        return process;
    }
}
