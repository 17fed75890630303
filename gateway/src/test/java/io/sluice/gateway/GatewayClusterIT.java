package io.sluice.gateway;

import io.sluice.testing.QuietPeriod;
import io.sluice.broker.Broker;
import io.sluice.broker.BrokerConfig;
import io.sluice.gateway.records.PartitionSelector;
import io.sluice.protocol.cluster.PartitionDistribution;
import io.sluice.protocol.message.AppendLimits;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import tools.jackson.databind.JsonNode;

import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import static io.sluice.gateway.TestGateway.json;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The gateway as a client sees it: three real brokers (Ratis groups, sockets, disk) in this JVM and the
 * Spring application on random ports, driven over HTTP. The gateway starts before the brokers, as in a
 * real deployment; the test closing a broker runs last.
 */
@Timeout(value = 5, unit = TimeUnit.MINUTES)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class GatewayClusterIT
{
    private static final int PARTITIONS = 6;

    @TempDir
    static Path dataDir;

    private static PartitionDistribution distribution;
    private static final List<Broker> BROKERS = new ArrayList<>();
    private static FileExports exports;
    private static TestGateway gateway;
    private static int readinessBeforeBrokers;
    private static int livenessBeforeBrokers;

    @BeforeAll
    static void startGatewayThenBrokers() throws Exception
    {
        final String brokers = LoopbackBrokers.brokerList(3);
        distribution = PartitionDistribution.of(brokers, PARTITIONS, 3);

        gateway = TestGateway.start(brokers, PARTITIONS, null,
            "--sluice.gateway.request-timeout=20s",
            "--sluice.gateway.max-payload-bytes=1KB");

        readinessBeforeBrokers = gateway.get("/actuator/health/readiness").statusCode();
        livenessBeforeBrokers = gateway.get("/actuator/health/liveness").statusCode();

        exports = new FileExports(dataDir);
        for (int b = 0; b < 3; b++)
        {
            BROKERS.add(Broker.start(BrokerConfig.of(b, distribution, dataDir, exports.exporters())));
        }
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
    void readinessGoesUpOnlyOnceEveryPartitionHasALeader()
    {
        assertThat(readinessBeforeBrokers).isEqualTo(503);
        assertThat(livenessBeforeBrokers).isEqualTo(200);

        await().atMost(Duration.ofSeconds(90)).pollInterval(Duration.ofMillis(250))
            .until(gateway::ready);

        final JsonNode partitions = json(gateway.get("/actuator/partitions"));
        for (final JsonNode partition : partitions.get("partitions"))
        {
            assertThat(partition.get("leaderId").asInt()).isBetween(0, 2);
        }
    }

    @Test
    @Order(2)
    void postedRecordIsCommittedAndLandsInTheFileExport() throws Exception
    {
        awaitReady();
        final HttpResponse<String> response = post("{\"key\": \"order-42\", \"payload\": {\"amount\": 1.50, \"items\": [1, null, \"x\"]}}");

        assertThat(response.statusCode()).isEqualTo(200);
        final JsonNode answer = json(response);
        final int partitionId = answer.get("partitionId").asInt();
        final long position = answer.get("position").asLong();
        assertThat(partitionId).isEqualTo(new PartitionSelector(PARTITIONS).partitionFor("order-42"));
        assertThat(position).isGreaterThanOrEqualTo(0);

        await().atMost(Duration.ofSeconds(30)).until(() -> exports.exported(partitionId, position));
        final JsonNode line = TestGateway.JSON.readTree(exports.line(partitionId, position).orElseThrow());
        assertThat(line.get("key").asString()).isEqualTo("order-42");
        assertThat(line.get("partitionId").asInt()).isEqualTo(partitionId);
        // The payload is forwarded as JSON text: decimals keep their digits.
        assertThat(exports.line(partitionId, position).orElseThrow()).contains("{\"amount\":1.50,\"items\":[1,null,\"x\"]}");
    }

    @Test
    @Order(3)
    void sameKeyAlwaysLandsOnTheSamePartition() throws Exception
    {
        awaitReady();
        final List<Integer> partitions = new ArrayList<>();
        final List<Long> positions = new ArrayList<>();
        for (int i = 0; i < 4; i++)
        {
            final JsonNode answer = json(post("{\"key\": \"customer-7\", \"payload\": {\"i\": " + i + "}}"));
            partitions.add(answer.get("partitionId").asInt());
            positions.add(answer.get("position").asLong());
        }
        assertThat(partitions).containsOnly(partitions.get(0));
        assertThat(positions).isSorted().doesNotHaveDuplicates();
    }

    @Test
    @Order(4)
    void arrayAnswersKeepRequestOrder() throws Exception
    {
        awaitReady();
        final StringBuilder body = new StringBuilder("[");
        final int count = 30;
        for (int i = 0; i < count; i++)
        {
            body.append(i == 0 ? "" : ",");
            body.append(i % 3 == 0 ? "{\"payload\": {\"i\": " + i + "}}" :
                "{\"key\": \"k" + i + "\", \"payload\": {\"i\": " + i + "}}");
        }
        body.append("]");

        final HttpResponse<String> response = post(body.toString());

        assertThat(response.statusCode()).isEqualTo(200);
        final JsonNode answers = json(response);
        assertThat(answers.isArray()).isTrue();
        assertThat(answers.size()).isEqualTo(count);
        final PartitionSelector selector = new PartitionSelector(PARTITIONS);
        final long[] lastPosition = new long[PARTITIONS + 1];
        java.util.Arrays.fill(lastPosition, -1);
        for (int i = 0; i < count; i++)
        {
            final int partitionId = answers.get(i).get("partitionId").asInt();
            final long position = answers.get(i).get("position").asLong();
            if (i % 3 != 0)
            {
                assertThat(partitionId).isEqualTo(selector.partitionFor("k" + i));
            }
            assertThat(position).isGreaterThan(lastPosition[partitionId]);
            lastPosition[partitionId] = position;
        }
    }

    @Test
    @Order(5)
    void badRequestsGet400WithAJsonErrorAndWriteNothing() throws Exception
    {
        awaitReady();
        final long before = settledTotalLastPosition();

        assertError(post("{\"key\": \"a\", \"payload\": "), "malformed_json");
        assertError(post("not json at all"), "malformed_json");
        assertError(post(""), "malformed_json");
        assertError(post("[{\"key\": \"a\", \"payload\": 1}, 42]"), "invalid_record");
        assertError(post("{\"key\": 5, \"payload\": 1}"), "invalid_record");
        assertError(post("{\"key\": \"a\", \"paylod\": 1}"), "invalid_record");
        assertError(post("{\"key\": \"a\", \"payload\": \"" + "x".repeat(2000) + "\"}"), "payload_too_large");
        assertError(post("[{\"key\": \"ok\", \"payload\": 1}, {\"key\": \"big\", \"payload\": \"" + "x".repeat(2000) + "\"}]"),
            "payload_too_large");
        // Keys are bounded as the brokers bound them (AppendLimits.MAX_KEY_BYTES, in UTF-8 bytes).
        assertError(post("{\"key\": \"" + "k".repeat(AppendLimits.MAX_KEY_BYTES + 1) + "\", \"payload\": 1}"),
            "key_too_large");
        assertError(post("{\"key\": \"" + "\u00e9".repeat(AppendLimits.MAX_KEY_BYTES / 2 + 1) + "\", \"payload\": 1}"),
            "key_too_large");

        QuietPeriod.of(Duration.ofMillis(1500), "the refused requests append nothing");
        assertThat(totalLastPosition()).isEqualTo(before);
    }

    /**
     * The view is polled: wait until it shows what every replica holds (and the replicas of each partition agree), so
     * earlier cases' writes are not taken for this case's.
     */
    private long settledTotalLastPosition()
    {
        final long[] seen = {-1};
        await("the gateway's view shows every replica's last position").atMost(Duration.ofSeconds(30))
            .pollInterval(Duration.ofMillis(250)).until(() ->
            {
                final Map<Integer, Long> byPartition = new java.util.HashMap<>();
                long held = 0;
                for (final Broker broker : BROKERS)
                {
                    for (final var partition : broker.partitions().entrySet())
                    {
                        final long last = partition.getValue().state().lastPosition();
                        if (byPartition.getOrDefault(partition.getKey(), last) != last)
                        {
                            return false;
                        }
                        byPartition.put(partition.getKey(), last);
                        held += last;
                    }
                }
                seen[0] = totalLastPosition();
                return seen[0] == held;
            });
        return seen[0];
    }

    @Test
    @Order(6)
    void partitionsAndTopologyListEveryPair() throws Exception
    {
        awaitReady();
        for (final String path : List.of("/actuator/partitions", "/actuator/topology"))
        {
            final HttpResponse<String> response = gateway.get(path);
            assertThat(response.statusCode()).isEqualTo(200);
            final JsonNode view = json(response);
            assertThat(view.get("brokers").size()).isEqualTo(3);
            int pairs = 0;
            for (final JsonNode partition : view.get("partitions"))
            {
                for (final JsonNode replica : partition.get("replicas"))
                {
                    pairs++;
                    assertThat(replica.get("reachable").asBoolean()).isTrue();
                    assertThat(replica.get("role").asString()).isIn("LEADER", "FOLLOWER", "CANDIDATE");
                }
            }
            assertThat(pairs).isEqualTo(18);
        }
    }

    @Test
    @Order(7)
    void prometheusShowsPartitionPositionsAndBrokerReachability() throws Exception
    {
        awaitReady();
        post("{\"key\": \"metrics\", \"payload\": {}}");
        final HttpResponse<String> response = gateway.get("/actuator/prometheus");

        assertThat(response.statusCode()).isEqualTo(200);
        assertThat(response.body())
            .contains("sluice_broker_reachable{broker=\"2\"} 1")
            .contains("sluice_partition_last_position{partition=\"1\"}")
            .contains("sluice_partition_exported_position{partition=\"6\"}")
            .contains("sluice_gateway_records_committed_total")
            .contains("sluice_gateway_append_latency_seconds");
    }

    @Test
    @Order(8)
    void everyMetricTheShippedAlertsAndDashboardNameIsInTheScrape() throws Exception
    {
        awaitReady();
        post("{\"key\": \"metrics\", \"payload\": {}}");
        // A resume (the cluster exports already) so the operation histogram has a sample.
        gateway.post("/actuator/exporting/resume", null);
        final Path monitoring = Path.of("..", "dist", "monitoring");
        final java.util.TreeSet<String> named = new java.util.TreeSet<>();
        for (final String file : List.of("sluice-alerts.yml", "sluice-dashboard.json"))
        {
            final java.util.regex.Matcher m = java.util.regex.Pattern.compile("sluice_[a-z_]+")
                .matcher(Files.readString(monitoring.resolve(file)));
            while (m.find())
            {
                named.add(m.group());
            }
        }
        assertThat(named).as("metric names in the rules and dashboard").contains("sluice_exporting_held_seconds",
            "sluice_exporting_lease_expiries_total", "sluice_exporter_lag_records", "sluice_partition_leader");

        await().atMost(Duration.ofSeconds(20)).untilAsserted(() ->
        {
            final java.util.Set<String> scraped = new java.util.HashSet<>();
            for (final String line : gateway.get("/actuator/prometheus").body().split("\n"))
            {
                if (!line.startsWith("#") && !line.isBlank())
                {
                    scraped.add(line.split("[{ ]", 2)[0]);
                }
            }
            assertThat(scraped).as("the scrape of a real cluster").containsAll(named);
        });
    }

    @Test
    @Order(100)
    void closedBrokerIsMarkedUnreachableWithinSecondsAndWritesCarryOn() throws Exception
    {
        awaitReady();
        BROKERS.get(2).close();
        final long closed = System.nanoTime();

        await().atMost(Duration.ofSeconds(10)).pollInterval(Duration.ofMillis(100)).until(() ->
            !json(gateway.get("/actuator/partitions")).get("brokers").get(2).get("reachable").asBoolean());
        final Duration noticed = Duration.ofNanos(System.nanoTime() - closed);
        assertThat(noticed).isLessThan(Duration.ofSeconds(5));

        final JsonNode view = json(gateway.get("/actuator/partitions"));
        int unknown = 0;
        for (final JsonNode partition : view.get("partitions"))
        {
            for (final JsonNode replica : partition.get("replicas"))
            {
                if (replica.get("brokerId").asInt() == 2)
                {
                    unknown++;
                    assertThat(replica.get("role").asString()).isEqualTo("UNKNOWN");
                    assertThat(replica.get("reachable").asBoolean()).isFalse();
                }
            }
        }
        assertThat(unknown).isEqualTo(6);

        // Every partition keeps a quorum (2 of 3): a write to each partition is committed after re-election.
        for (int i = 0; i < PARTITIONS; i++)
        {
            final HttpResponse<String> response = post("{\"payload\": {\"after\": " + i + "}}");
            assertThat(response.statusCode()).as(response.body()).isEqualTo(200);
        }
    }

    private static void assertError(final HttpResponse<String> response, final String error)
    {
        assertThat(response.statusCode()).as(response.body()).isEqualTo(400);
        assertThat(response.headers().firstValue("content-type").orElse("")).contains("application/json");
        final JsonNode body = json(response);
        assertThat(body.get("error").asString()).isEqualTo(error);
        assertThat(body.get("message").asString()).isNotBlank();
    }

    private static long totalLastPosition()
    {
        long total = 0;
        for (final JsonNode partition : json(gateway.get("/actuator/partitions")).get("partitions"))
        {
            for (final JsonNode replica : partition.get("replicas"))
            {
                total += replica.get("lastPosition").asLong();
            }
        }
        return total;
    }

    private static void awaitReady()
    {
        await().atMost(Duration.ofSeconds(90)).pollInterval(Duration.ofMillis(250))
            .until(gateway::ready);
    }

    private static HttpResponse<String> post(final String body)
    {
        return gateway.write(body);
    }
}
