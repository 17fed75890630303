package io.sluice.gateway.backup;

import io.sluice.broker.Broker;
import io.sluice.broker.BrokerConfig;
import io.sluice.broker.exporter.ExporterConfig;
import io.sluice.gateway.GatewayApplication;
import io.sluice.gateway.LoopbackBrokers;
import io.sluice.protocol.backup.FilesystemBackupStore;
import io.sluice.protocol.cluster.PartitionDistribution;
import io.sluice.testing.QuietPeriod;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * A backup's hold on acknowledgements (issue 26) against three real brokers and two gateways in this JVM, with an
 * exporter whose sink takes snapshots that wait at a gate the test opens ({@link GatedSnapshotSink}): while the hold
 * is in place an operator's resume neither ends it nor lets a position move, a second backup through the other
 * gateway is refused, and the snapshot holds every record up to the backed-up positions and nothing above the
 * checkpoints; an operator's pause outlives a backup; a refused sink snapshot or an unreachable pair fails the
 * backup and releases the hold.
 */
@Timeout(value = 5, unit = TimeUnit.MINUTES)
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class BackupHoldClusterIT
{
    private static final int PARTITIONS = 3;
    private static final String GATED = "gated";
    private static final JsonMapper JSON = JsonMapper.builder().build();
    private static final HttpClient HTTP = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

    @TempDir
    static Path temp;
    private final List<Broker> brokers = new ArrayList<>();
    private final List<ConfigurableApplicationContext> gateways = new ArrayList<>();
    private String api;
    private String management;
    private String otherManagement;
    private int written;

    @BeforeAll
    void startCluster() throws Exception
    {
        final Path dataDir = temp.resolve("data");
        final Path backups = temp.resolve("backups");
        final String cluster = LoopbackBrokers.brokerList(3);
        final PartitionDistribution distribution = PartitionDistribution.of(cluster, PARTITIONS, 3);
        for (int g = 0; g < 2; g++)
        {
            gateways.add(new SpringApplicationBuilder(GatewayApplication.class).run(
                "--server.port=0",
                "--management.server.port=0",
                "--management.server.address=127.0.0.1",
                "--sluice.cluster.brokers=" + cluster,
                "--sluice.cluster.partitions=" + PARTITIONS,
                "--sluice.backup.filesystem.path=" + backups,
                "--sluice.gateway.request-timeout=10s"));
        }
        api = "http://127.0.0.1:" + gateways.get(0).getEnvironment().getProperty("local.server.port");
        management = "http://127.0.0.1:" + gateways.get(0).getEnvironment().getProperty("local.management.port");
        otherManagement = "http://127.0.0.1:" + gateways.get(1).getEnvironment().getProperty("local.management.port");
        final Map<String, ExporterConfig> exporters = Map.of(
            "file", new ExporterConfig("file", "file", Map.of("path", dataDir.resolve("exports").toString())),
            GATED, new ExporterConfig(GATED, GatedSnapshotSink.TYPE, Map.of()));
        for (int b = 0; b < 3; b++)
        {
            brokers.add(Broker.start(BrokerConfig.of(b, distribution, dataDir, exporters), null,
                new FilesystemBackupStore(backups)));
        }
        for (final String base : List.of(management, otherManagement))
        {
            await("gateway ready").atMost(Duration.ofSeconds(90)).pollInterval(Duration.ofMillis(250))
                .until(() -> send(get(base + "/actuator/health/readiness")).statusCode() == 200);
        }
        await("every pair known").atMost(Duration.ofSeconds(90)).pollInterval(Duration.ofMillis(250))
            .until(() -> "EXPORTING".equals(JSON.readTree(send(get(management + "/actuator/exporting")).body())
                .path("state").asText()));
    }

    @BeforeEach
    void resetSink()
    {
        GatedSnapshotSink.reset();
    }

    @AfterAll
    void stopCluster()
    {
        gateways.forEach(ConfigurableApplicationContext::close);
        LoopbackBrokers.haltAll(brokers);
    }

    @Test
    @Order(1)
    void aResumeDuringTheHoldNeitherEndsItNorLetsAPositionMoveAndTheSinkSnapshotHoldsEveryRecordUpToThem()
        throws Exception
    {
        final Map<Integer, Long> before = write(30);
        awaitAcknowledged(before);
        assertThat(send(post(management + "/actuator/exporting/pause?soft=true", "")).statusCode()).isEqualTo(200);
        GatedSnapshotSink.gate = new CountDownLatch(1);

        final CompletableFuture<HttpResponse<String>> taken =
            HTTP.sendAsync(post(management + "/actuator/backups", "{\"backupId\": 100}"), HttpResponse.BodyHandlers.ofString());
        assertThat(GatedSnapshotSink.snapshotStarted.await(30, TimeUnit.SECONDS)).as("the sink snapshot started").isTrue();
        final Map<Integer, Long> held = positions();

        final HttpResponse<String> resumed = send(post(management + "/actuator/exporting/resume", ""));
        assertThat(resumed.statusCode()).as(resumed.body()).isEqualTo(200);
        final Map<Integer, Long> during = write(20);
        await("records written during the hold are exported (only their acknowledgement waits)")
            .atMost(Duration.ofSeconds(30)).until(() -> during.entrySet().stream().filter((e) -> e.getValue() > 0)
                .allMatch((e) -> GatedSnapshotSink.held(e.getKey()).contains(e.getValue())));
        QuietPeriod.of(Duration.ofMillis(600), "several acknowledgement intervals in which no position may move");
        assertThat(positions()).as("no acknowledged position moved while the backup held them").isEqualTo(held);

        final HttpResponse<String> second = send(post(otherManagement + "/actuator/backups", "{\"backupId\": 101}"));
        assertThat(second.statusCode()).as("a second backup through another gateway: " + second.body()).isEqualTo(409);
        assertThat(second.body()).contains("backup 100");

        GatedSnapshotSink.gate.countDown();
        final HttpResponse<String> answer = taken.get(60, TimeUnit.SECONDS);
        assertThat(answer.statusCode()).as(answer.body()).isEqualTo(202);
        assertThat(JSON.readTree(answer.body()).get("holdMillis").asLong()).isGreaterThanOrEqualTo(600);

        final JsonNode backup = awaitEnded(100);
        assertThat(backup.get("state").asText()).as(backup.toString()).isEqualTo("COMPLETED");
        assertThat(backup.get("sinks")).hasSize(1);
        assertThat(backup.get("sinks").get(0).get("exporterId").asText()).isEqualTo(GATED);
        assertThat(backup.get("sinks").get(0).get("state").asText()).isEqualTo("SUCCESS");
        final Map<Integer, Set<Long>> snapshot = GatedSnapshotSink.SNAPSHOTS.get(backup.get("sinks").get(0)
            .get("snapshot").asText());
        for (final JsonNode partition : backup.get("partitions"))
        {
            final int p = partition.get("partitionId").asInt();
            final long x = partition.get("exporterPositions").get(GATED).asLong();
            final long c = partition.get("checkpointPosition").asLong();
            assertThat(x).as("partition %d: the backed-up position is the one held", p).isEqualTo(held.get(p));
            final Set<Long> inSnapshot = snapshot.getOrDefault(p, Set.of());
            for (long position = 1; position <= x; position++)
            {
                assertThat(inSnapshot).as("partition %d: every record up to X is in the snapshot", p).contains(position);
            }
            assertThat(inSnapshot).as("partition %d: nothing above the checkpoint %d", p, c).allMatch((q) -> q <= c);
        }
        assertThat(JSON.readTree(send(get(management + "/actuator/exporting")).body()).get("state").asText())
            .as("the operator's resume stays").isEqualTo("EXPORTING");
        awaitAcknowledged(write(5));
        final JsonNode verified = JSON.readTree(send(post(management + "/actuator/backups/100/verify", "")).body());
        assertThat(verified.get("ok").asBoolean()).as(verified.toString()).isTrue();
    }

    @Test
    @Order(2)
    void anOperatorsPauseBeforeABackupIsStillInPlaceAfterIt() throws Exception
    {
        assertThat(send(post(management + "/actuator/exporting/pause", "")).statusCode()).isEqualTo(200);
        final HttpResponse<String> taken = send(post(management + "/actuator/backups", "{\"backupId\": 200}"));
        assertThat(taken.statusCode()).as(taken.body()).isEqualTo(202);
        final JsonNode exporting = JSON.readTree(send(get(management + "/actuator/exporting")).body());
        assertThat(exporting.get("state").asText()).as(exporting.toString()).isEqualTo("PAUSED");
        final Map<Integer, Long> paused = positions();
        write(5);
        QuietPeriod.of(Duration.ofMillis(500), "a paused exporter exports nothing");
        assertThat(positions()).isEqualTo(paused);
        assertThat(awaitEnded(200).get("state").asText()).isEqualTo("COMPLETED");
        assertThat(send(post(management + "/actuator/exporting/resume", "")).statusCode()).isEqualTo(200);
    }

    @Test
    @Order(3)
    void aRefusedSinkSnapshotReleasesTheHoldAndFailsTheBackupWithItsReason() throws Exception
    {
        GatedSnapshotSink.snapshotState = "FAILED";
        final HttpResponse<String> refused = send(post(management + "/actuator/backups", "{\"backupId\": 300}"));
        assertThat(refused.statusCode()).as(refused.body()).isEqualTo(503);
        assertThat(refused.body()).contains("exporter " + GATED).contains("FAILED");
        final JsonNode backup = JSON.readTree(send(get(otherManagement + "/actuator/backups/300")).body());
        assertThat(backup.get("state").asText()).as(backup.toString()).isEqualTo("FAILED");
        assertThat(backup.get("failureReason").asText()).contains("hold released").contains("exporter " + GATED);
        await("every replica applied the release").atMost(Duration.ofSeconds(10))
            .until(() -> brokers.stream().allMatch((b) -> b.control().state().backupHold() == null));

        awaitAcknowledged(write(5));
        GatedSnapshotSink.snapshotState = "SUCCESS";
        final HttpResponse<String> next = send(post(management + "/actuator/backups", "{\"backupId\": 301}"));
        assertThat(next.statusCode()).as("no hold was left behind: " + next.body()).isEqualTo(202);
        assertThat(awaitEnded(301).get("state").asText()).isEqualTo("COMPLETED");
    }

    @Test
    @Order(4)
    void aSnapshotOfTheSameNameAlreadyInTheSinkIsRefusedWith409TheHoldReleasedAndNothingKept() throws Exception
    {
        // left by a backup 350 deleted from the store since, or by another cluster writing to the same repository
        GatedSnapshotSink.SNAPSHOTS.put("sluice-backup-350", Map.of());
        final HttpResponse<String> refused = send(post(management + "/actuator/backups", "{\"backupId\": 350}"));
        assertThat(refused.statusCode()).as(refused.body()).isEqualTo(409);
        assertThat(refused.body()).contains("exporter " + GATED).contains("sluice-backup-350").contains("greater id");
        assertThat(GatedSnapshotSink.snapshotStarted.getCount()).as("no snapshot taken").isEqualTo(1);
        assertThat(send(get(management + "/actuator/backups/350")).statusCode()).as("nothing kept").isEqualTo(404);
        await("the hold released").atMost(Duration.ofSeconds(10))
            .until(() -> brokers.stream().allMatch((b) -> b.control().state().backupHold() == null));

        final HttpResponse<String> next = send(post(management + "/actuator/backups", "{\"backupId\": 351}"));
        assertThat(next.statusCode()).as(next.body()).isEqualTo(202);
        assertThat(awaitEnded(351).get("state").asText()).isEqualTo("COMPLETED");
    }

    @Test
    @Order(5)
    void aSinkWriteThatHangsDelaysNeitherASoftPauseNorABackupsHold() throws Exception
    {
        awaitAcknowledged(write(6));
        GatedSnapshotSink.hangExports(1);
        try
        {
            final Map<Integer, Long> written = write(6);
            assertThat(written.get(1)).as("a record of partition 1 written").isPositive();
            assertThat(GatedSnapshotSink.exportHanging.await(30, TimeUnit.SECONDS)).as("partition 1's export hangs")
                .isTrue();

            // Exports go on under a soft pause and a hold: only acknowledgements wait, so a write in flight is no reason
            // to wait (the request timeout, 10 s, would answer 504 naming partition 1's leader).
            final HttpResponse<String> softPaused = send(post(management + "/actuator/exporting/pause?soft=true", ""));
            assertThat(softPaused.statusCode()).as(softPaused.body()).isEqualTo(200);
            assertThat(send(post(management + "/actuator/exporting/resume", "")).statusCode()).isEqualTo(200);
            final HttpResponse<String> taken = send(post(management + "/actuator/backups", "{\"backupId\": 360}"));
            assertThat(taken.statusCode()).as(taken.body()).isEqualTo(202);
            assertThat(GatedSnapshotSink.exportHanging.getCount()).as("still hanging when answered").isZero();
            assertThat(GatedSnapshotSink.exportGate.getCount()).isEqualTo(1);
            final JsonNode backup = awaitEnded(360);
            assertThat(backup.get("state").asText()).as(backup.toString()).isEqualTo("COMPLETED");
            for (final JsonNode partition : backup.get("partitions"))
            {
                if (partition.get("partitionId").asInt() == 1)
                {
                    assertThat(partition.get("exporterPositions").get(GATED).asLong())
                        .as("partition 1's position is below the record whose write hangs").isLessThan(written.get(1));
                }
            }
        }
        finally
        {
            GatedSnapshotSink.exportGate.countDown();
        }
        awaitAcknowledged(write(3));
    }

    @Test
    @Order(6)
    void aPairOnABrokerThatIsDownFailsTheBackupNamingItAndReleasesTheHold() throws Exception
    {
        brokers.get(2).halt();
        await("broker 2 known down").atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(250))
            .until(() -> send(get(management + "/actuator/exporting")).body().contains("UNKNOWN"));
        final HttpResponse<String> refused = send(post(management + "/actuator/backups", "{\"backupId\": 400}"));
        assertThat(refused.statusCode()).as(refused.body()).isEqualTo(503);
        assertThat(refused.body()).contains("on broker 2");
        assertThat(JSON.readTree(send(get(management + "/actuator/backups/400")).body()).get("state").asText())
            .isEqualTo("FAILED");
        await("the hold released").atMost(Duration.ofSeconds(10))
            .until(() -> brokers.subList(0, 2).stream().allMatch((b) -> b.control().state().backupHold() == null));
    }

    private void awaitAcknowledged(final Map<Integer, Long> written)
    {
        await("the sink's acknowledgements replicated up to what was written").atMost(Duration.ofSeconds(30))
            .pollInterval(Duration.ofMillis(100)).until(() ->
            {
                final Map<Integer, Long> now = positions();
                return written.entrySet().stream().allMatch((e) -> now.getOrDefault(e.getKey(), -1L) >= e.getValue());
            });
    }

    private JsonNode awaitEnded(final long id) throws Exception
    {
        await("backup " + id + " ended").atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(200))
            .until(() -> !"IN_PROGRESS".equals(JSON.readTree(send(get(management + "/actuator/backups/" + id)).body())
                .path("state").asText()));
        return JSON.readTree(send(get(management + "/actuator/backups/" + id)).body());
    }

    /** The gated exporter's acknowledged (replicated) position of each partition. */
    private Map<Integer, Long> positions() throws Exception
    {
        final Map<Integer, Long> positions = new HashMap<>();
        for (final JsonNode exporter : JSON.readTree(send(get(management + "/actuator/exporters")).body()).get("exporters"))
        {
            if (exporter.get("id").asText().equals(GATED))
            {
                for (final JsonNode partition : exporter.get("partitions"))
                {
                    positions.put(partition.get("partitionId").asInt(), partition.get("position").asLong());
                }
            }
        }
        return positions;
    }

    /** Writes {@code count} records; answers each partition's last position (0 for a partition written nothing). */
    private Map<Integer, Long> write(final int count) throws Exception
    {
        final Map<Integer, Long> last = new HashMap<>(positionsOrZero());
        for (int i = 0; i < count; i++, written++)
        {
            final HttpResponse<String> answer = send(HttpRequest.newBuilder(URI.create(api + "/v1/records"))
                .header("content-type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString("{\"key\": \"k-" + written + "\", \"payload\": {\"n\": " +
                    written + "}}")).build());
            assertThat(answer.statusCode()).as(answer.body()).isEqualTo(200);
            final JsonNode node = JSON.readTree(answer.body());
            last.merge(node.get("partitionId").asInt(), node.get("position").asLong(), Math::max);
        }
        return last;
    }

    private Map<Integer, Long> positionsOrZero() throws Exception
    {
        final Map<Integer, Long> known = positions();
        final Map<Integer, Long> zero = new HashMap<>();
        for (int p = 1; p <= PARTITIONS; p++)
        {
            zero.put(p, Math.max(0, known.getOrDefault(p, 0L)));
        }
        return zero;
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

    private static HttpResponse<String> send(final HttpRequest request) throws Exception
    {
        return HTTP.send(request, HttpResponse.BodyHandlers.ofString());
    }
}
