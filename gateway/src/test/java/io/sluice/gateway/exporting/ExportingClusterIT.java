package io.sluice.gateway.exporting;

import io.sluice.gateway.FileExports;
import io.sluice.gateway.LoopbackBrokers;
import io.sluice.gateway.TestGateway;
import io.sluice.testing.QuietPeriod;
import io.sluice.broker.Broker;
import io.sluice.broker.BrokerConfig;
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
import tools.jackson.databind.JsonNode;

import java.net.URI;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static io.sluice.gateway.TestGateway.json;
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

    @TempDir
    static Path dataDir;

    private static PartitionDistribution distribution;
    private static FileExports exports;
    private static final List<Broker> BROKERS = new ArrayList<>();
    private static TestGateway gateway;

    @BeforeAll
    static void startBrokersAndGateway() throws Exception
    {
        final String brokers = LoopbackBrokers.brokerList(3);
        distribution = PartitionDistribution.of(brokers, PARTITIONS, 3);
        exports = new FileExports(dataDir);
        for (int b = 0; b < 3; b++)
        {
            BROKERS.add(Broker.start(BrokerConfig.of(b, distribution, dataDir, exports.exporters())));
        }
        gateway = TestGateway.start(brokers, PARTITIONS, TOKEN,
            "--sluice.gateway.request-timeout=" + REQUEST_TIMEOUT.toMillis() + "ms");
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
        final JsonNode body = json(response);
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
        final JsonNode written = json(gateway.write("{\"key\": \"paused-1\", \"payload\": {\"n\": 1}}"));
        pausedRecordPartition = written.get("partitionId").asInt();
        pausedRecordPosition = written.get("position").asLong();
        QuietPeriod.of(Duration.ofSeconds(2), "a paused cluster exports nothing");
        assertThat(exports.exported(pausedRecordPartition, pausedRecordPosition)).isFalse();
    }

    private static int pausedRecordPartition;
    private static long pausedRecordPosition;

    @Test
    @Order(2)
    void resumeSucceedsOnEveryPairAndExportingCatchesUp()
    {
        final HttpResponse<String> response = post("/actuator/exporting/resume", null);

        assertThat(response.statusCode()).as(response.body()).isEqualTo(200);
        assertThat(json(response).get("operation").asString()).isEqualTo("RESUME");
        await().atMost(AWAIT).pollInterval(Duration.ofMillis(250)).until(() -> "EXPORTING".equals(clusterState()));
        await().atMost(AWAIT).pollInterval(Duration.ofMillis(250))
            .until(() -> exports.exported(pausedRecordPartition, pausedRecordPosition));
    }

    @Test
    @Order(3)
    void softPauseIsReportedAsSoftPaused()
    {
        final HttpResponse<String> response = post("/actuator/exporting/pause?soft=true", null);

        assertThat(response.statusCode()).as(response.body()).isEqualTo(200);
        assertThat(json(response).get("operation").asString()).isEqualTo("SOFT_PAUSE");
        await().atMost(AWAIT).pollInterval(Duration.ofMillis(250)).until(() -> "SOFT_PAUSED".equals(clusterState()));
        assertThat(post("/actuator/exporting/resume", null).statusCode()).isEqualTo(200);
        // The status view is polled: wait until it shows the resume, so the next case starts from EXPORTING.
        await().atMost(AWAIT).pollInterval(Duration.ofMillis(250)).until(() -> "EXPORTING".equals(clusterState()));
    }

    @Test
    @Order(4)
    void aTargetOutsideTheClusterIsRefusedWithoutAToken() throws Exception
    {
        assertThat(TestGateway.send(HttpRequest.newBuilder(URI.create(gateway.management() + "/actuator/exporting/pause"))
            .POST(HttpRequest.BodyPublishers.noBody()).build()).statusCode()).isEqualTo(401);
        final HttpResponse<String> unknown = post("/actuator/exporting/pause", "{\"targets\": [{\"brokerId\": 3, \"partitionId\": 1}]}");
        assertThat(unknown.statusCode()).isEqualTo(400);
        assertThat(json(unknown).get("message").asString()).contains("partition 1 on broker 3");
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
            gateway.ready());

        final long start = System.nanoTime();
        final HttpResponse<String> response = post("/actuator/exporting/pause", null);
        final Duration elapsed = Duration.ofNanos(System.nanoTime() - start);

        assertThat(response.statusCode()).as(response.body()).isEqualTo(503);
        assertThat(elapsed).isLessThan(REQUEST_TIMEOUT.dividedBy(2));
        final JsonNode body = json(response);
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

        BROKERS.set(2, Broker.start(BrokerConfig.of(2, distribution, dataDir, exports.exporters())));
        await().atMost(AWAIT).pollInterval(Duration.ofMillis(250)).until(() ->
            brokerStates(2).stream().noneMatch("UNKNOWN"::equals));

        final HttpResponse<String> retried = post("/actuator/exporting/pause", retry.toString());

        assertThat(retried.statusCode()).as(retried.body()).isEqualTo(200);
        final JsonNode retriedBody = json(retried);
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
            gateway.ready() && !clusterState().equals("UNKNOWN") && !clusterState().equals("MIXED"));
    }

    private static String clusterState()
    {
        return gateway.exportingState();
    }

    private static List<String> brokerStates(final int brokerId)
    {
        final List<String> states = new ArrayList<>();
        for (final JsonNode pair : gateway.exporting().get("targets").values())
        {
            if (pair.get("brokerId").asInt() == brokerId)
            {
                states.add(pair.get("state").asString());
            }
        }
        return states;
    }

    private static HttpResponse<String> post(final String path, final String body)
    {
        return gateway.post(path, body);
    }
}
