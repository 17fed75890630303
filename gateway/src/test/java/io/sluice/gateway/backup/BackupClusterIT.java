package io.sluice.gateway.backup;

import io.sluice.broker.Broker;
import io.sluice.broker.BrokerConfig;
import io.sluice.broker.exporter.ExporterConfig;
import io.sluice.gateway.GatewayApplication;
import io.sluice.gateway.LoopbackBrokers;
import io.sluice.protocol.backup.BackupRestore;
import io.sluice.protocol.backup.FilesystemBackupStore;
import io.sluice.protocol.cluster.PartitionDistribution;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

/**
 * Backups over HTTP against three real brokers in this JVM, with the filesystem store: one call takes a backup
 * that completes, verifies, names a corrupted object, and restores into empty data directories from which a new
 * cluster starts with every record acknowledged before the backup and none written after its 202.
 */
@Timeout(value = 5, unit = TimeUnit.MINUTES)
class BackupClusterIT
{
    private static final int PARTITIONS = 3;
    private static final JsonMapper JSON = JsonMapper.builder().build();
    private static final HttpClient HTTP = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
    private static final Pattern POSITION = Pattern.compile("\"position\":(\\d+)");

    @TempDir
    Path temp;

    private final List<Broker> brokers = new ArrayList<>();
    private ConfigurableApplicationContext gateway;
    private String api;
    private String management;

    @AfterEach
    void stop()
    {
        stopCluster();
    }

    @Test
    void oneCallTakesABackupThatCompletesVerifiesAndRestoresEveryRecordAcknowledgedBeforeIt() throws Exception
    {
        final Path dataDir = temp.resolve("data");
        final Path backups = temp.resolve("backups");
        startCluster(dataDir, backups);

        final Map<Integer, Long> before = write(0, 40);
        final HttpResponse<String> taken = send(post(management + "/actuator/backups", "{\"backupId\": 7}"));
        assertThat(taken.statusCode()).as(taken.body()).isEqualTo(202);
        final JsonNode accepted = JSON.readTree(taken.body());
        assertThat(accepted.get("backupId").asLong()).isEqualTo(7L);
        assertThat(accepted.get("state").asText()).isEqualTo("IN_PROGRESS");
        assertThat(accepted.has("holdMillis")).isTrue();
        final Map<Integer, Long> after = write(40, 20);

        await("backup 7 completed").atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(200))
            .until(() -> "COMPLETED".equals(JSON.readTree(send(get(management + "/actuator/backups/7")).body())
                .path("state").asText()));
        final JsonNode backup = JSON.readTree(send(get(management + "/actuator/backups/7")).body());
        assertThat(backup.get("completedAt").asText()).isNotEmpty();
        assertThat(backup.get("bytes").asLong()).isPositive();
        final Map<Integer, Long> checkpoints = new HashMap<>();
        for (final JsonNode partition : backup.get("partitions"))
        {
            final int p = partition.get("partitionId").asInt();
            final long checkpoint = partition.get("checkpointPosition").asLong();
            checkpoints.put(p, checkpoint);
            assertThat(partition.get("state").asText()).isEqualTo("COMPLETED");
            assertThat(checkpoint).as("partition %d holds everything acknowledged before the backup", p)
                .isGreaterThanOrEqualTo(before.getOrDefault(p, 0L));
            assertThat(checkpoint).as("partition %d holds nothing written after the 202", p)
                .isLessThan(firstOf(after, p, before));
            assertThat(filePosition(partition)).isLessThanOrEqualTo(checkpoint);
        }
        assertThat(checkpoints).hasSize(PARTITIONS);

        final JsonNode verified = JSON.readTree(send(post(management + "/actuator/backups/7/verify", "")).body());
        assertThat(verified.get("ok").asBoolean()).as(verified.toString()).isTrue();
        assertThat(verified.get("checkedObjects").asInt()).isGreaterThan(PARTITIONS);

