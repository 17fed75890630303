package io.sluice.gateway.exporters;

import io.sluice.broker.Broker;
import io.sluice.broker.BrokerConfig;
import io.sluice.gateway.FileExports;
import io.sluice.gateway.LoopbackBrokers;
import io.sluice.gateway.TestGateway;
import io.sluice.protocol.cluster.PartitionDistribution;
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
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static io.sluice.gateway.TestGateway.json;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * One meaning of "position" in every view (issue 29): {@code GET /actuator/exporters}, {@code GET
 * /actuator/exporting} and the metric {@code sluice_exporter_position} show the same acknowledged position per
 * (exporter, partition), and the same position sent to the sink ahead of it ({@code sentPosition}, the metric
 * {@code sluice_exporter_sent_position}), also while a soft pause holds acknowledgements back and after a reset to
 * latest. Three real brokers in this JVM, the gateway on
 * random ports, plain HTTP. Steps run in order.
 */
@Timeout(value = 6, unit = TimeUnit.MINUTES)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class ExportPositionsClusterIT
{
    private static final int PARTITIONS = 3;
    private static final String TOKEN = "export-positions-test-token";
    private static final Duration AWAIT = Duration.ofSeconds(90);
    private static final Pattern POSITION_METRIC = Pattern.compile(
        "^sluice_exporter_(position|sent_position)\\{exporter=\"file\",partition=\"(\\d+)\"} (\\S+)$", Pattern.MULTILINE);

    @TempDir
    static Path dataDir;

    private static final List<Broker> BROKERS = new ArrayList<>();
    private static FileExports exports;
    private static TestGateway gateway;
    /** The last position written per partition. */
    private static final Map<Integer, Long> LAST = new TreeMap<>();
    /** The acknowledged positions seen during the soft pause. */
    private static Map<Integer, Long> heldPositions;

    @BeforeAll
    static void startBrokersAndGateway() throws Exception
    {
        final String brokers = LoopbackBrokers.brokerList(3);
        final PartitionDistribution distribution = PartitionDistribution.of(brokers, PARTITIONS, 3);
        exports = new FileExports(dataDir);
        for (int b = 0; b < 3; b++)
        {
            BROKERS.add(Broker.start(BrokerConfig.of(b, distribution, dataDir, exports.exporters())));
        }
        gateway = TestGateway.start(brokers, PARTITIONS, TOKEN,
            "--sluice.gateway.metrics.exporter-refresh-interval=300ms",
            "--sluice.gateway.metrics.exporter-poll-interval=300ms");
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
    void everyViewShowsTheSamePositionOnceRecordsAreExported()
    {
        await().atMost(AWAIT).pollInterval(Duration.ofMillis(250)).until(() ->
            gateway.ready() && "EXPORTING".equals(gateway.exportingState()));
        write(12);

        await().atMost(AWAIT).pollInterval(Duration.ofMillis(250)).untilAsserted(() ->
        {
            final Views views = Views.read();
            for (final int partitionId : LAST.keySet())
            {
                assertThat(views.acknowledged(partitionId)).as("partition %d: %s", partitionId, views)
                    .containsOnly(LAST.get(partitionId));
                assertThat(views.sent(partitionId)).as("partition %d: %s", partitionId, views)
                    .containsOnly(LAST.get(partitionId));
            }
        });
    }

    @Test
    @Order(2)
    void duringASoftPauseEveryViewShowsTheHeldAcknowledgedPositionAndTheSentOneAhead() throws Exception
    {
        final Map<Integer, Long> before = new TreeMap<>(LAST);
        final HttpResponse<String> paused = post("/actuator/exporting/pause?soft=true");
        assertThat(paused.statusCode()).as(paused.body()).isEqualTo(200);
        write(24);
        // The sink gets every record: a soft pause only holds the acknowledgements back.
        await().atMost(AWAIT).pollInterval(Duration.ofMillis(250)).until(() -> everyLastRecordExported());

        await().atMost(AWAIT).pollInterval(Duration.ofMillis(250)).untilAsserted(() ->
        {
            final Views views = Views.read();
            for (final int partitionId : LAST.keySet())
            {
                final long last = LAST.get(partitionId);
                final long held = before.getOrDefault(partitionId, 0L);
                assertThat(views.acknowledged(partitionId)).as("acknowledged, partition %d: %s", partitionId, views)
                    .containsOnly(held);
                assertThat(views.sent(partitionId)).as("sent, partition %d: %s", partitionId, views)
                    .containsOnly(last);
                final JsonNode exporter = views.exporter(partitionId);
                assertThat(exporter.get("state").asString()).isEqualTo("SOFT_PAUSED");
                assertThat(exporter.get("lag").asLong()).isEqualTo(last - held);
                assertThat(exporter.get("sentLag").asLong()).isZero();
            }
        });
        heldPositions = before;
    }

    @Test
    @Order(3)
    void afterResumeAcknowledgedAndSentPositionsConvergeOnTheLastPosition()
    {
        assertThat(heldPositions).as("the soft pause step ran").isNotNull();
        final HttpResponse<String> resumed = post("/actuator/exporting/resume");
        assertThat(resumed.statusCode()).as(resumed.body()).isEqualTo(200);

        await().atMost(AWAIT).pollInterval(Duration.ofMillis(250)).untilAsserted(() ->
        {
            final Views views = Views.read();
            for (final int partitionId : LAST.keySet())
            {
                assertThat(views.acknowledged(partitionId)).as("partition %d: %s", partitionId, views)
                    .containsOnly(LAST.get(partitionId));
                assertThat(views.sent(partitionId)).as("partition %d: %s", partitionId, views)
                    .containsOnly(LAST.get(partitionId));
                assertThat(views.exporter(partitionId).get("lag").asLong()).isZero();
                assertThat(views.exporter(partitionId).get("state").asString()).isEqualTo("EXPORTING");
            }
        });
    }

    @Test
    @Order(4)
    void afterAResetToLatestEveryViewShowsTheResetPositionWithoutLag()
    {
        assertThat(post("/actuator/exporting/pause").statusCode()).isEqualTo(200);
        write(9);
        final HttpResponse<String> reset = post("/actuator/exporters/file/resetToLatestAndBackfill");
        assertThat(reset.statusCode()).as(reset.body()).isEqualTo(202);
        assertThat(post("/actuator/exporting/resume").statusCode()).isEqualTo(200);

        // The exporter itself exports nothing more (the backfill does): every view still shows it at the end.
        await().atMost(AWAIT).pollInterval(Duration.ofMillis(250)).untilAsserted(() ->
        {
            final Views views = Views.read();
            for (final int partitionId : LAST.keySet())
            {
                assertThat(views.acknowledged(partitionId)).as("partition %d: %s", partitionId, views)
                    .containsOnly(LAST.get(partitionId));
                assertThat(views.sent(partitionId)).as("partition %d: %s", partitionId, views)
                    .containsOnly(LAST.get(partitionId));
                assertThat(views.exporter(partitionId).get("lag").asLong()).isZero();
                assertThat(views.exporter(partitionId).get("state").asString()).isEqualTo("EXPORTING");
            }
        });
    }

    /** One read of every view, for positions per partition of the exporter {@code file}. */
    private record Views(JsonNode exporters, JsonNode exporting, Map<Integer, Double> metric,
                         Map<Integer, Double> sentMetric)
    {
        static Views read()
        {
            final Map<Integer, Double> metric = new TreeMap<>();
            final Map<Integer, Double> sentMetric = new TreeMap<>();
            final Matcher matcher = POSITION_METRIC.matcher(gateway.get("/actuator/prometheus").body());
            while (matcher.find())
            {
                (matcher.group(1).equals("position") ? metric : sentMetric)
                    .put(Integer.parseInt(matcher.group(2)), Double.parseDouble(matcher.group(3)));
            }
            return new Views(json(gateway.get("/actuator/exporters")), gateway.exporting(), metric,
                sentMetric);
        }

        JsonNode exporter(final int partitionId)
        {
            for (final JsonNode exporter : exporters.get("exporters").values())
            {
                if (exporter.get("id").asString().equals("file"))
                {
                    for (final JsonNode partition : exporter.get("partitions").values())
                    {
                        if (partition.get("partitionId").asInt() == partitionId)
                        {
                            return partition;
                        }
                    }
                }
            }
            throw new AssertionError("no exporter file on partition " + partitionId + ": " + exporters);
        }

        JsonNode leaderPair(final int partitionId)
        {
            for (final JsonNode pair : exporting.get("targets").values())
            {
                if (pair.get("partitionId").asInt() == partitionId && pair.get("role").asString().equals("LEADER"))
                {
                    return pair;
                }
            }
            throw new AssertionError("no leader of partition " + partitionId + ": " + exporting);
        }

        /** The acknowledged position as each view shows it: exporters view, exporting status, metric. */
        List<Long> acknowledged(final int partitionId)
        {
            final Double gauge = metric.get(partitionId);
            return List.of(exporter(partitionId).get("position").asLong(),
                leaderPair(partitionId).get("exportedPosition").asLong(),
                gauge == null ? -1 : gauge.longValue());
        }

        /** The position sent to the sink as each view has it: exporters view, exporting status, metric. */
        List<Long> sent(final int partitionId)
        {
            final JsonNode pair = leaderPair(partitionId);
            final JsonNode exporter = exporter(partitionId);
            final Double gauge = sentMetric.get(partitionId);
            return List.of(exporter.has("sentPosition") ? exporter.get("sentPosition").asLong() : -1,
                pair.has("sentPosition") && pair.get("sentPosition").isNumber() ? pair.get("sentPosition").asLong() : -1,
                gauge == null ? -1 : gauge.longValue());
        }

        @Override
        public String toString()
        {
            return "exporters " + exporters + ", exporting " + exporting + ", sluice_exporter_position " + metric +
                ", sluice_exporter_sent_position " + sentMetric;
        }
    }

    private static void write(final int records)
    {
        final StringBuilder body = new StringBuilder("[");
        for (int i = 0; i < records; i++)
        {
            body.append(i == 0 ? "" : ",").append("{\"payload\": {\"n\": ").append(i).append("}}");
        }
        final HttpResponse<String> response = gateway.write(body.append("]").toString());
        assertThat(response.statusCode()).as(response.body()).isEqualTo(200);
        for (final JsonNode written : json(response).values())
        {
            LAST.merge(written.get("partitionId").asInt(), written.get("position").asLong(), Math::max);
        }
    }

    private static boolean everyLastRecordExported()
    {
        return LAST.entrySet().stream().allMatch(last -> exports.exported(last.getKey(), last.getValue()));
    }

    private static HttpResponse<String> post(final String path)
    {
        return gateway.post(path, null);
    }
}
