package io.sluice.gateway.backfill;

import io.sluice.gateway.exporting.ExportingControlService;
import io.sluice.gateway.exporting.FakeBrokerClient;
import io.sluice.protocol.codecs.BackfillState;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalManagementPort;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Import;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static io.sluice.gateway.backfill.FakeBackfillCluster.Kind.START;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * The backfill endpoints over real HTTP on the management port, with a scripted cluster behind the service.
 * End-to-end with real brokers needs the broker's wiring of io.sluice.broker.backfill (see the report).
 */
@SpringBootTest(
    classes = BackfillHttpTest.ScriptedCluster.class,
    webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
    properties = {
        "management.server.port=0",
        "sluice.backfill.max-tasks=8",
        "sluice.gateway.request-timeout=2s",
        "management.endpoint.health.group.readiness.include=readinessState" })
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class BackfillHttpTest
{
    private static final JsonMapper JSON = JsonMapper.builder().build();

    @Configuration(proxyBeanMethods = false)
    @EnableAutoConfiguration
    @Import({BackfillService.class, ExportingControlService.class})
    static class ScriptedCluster
    {
        @Bean
        FakeBackfillCluster cluster()
        {
            return new FakeBackfillCluster();
        }

        @Bean
        FakeBrokerClient brokerClient()
        {
            return new FakeBrokerClient(); // for the exporting controller, which shares the management server
        }
    }

    @LocalManagementPort
    private int managementPort;

    @Autowired
    private FakeBackfillCluster cluster;

    private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

    @BeforeEach
    void resetCluster()
    {
        cluster.reset();
    }

    @Test
    void aPlainPostResetsAndAnswers202WithTheBackfill() throws Exception
    {
        final HttpResponse<String> response = send("POST", "/actuator/exporters/file/resetToLatestAndBackfill");

        assertThat(response.statusCode()).as(response.body()).isEqualTo(202);
        assertThat(response.headers().firstValue("Content-Type")).hasValueSatisfying(t -> assertThat(t).startsWith("application/json"));
        final JsonNode body = JSON.readTree(response.body());
        assertThat(body.propertyNames()).startsWith("backfillId", "exporterId", "state").contains("ranges", "tasks");
        assertThat(body.get("ranges").size()).isEqualTo(6);
        final JsonNode range = body.get("ranges").get(0);
        assertThat(range.propertyNames()).containsExactly("partitionId", "fromPosition", "toPosition");
        assertThat(range.get("partitionId").asInt()).isEqualTo(1);
        assertThat(range.get("fromPosition").asLong()).isEqualTo(101);
        assertThat(range.get("toPosition").asLong()).isEqualTo(150);
        final JsonNode task = body.get("tasks").get(0);
        assertThat(task.propertyNames()).containsExactly("taskId", "partitionId", "state", "fromPosition", "toPosition",
            "exportedUpTo", "attempts", "progress");
        assertThat(cluster.sent(START)).isEqualTo(6);
    }

    @Test
    void badTaskCountsAre400WithAJsonErrorAndNothingIsSent() throws Exception
    {
        for (final String count : List.of("0", "-2", "abc", "9", "%20"))
        {
            final HttpResponse<String> response =
                send("POST", "/actuator/exporters/file/resetToLatestAndBackfill?backfillTaskCount=" + count);

            assertThat(response.statusCode()).as(count).isEqualTo(400);
            assertThat(error(response, "Bad Request")).contains("backfillTaskCount");
        }
        assertThat(error(send("POST", "/actuator/exporters/file/resetToLatestAndBackfill?backfillTaskCount=9"),
            "Bad Request")).contains("from 1 to 8 (sluice.backfill.max-tasks), was 9");
        assertThat(error(send("POST", "/actuator/exporters/file/resetToLatestAndBackfill?dryRun=maybe"),
            "Bad Request")).contains("dryRun must be true or false, was 'maybe'");
        assertThat(cluster.calls).isEmpty();
    }

    @Test
    void unknownExporterRunningBackfillAndLeaderlessPartitionAre404And409And503() throws Exception
    {
        final HttpResponse<String> unknown = send("POST", "/actuator/exporters/kafka/resetToLatestAndBackfill");
        assertThat(unknown.statusCode()).isEqualTo(404);
        assertThat(error(unknown, "Not Found")).contains("unknown exporter 'kafka'");

        cluster.hold(FakeBackfillCluster.task(2, "old", 1, BackfillState.RUNNING, 1, 10, 3));
        final HttpResponse<String> conflict = send("POST", "/actuator/exporters/file/resetToLatestAndBackfill");
        assertThat(conflict.statusCode()).isEqualTo(409);
        assertThat(error(conflict, "Conflict")).contains("backfill still running: old on partitions [2]");

        cluster.held.clear();
        cluster.leaders.remove(6);
        final HttpResponse<String> leaderless = send("POST", "/actuator/exporters/file/resetToLatestAndBackfill");
        assertThat(leaderless.statusCode()).isEqualTo(503);
        assertThat(error(leaderless, "Service Unavailable")).contains("partition 6 has no reachable leader");

        assertThat(cluster.sent(START)).isZero();
    }

    @Test
    void aDryRunAnswers200WithThePlanAndChangesNothing() throws Exception
    {
        final HttpResponse<String> response =
            send("POST", "/actuator/exporters/file/resetToLatestAndBackfill?backfillTaskCount=8&dryRun=true");

        assertThat(response.statusCode()).as(response.body()).isEqualTo(200);
        final JsonNode body = JSON.readTree(response.body());
        assertThat(body.get("dryRun").asBoolean()).isTrue();
        assertThat(body.get("backfillTaskCount").asInt()).isEqualTo(8);
        final JsonNode partition = body.get("partitions").get(0);
        assertThat(partition.get("oldPosition").asLong()).isEqualTo(100);
        assertThat(partition.get("newPosition").asLong()).isEqualTo(150);
        assertThat(body.get("ranges").size()).isEqualTo(6);
        assertThat(body.get("tasks").size()).isEqualTo(8);
        assertThat(cluster.sent(START)).isZero();
    }

    @Test
    void backfillsCanBeListedReadAndCancelled() throws Exception
    {
        final String id = JSON.readTree(send("POST", "/actuator/exporters/file/resetToLatestAndBackfill?backfillTaskCount=7")
            .body()).get("backfillId").asString();

        final HttpResponse<String> list = send("GET", "/actuator/backfills");
        assertThat(list.statusCode()).isEqualTo(200);
        assertThat(JSON.readTree(list.body()).get("backfills").get(0).get("backfillId").asString()).isEqualTo(id);

        final HttpResponse<String> one = send("GET", "/actuator/backfills/" + id);
        assertThat(one.statusCode()).isEqualTo(200);
        final JsonNode view = JSON.readTree(one.body());
        assertThat(view.get("state").asString()).isEqualTo("PENDING");
        assertThat(view.get("tasks").size()).isEqualTo(7);
        assertThat(view.get("progress").asDouble()).isZero();

        final HttpResponse<String> cancelled = send("DELETE", "/actuator/backfills/" + id);
        assertThat(cancelled.statusCode()).isEqualTo(200);
        assertThat(JSON.readTree(cancelled.body()).get("state").asString()).isEqualTo("CANCELLED");

        final HttpResponse<String> unknown = send("GET", "/actuator/backfills/nope");
        assertThat(unknown.statusCode()).isEqualTo(404);
        assertThat(error(unknown, "Not Found")).contains("unknown backfill 'nope'");
    }

    private HttpResponse<String> send(final String method, final String path) throws Exception
    {
        return http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + managementPort + path))
                .method(method, HttpRequest.BodyPublishers.noBody()).timeout(Duration.ofSeconds(20)).build(),
            HttpResponse.BodyHandlers.ofString());
    }

    private static String error(final HttpResponse<String> response, final String error)
    {
        final JsonNode body = JSON.readTree(response.body());
        assertThat(body.propertyNames()).as(response.body()).startsWith("error", "message");
        assertThat(body.get("error").asString()).isEqualTo(error);
        return body.get("message").asString();
    }
}