        // Bad input changes nothing.
        assertThat(send(post(management + "/actuator/backups", "{\"backupId\": 7}")).statusCode()).isEqualTo(409);
        assertThat(send(post(management + "/actuator/backups", "{\"backupId\": 3}")).statusCode()).isEqualTo(409);
        assertThat(send(post(management + "/actuator/backups", "{\"backupId\": \"x\"}")).statusCode()).isEqualTo(400);
        assertThat(send(post(management + "/actuator/backups", "{\"id\": 9}")).statusCode()).isEqualTo(400);
        assertThat(send(get(management + "/actuator/backups/abc")).statusCode()).isEqualTo(400);
        assertThat(send(get(management + "/actuator/backups/8")).statusCode()).isEqualTo(404);
        final JsonNode list = JSON.readTree(send(get(management + "/actuator/backups")).body());
        assertThat(list.get("backups")).hasSize(1);

        // The old exports: the sink as it was. The cluster stops, and a new one starts from the backup.
        final Map<Integer, Set<Long>> exportedBefore = new HashMap<>();
        for (int p = 1; p <= PARTITIONS; p++)
        {
            exportedBefore.put(p, exportedPositions(dataDir, p));
        }
        stopCluster();
        final Path restored = temp.resolve("restored");
        final PartitionDistribution distribution = PartitionDistribution.of(LoopbackBrokers.brokerList(3), PARTITIONS, 3);
        final FilesystemBackupStore store = new FilesystemBackupStore(backups);
        BackupRestore.restore(store, 7, distribution, restored, List.of(0, 1, 2));
        assertThatThrownBy(() -> BackupRestore.restore(store, 7, distribution, restored, List.of(0)))
            .hasMessageContaining("not empty");
        startCluster(restored, backups);
        for (int p = 1; p <= PARTITIONS; p++)
        {
            final int partition = p;
            final long checkpoint = checkpoints.get(p);
            final long exporterPosition = filePosition(backup.get("partitions").get(p - 1));
            await("partition " + p + " exported again up to its checkpoint").atMost(Duration.ofSeconds(60))
                .pollInterval(Duration.ofMillis(250))
                .until(() -> exportedPositions(restored, partition).containsAll(range(exporterPosition + 1, checkpoint)));
            final Set<Long> union = new HashSet<>(exportedBefore.get(p));
            union.addAll(exportedPositions(restored, p));
            assertThat(union).as("partition %d: every record up to its checkpoint is in the sink", p)
                .containsAll(range(1, checkpoint));
            assertThat(exportedPositions(restored, p)).as("partition %d: nothing above its checkpoint", p)
                .allMatch((position) -> position > exporterPosition && position <= checkpoint);
        }
        // The restored cluster takes writes after the restored records.
        final Map<Integer, Long> more = write(100, 10);
        for (final Map.Entry<Integer, Long> written : more.entrySet())
        {
            assertThat(written.getValue()).isGreaterThan(checkpoints.get(written.getKey()));
        }
    }

    @Test
    void verifyNamesACorruptedObjectAndTheRestoreRefusesItWritingNothing() throws Exception
    {
        final Path dataDir = temp.resolve("data");
        final Path backups = temp.resolve("backups");
        startCluster(dataDir, backups);
        write(0, 20);
        final HttpResponse<String> taken = send(post(management + "/actuator/backups", ""));
        assertThat(taken.statusCode()).as(taken.body()).isEqualTo(202);
        final long id = JSON.readTree(taken.body()).get("backupId").asLong();
        await("backup completed").atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(200))
            .until(() -> "COMPLETED".equals(JSON.readTree(send(get(management + "/actuator/backups/" + id)).body())
                .path("state").asText()));

        final Path state;
        try (Stream<Path> files = Files.walk(backups))
        {
            state = files.filter((f) -> f.getFileName().toString().equals("state")).findFirst().orElseThrow();
        }
        final byte[] bytes = Files.readAllBytes(state);
        bytes[bytes.length / 2] ^= 0x5A;
        Files.write(state, bytes);
        final String object = backups.relativize(state).toString();

        final JsonNode verified = JSON.readTree(send(post(management + "/actuator/backups/" + id + "/verify", "")).body());
        assertThat(verified.get("ok").asBoolean()).isFalse();
        assertThat(verified.get("problems").get(0).get("object").asText()).isEqualTo(object);
        assertThat(verified.get("problems").get(0).get("problem").asText()).contains("SHA-256");

        final Path restored = temp.resolve("restored");
        final PartitionDistribution distribution = PartitionDistribution.of(LoopbackBrokers.brokerList(3), PARTITIONS, 3);
        assertThatThrownBy(() -> BackupRestore.restore(new FilesystemBackupStore(backups), id, distribution, restored,
            List.of(0, 1, 2))).hasMessageContaining("does not verify").hasMessageContaining(object);
        assertThat(restored).doesNotExist();
        final PartitionDistribution other = PartitionDistribution.of(LoopbackBrokers.brokerList(3), PARTITIONS + 1, 3);
        Files.write(state, flip(bytes));
        assertThatThrownBy(() -> BackupRestore.restore(new FilesystemBackupStore(backups), id, other, restored,
            List.of(0, 1, 2))).hasMessageContaining("was taken of a cluster of 3 brokers, 3 partitions");
        assertThat(restored).doesNotExist();

        assertThat(send(delete(management + "/actuator/backups/" + id)).statusCode()).isEqualTo(204);
        assertThat(send(get(management + "/actuator/backups/" + id)).statusCode()).isEqualTo(404);
    }

    private static long filePosition(final JsonNode partition)
    {
        final JsonNode position = partition.path("exporterPositions").path("file");
        return position.isMissingNode() ? 0 : position.asLong();
    }

    @Test
    void aBackupWhoseUploadsFailOrNeverArriveEndsFailedWithTheReasonInsteadOfStayingInProgress() throws Exception
    {
        final Path backups = temp.resolve("backups");
        // Broker 0's store is a file where its directory should be: every put fails. Brokers 1 and 2 upload to
        // another store than the gateway reads, as a misconfigured or lost store would: their reports never arrive.
        final Path notADirectory = temp.resolve("not-a-directory");
        Files.writeString(notADirectory, "x");
        startCluster(temp.resolve("data"), backups, List.of(notADirectory, temp.resolve("elsewhere"),
            temp.resolve("elsewhere")), "--sluice.backup.upload-timeout=5s");
        write(0, 10);
        final HttpResponse<String> taken = send(post(management + "/actuator/backups", "{\"backupId\": 1}"));
        assertThat(taken.statusCode()).as(taken.body()).isEqualTo(202);
        await("backup 1 ended").atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(200))
            .until(() -> !"IN_PROGRESS".equals(JSON.readTree(send(get(management + "/actuator/backups/1")).body())
                .path("state").asText()));
        final JsonNode backup = JSON.readTree(send(get(management + "/actuator/backups/1")).body());
        assertThat(backup.get("state").asText()).isEqualTo("FAILED");
        assertThat(backup.get("failureReason").asText()).containsAnyOf("not uploaded within", "upload to the");
        final JsonNode verified = JSON.readTree(send(post(management + "/actuator/backups/1/verify", "")).body());
        assertThat(verified.get("ok").asBoolean()).isFalse();
        assertThat(send(delete(management + "/actuator/backups/1")).statusCode()).isEqualTo(204);
    }

    private static byte[] flip(final byte[] bytes)
    {
        bytes[bytes.length / 2] ^= 0x5A;
        return bytes;
    }

    private static long firstOf(final Map<Integer, Long> after, final int p, final Map<Integer, Long> before)
    {
        // The first record written after the 202 on p: the last one minus those written there, or beyond anything.
        return after.containsKey(p) ? before.getOrDefault(p, 0L) + 1 : Long.MAX_VALUE;
    }

    private static Set<Long> range(final long from, final long to)
    {
        final Set<Long> positions = new HashSet<>();
        for (long p = from; p <= to; p++)
        {
            positions.add(p);
        }
        return positions;
    }

    private Map<Integer, Long> write(final int from, final int count) throws Exception
    {
        final Map<Integer, Long> last = new HashMap<>();
        for (int i = from; i < from + count; i++)
        {
            final HttpResponse<String> written = send(HttpRequest.newBuilder(URI.create(api + "/v1/records"))
                .header("content-type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString("{\"key\": \"k-" + i + "\", \"payload\": {\"n\": " + i + "}}"))
                .build());
            assertThat(written.statusCode()).as(written.body()).isEqualTo(200);
            final JsonNode answer = JSON.readTree(written.body());
            last.merge(answer.get("partitionId").asInt(), answer.get("position").asLong(), Math::max);
        }
        return last;
    }

    private static Set<Long> exportedPositions(final Path dataDir, final int partitionId) throws IOException
    {
        final Path file = dataDir.resolve("exports").resolve("file").resolve("partition-" + partitionId + ".jsonl");
        final Set<Long> positions = new HashSet<>();
        if (Files.exists(file))
        {
            for (final String line : Files.readAllLines(file))
            {
                final Matcher m = POSITION.matcher(line);
                if (m.find())
                {
                    positions.add(Long.parseLong(m.group(1)));
                }
            }
        }
        return positions;
    }

    private void startCluster(final Path dataDir, final Path backups) throws Exception
    {
        startCluster(dataDir, backups, List.of(backups, backups, backups), "--sluice.backup.upload-timeout=30m");
    }

    private void startCluster(final Path dataDir, final Path backups, final List<Path> brokerStores,
        final String uploadTimeout) throws Exception
    {
        final String cluster = LoopbackBrokers.brokerList(3);
        final PartitionDistribution distribution = PartitionDistribution.of(cluster, PARTITIONS, 3);
        gateway = new SpringApplicationBuilder(GatewayApplication.class).run(
            "--server.port=0",
            "--management.server.port=0",
            "--management.server.address=127.0.0.1",
            "--sluice.cluster.brokers=" + cluster,
            "--sluice.cluster.partitions=" + PARTITIONS,
            "--sluice.backup.filesystem.path=" + backups,
            uploadTimeout,
            "--sluice.gateway.request-timeout=20s");
        api = "http://127.0.0.1:" + gateway.getEnvironment().getProperty("local.server.port");
        management = "http://127.0.0.1:" + gateway.getEnvironment().getProperty("local.management.port");
        final Map<String, ExporterConfig> exporters = Map.of("file", new ExporterConfig("file", "file",
            Map.of("path", dataDir.resolve("exports").resolve("file").toString())));
        for (int b = 0; b < 3; b++)
        {
            brokers.add(Broker.start(BrokerConfig.of(b, distribution, dataDir, exporters), null,
                new FilesystemBackupStore(brokerStores.get(b))));
        }
        await("gateway ready").atMost(Duration.ofSeconds(90)).pollInterval(Duration.ofMillis(250))
            .until(() -> send(get(management + "/actuator/health/readiness")).statusCode() == 200);
        await("every pair known").atMost(Duration.ofSeconds(90)).pollInterval(Duration.ofMillis(250))
            .until(() -> "EXPORTING".equals(JSON.readTree(send(get(management + "/actuator/exporting")).body())
                .path("state").asText()));
    }

    private void stopCluster()
    {
        if (gateway != null)
        {
            gateway.close();
            gateway = null;
        }
        LoopbackBrokers.haltAll(brokers);
        brokers.clear();
    }

    private static HttpRequest post(final String url, final String body)
    {
        return HttpRequest.newBuilder(URI.create(url)).header("content-type", "application/json")
            .POST(HttpRequest.BodyPublishers.ofString(body)).build();
    }

    private static HttpRequest get(final String url)
    {
        return HttpRequest.newBuilder(URI.create(url)).GET().build();
    }

    private static HttpRequest delete(final String url)
    {
        return HttpRequest.newBuilder(URI.create(url)).DELETE().build();
    }

    private static HttpResponse<String> send(final HttpRequest request) throws Exception
    {
        return HTTP.send(request, HttpResponse.BodyHandlers.ofString());
    }
}
