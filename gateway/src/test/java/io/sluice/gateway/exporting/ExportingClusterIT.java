package io.sluice.gateway.exporting;

import io.sluice.gateway.LoopbackBrokers;
import io.sluice.testing.QuietPeriod;
import io.sluice.broker.Broker;
import io.sluice.broker.BrokerConfig;
import io.sluice.broker.exporter.ExporterConfig;
import io.sluice.gateway.GatewayApplication;
import io.sluice.protocol.cluster.PartitionDistribution;
import io.sluice.protocol.cluster.PartitionReplica;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
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
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Exporting control as an operator drives it: three real brokers (Ratis groups, sockets, disk) in this JVM,
 * the gateway application on random ports with a management token, plain HTTP. Steps run in order; the
 * broker outage comes last.
 */
@Timeout(value = 6, unit = TimeUnit.MINUTES)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class ExportingClusterIT
{
    private static final int PARTITIONS = 6;
    private static final String TOKEN = "exporting-cluster-test-token";
    // Generous for a loaded machine: the dead broker's pairs must answer far sooner regardless.
    private static final Duration REQUEST_TIMEOUT = Duration.ofSeconds(15);
    private static final Duration AWAIT = Duration.ofSeconds(120);
    private static final JsonMapper JSON = JsonMapper.builder().build();
    private static final HttpClient HTTP = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

    @TempDir
    static Path dataDir;

    private static PartitionDistribution distribution;
    private static Map<String, ExporterConfig> exporters;
    private static final List<Broker> BROKERS = new ArrayList<>();
    private static ConfigurableApplicationContext gateway;
    private static String api;
    private static String management;

    @BeforeAll
    static void startBrokersAndGateway() throws Exception
    {
        final String brokers = LoopbackBrokers.brokerList(3);
        distribution = PartitionDistribution.of(brokers, PARTITIONS, 3);
        exporters = Map.of("file", new ExporterConfig("file", "file",
            Map.of("path", dataDir.resolve("exports").resolve("file").toString())));
        for (int b = 0; b < 3; b++)
        {
            BROKERS.add(Broker.start(BrokerConfig.of(b, distribution, dataDir, exporters)));
        }
        gateway = new SpringApplicationBuilder(GatewayApplication.class).run(
            "--server.port=0",
            "--management.server.port=0",
            "--sluice.management.token=" + TOKEN,
            "--management.server.address=127.0.0.1",
            "--sluice.cluster.brokers=" + brokers,
            "--sluice.cluster.partitions=" + PARTITIONS,
            "--sluice.gateway.request-timeout=" + REQUEST_TIMEOUT.toMillis() + "ms");
        api = "http://127.0.0.1:" + gateway.getEnvironment().getProperty("local.server.port");
        management = "http://127.0.0.1:" + gateway.getEnvironment().getProperty("local.management.port");
    }

    @AfterAll
    static void stop()
    {
        if (gateway != null)
        {
            gateway.close();
        }
        LoopbackBrokers.haltAll(BROKERS);
    }

    @Test
    @Order(1)
    void pauseSucceedsOnEveryPairAndStopsExporting() throws Exception
    {
        awaitEveryPairKnownAndLed();

        final long start = System.nanoTime();
        final HttpResponse<String> response = post("/actuator/exporting/pause", null);
        final long pauseMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);

        assertThat(response.statusCode()).as(response.body()).isEqualTo(200);
        final JsonNode body = JSON.readTree(response.body());
        assertThat(body.get("operation").asString()).isEqualTo("PAUSE");
        assertThat(body.get("result").asString()).isEqualTo("SUCCEEDED");
        assertThat(body.get("targets").size()).isEqualTo(18);
        for (final JsonNode target : body.get("targets").values())
        {
            assertThat(target.get("outcome").asString()).isEqualTo("SUCCEEDED");
            assertThat(target.has("error")).isFalse();
        }
        System.out.println("pause of 18 pairs over HTTP took " + pauseMillis + " ms");
        await().atMost(AWAIT).pollInterval(Duration.ofMillis(250)).until(() -> "PAUSED".equals(clusterState()));

        // A record committed now stays unexported until resume.
        final JsonNode written = JSON.readTree(send(HttpRequest.newBuilder(URI.create(api + "/v1/records"))
            .header("content-type", "application/json")
            .POST(HttpRequest.BodyPublishers.ofString("{\"key\": \"paused-1\", \"payload\": {\"n\": 1}}")).build()).body());
        pausedRecordPartition = written.get("partitionId").asInt();
        pausedRecordPosition = written.get("position").asLong();
        QuietPeriod.of(Duration.ofSeconds(2), "a paused cluster exports nothing");
        assertThat(exported(pausedRecordPartition, pausedRecordPosition)).isFalse();
    }

    private static int pausedRecordPartition;
    private static long pausedRecordPosition;

    @Test
    @Order(2)
    void resumeSucceedsOnEveryPairAndExportingCatchesUp()
    {
        final HttpResponse<String> response = post("/actuator/exporting/resume", null);

        assertThat(response.statusCode()).as(response.body()).isEqualTo(200);
        assertThat(JSON.readTree(response.body()).get("operation").asString()).isEqualTo("RESUME");
        await().atMost(AWAIT).pollInterval(Duration.ofMillis(250)).until(() -> "EXPORTING".equals(clusterState()));
        await().atMost(AWAIT).pollInterval(Duration.ofMillis(250))
            .until(() -> exported(pausedRecordPartition, pausedRecordPosition));
    }

    @Test
    @Order(3)
    void softPauseIsReportedAsSoftPaused()
    {
        final HttpResponse<String> response = post("/actuator/exporting/pause?soft=true", null);

        assertThat(response.statusCode()).as(response.body()).isEqualTo(200);
        assertThat(JSON.readTree(response.body()).get("operation").asString()).isEqualTo("SOFT_PAUSE");
        await().atMost(AWAIT).pollInterval(Duration.ofMillis(250)).until(() -> "SOFT_PAUSED".equals(clusterState()));
        assertThat(post("/actuator/exporting/resume", null).statusCode()).isEqualTo(200);
        // The status view is polled: wait until it shows the resume, so the next case starts from EXPORTING.
        await().atMost(AWAIT).pollInterval(Duration.ofMillis(250)).until(() -> "EXPORTING".equals(clusterState()));
    }

    @Test
    @Order(4)
    void aTargetOutsideTheClusterIsRefusedWithoutAToken() throws Exception
    {
        assertThat(send(HttpRequest.newBuilder(URI.create(management + "/actuator/exporting/pause"))
            .POST(HttpRequest.BodyPublishers.noBody()).build()).statusCode()).isEqualTo(401);
        final HttpResponse<String> unknown = post("/actuator/exporting/pause", "{\"targets\": [{\"brokerId\": 3, \"partitionId\": 1}]}");
        assertThat(unknown.statusCode()).isEqualTo(400);
        assertThat(JSON.readTree(unknown.body()).get("message").asString()).contains("partition 1 on broker 3");
        await().during(Duration.ofSeconds(1)).atMost(AWAIT).until(() -> "EXPORTING".equals(clusterState()));
    }

    @Test
    @Order(5)
    void aDownBrokersPairsFailFastAndARetryOfExactlyThemSucceedsOnceItIsBack() throws Exception
    {
        BROKERS.get(2).close();
        BROKERS.set(2, null);
        // The topology notices the outage; the remaining replicas elect leaders for every partition.
        await().atMost(AWAIT).pollInterval(Duration.ofMillis(250)).until(() ->
            brokerStates(2).stream().allMatch("UNKNOWN"::equals) &&
            get(management + "/actuator/health/readiness").statusCode() == 200);

        final long start = System.nanoTime();
        final HttpResponse<String> response = post("/actuator/exporting/pause", null);
        final Duration elapsed = Duration.ofNanos(System.nanoTime() - start);

        assertThat(response.statusCode()).as(response.body()).isEqualTo(503);
        assertThat(elapsed).isLessThan(REQUEST_TIMEOUT.dividedBy(2));
        final JsonNode body = JSON.readTree(response.body());
        assertThat(body.get("result").asString()).isEqualTo("FAILED");
        final List<PartitionReplica> failed = new ArrayList<>();
        final StringBuilder retry = new StringBuilder("{\"targets\": [");
        for (final JsonNode target : body.get("targets").values())
        {
            if (!target.get("outcome").asString().equals("SUCCEEDED"))
            {
                assertThat(target.get("outcome").asString()).isEqualTo("FAILED");
                assertThat(target.get("error").asString()).isEqualTo("broker 2 unreachable");
                failed.add(new PartitionReplica(target.get("brokerId").asInt(), target.get("partitionId").asInt()));
                retry.append(failed.size() == 1 ? "" : ", ").append("{\"brokerId\": ").append(target.get("brokerId").asInt())
                    .append(", \"partitionId\": ").append(target.get("partitionId").asInt()).append("}");
            }
        }
        retry.append("]}");
        assertThat(failed).containsExactlyElementsOf(
            distribution.replicas().stream().filter(replica -> replica.brokerId() == 2).toList());
        System.out.println("pause with broker 2 down answered in " + elapsed.toMillis() + " ms");

        BROKERS.set(2, Broker.start(BrokerConfig.of(2, distribution, dataDir, exporters)));
        await().atMost(AWAIT).pollInterval(Duration.ofMillis(250)).until(() ->
            brokerStates(2).stream().noneMatch("UNKNOWN"::equals));

        final HttpResponse<String> retried = post("/actuator/exporting/pause", retry.toString());

        assertThat(retried.statusCode()).as(retried.body()).isEqualTo(200);
        final JsonNode retriedBody = JSON.readTree(retried.body());
        assertThat(retriedBody.get("targets").size()).isEqualTo(6);
        for (final JsonNode target : retriedBody.get("targets").values())
        {
            assertThat(target.get("brokerId").asInt()).isEqualTo(2);
            assertThat(target.get("outcome").asString()).isEqualTo("SUCCEEDED");
        }
        await().atMost(AWAIT).pollInterval(Duration.ofMillis(250)).until(() -> "PAUSED".equals(clusterState()));
        assertThat(post("/actuator/exporting/resume", null).statusCode()).isEqualTo(200);
    }

    private static void awaitEveryPairKnownAndLed()
    {
        await().atMost(AWAIT).pollInterval(Duration.ofMillis(250)).until(() ->
            get(management + "/actuator/health/readiness").statusCode() == 200 &&
            !clusterState().equals("UNKNOWN") && !clusterState().equals("MIXED"));
    }

    private static String clusterState()
    {
        return JSON.readTree(get(management + "/actuator/exporting").body()).get("state").asString();
    }

    private static List<String> brokerStates(final int brokerId)
    {
        final List<String> states = new ArrayList<>();
        for (final JsonNode pair : JSON.readTree(get(management + "/actuator/exporting").body()).get("targets").values())
        {
            if (pair.get("brokerId").asInt() == brokerId)
            {
                states.add(pair.get("state").asString());
            }
        }
        return states;
    }

    private static boolean exported(final int partitionId, final long position) throws IOException
    {
        final Path export = dataDir.resolve("exports").resolve("file").resolve("partition-" + partitionId + ".jsonl");
        if (!Files.exists(export))
        {
            return false;
        }
        for (final String line : Files.readAllLines(export))
        {
            if (!line.isBlank() && JSON.readTree(line).get("position").asLong() == position)
            {
                return true;
            }
        }
        return false;
    }

    private static HttpResponse<String> post(final String path, final String body)
    {
        return send(HttpRequest.newBuilder(URI.create(management + path))
            .header("Authorization", "Bearer " + TOKEN)
            .timeout(Duration.ofSeconds(60))
            .POST(body == null ? HttpRequest.BodyPublishers.noBody() : HttpRequest.BodyPublishers.ofString(body))
            .build());
    }

    private static HttpResponse<String> get(final String url)
    {
        return send(HttpRequest.newBuilder(URI.create(url)).timeout(Duration.ofSeconds(60)).GET().build());
    }

    private static HttpResponse<String> send(final HttpRequest request)
    {
        try
        {
            return HTTP.send(request, HttpResponse.BodyHandlers.ofString());
        }
        catch (final IOException e)
        {
            throw new java.io.UncheckedIOException(e);
        }
        catch (final InterruptedException e)
        {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }
}
