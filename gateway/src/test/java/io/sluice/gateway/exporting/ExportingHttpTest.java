package io.sluice.gateway.exporting;

import io.sluice.gateway.broker.BrokerErrorException;
import io.sluice.protocol.cluster.PartitionReplica;
import io.sluice.protocol.cluster.PartitionStatus;
import io.sluice.protocol.codecs.AdminRequestKind;
import io.sluice.protocol.codecs.ErrorCode;
import io.sluice.protocol.codecs.ExportingState;
import io.sluice.protocol.codecs.PartitionRole;
import io.sluice.protocol.transport.RequestTimeoutException;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalManagementPort;
import org.springframework.boot.test.web.server.LocalServerPort;
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
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The exporting endpoints over real HTTP on the management port, with a fake cluster behind the service
 * (the real-broker version is {@code ExportingClusterIT}).
 */
@SpringBootTest(
    classes = ExportingHttpTest.FakeCluster.class,
    webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
    properties = {
        "management.server.port=0",
        "sluice.gateway.request-timeout=2s",
        "management.endpoint.health.group.readiness.include=readinessState" })
@Timeout(value = 60, unit = TimeUnit.SECONDS)
public class ExportingHttpTest
{
    private static final JsonMapper JSON = JsonMapper.builder().build();

    /** The exporting service over a fake 3-broker, 6-partition, RF 3 cluster, plus Boot's auto-configuration. */
    @Configuration(proxyBeanMethods = false)
    @EnableAutoConfiguration
    @Import(ExportingControlService.class)
    public static class FakeCluster
    {
        @Bean
        public FakeBrokerClient brokerClient()
        {
            return new FakeBrokerClient();
        }

        @Bean
        public FakeClusterTopology clusterTopology()
        {
            return FakeClusterTopology.threeBrokersSixPartitions();
        }
    }

    @LocalManagementPort
    private int managementPort;

    @LocalServerPort
    private int serverPort;

    @Autowired
    private FakeBrokerClient client;

    @Autowired
    private FakeClusterTopology topology;

    private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

    @BeforeEach
    void resetCluster()
    {
        client.reset();
        topology.reset();
    }

    @Test
    void aPlainPostWithoutBodyOrContentTypePausesEveryPair() throws Exception
    {
        final HttpResponse<String> response = post("/actuator/exporting/pause", null);

        assertThat(response.statusCode()).isEqualTo(200);
        assertThat(response.headers().firstValue("Content-Type")).hasValueSatisfying(type -> assertThat(type).startsWith("application/json"));
        final JsonNode body = JSON.readTree(response.body());
        assertThat(body.propertyNames()).containsExactly("operation", "result", "targets");
        assertThat(body.get("operation").asString()).isEqualTo("PAUSE");
        assertThat(body.get("result").asString()).isEqualTo("SUCCEEDED");
        assertThat(body.get("targets").size()).isEqualTo(18);
        final JsonNode first = body.get("targets").get(0);
        assertThat(first.propertyNames()).containsExactly("brokerId", "partitionId", "outcome");
        assertThat(first.get("brokerId").asInt()).isEqualTo(0);
        assertThat(first.get("partitionId").asInt()).isEqualTo(1);
        assertThat(first.get("outcome").asString()).isEqualTo("SUCCEEDED");
        assertThat(client.calls).hasSize(18).allSatisfy(call -> assertThat(call.kind()).isEqualTo(AdminRequestKind.PAUSE_EXPORTING));
    }

    @Test
    void softPauseAndResumeWorkWithPlainPosts() throws Exception
    {
        final HttpResponse<String> soft = post("/actuator/exporting/pause?soft=true", null);
        assertThat(soft.statusCode()).isEqualTo(200);
        assertThat(JSON.readTree(soft.body()).get("operation").asString()).isEqualTo("SOFT_PAUSE");

        final HttpResponse<String> resume = post("/actuator/exporting/resume", null);
        assertThat(resume.statusCode()).isEqualTo(200);
        assertThat(JSON.readTree(resume.body()).get("operation").asString()).isEqualTo("RESUME");

        assertThat(client.calls).extracting(FakeBrokerClient.AdminCall::kind)
            .containsOnly(AdminRequestKind.SOFT_PAUSE_EXPORTING, AdminRequestKind.RESUME_EXPORTING)
            .hasSize(36);
    }

    @Test
    void aBodyNarrowsTheTargetsWhateverItsContentType() throws Exception
    {
        final String body = "{\"targets\": [{\"brokerId\": 2, \"partitionId\": 4}, {\"brokerId\": 1, \"partitionId\": 5}]}";

        final HttpResponse<String> json = post("/actuator/exporting/resume", body, "Content-Type", "application/json");
        final HttpResponse<String> untyped = post("/actuator/exporting/resume", body);

        for (final HttpResponse<String> response : List.of(json, untyped))
        {
            assertThat(response.statusCode()).isEqualTo(200);
            assertThat(JSON.readTree(response.body()).get("targets").size()).isEqualTo(2);
        }
        assertThat(client.calls).extracting(FakeBrokerClient.AdminCall::target)
            .containsOnly(new PartitionReplica(2, 4), new PartitionReplica(1, 5)).hasSize(4);
    }

    @Test
    void aJsonBodySentAsAFormByCurlDashDStillNarrowsTheTargets() throws Exception
    {
        // curl -X POST url -d '{...}' sends Content-Type: application/x-www-form-urlencoded.
        final String body = "{\"targets\": [{\"brokerId\": 0, \"partitionId\": 1}]}";

        final HttpResponse<String> resume = post("/actuator/exporting/resume", body, "Content-Type", "application/x-www-form-urlencoded");
        final HttpResponse<String> soft = post("/actuator/exporting/pause?soft=true", body, "Content-Type", "application/x-www-form-urlencoded");

        assertThat(resume.statusCode()).as(resume.body()).isEqualTo(200);
        assertThat(soft.statusCode()).as(soft.body()).isEqualTo(200);
        assertThat(JSON.readTree(soft.body()).get("operation").asString()).isEqualTo("SOFT_PAUSE");
        assertThat(client.calls).extracting(FakeBrokerClient.AdminCall::target).containsOnly(new PartitionReplica(0, 1)).hasSize(2);
    }

    @Test
    void malformedOrUnknownTargetsAre400WithAJsonErrorAndNothingIsSent() throws Exception
    {
        final List<String> bodies = List.of(
            "{\"targets\": [",
            "{\"targets\": []}",
            "{\"targets\": [{\"brokerId\": \"one\", \"partitionId\": 4}]}",
            "{\"target\": [{\"brokerId\": 1, \"partitionId\": 4}]}",
            "{\"targets\": [{\"brokerId\": 7, \"partitionId\": 4}]}",
            "{\"targets\": [{\"brokerId\": 1, \"partitionId\": 0}]}");

        for (final String body : bodies)
        {
            final HttpResponse<String> response = post("/actuator/exporting/pause", body, "Content-Type", "application/json");
            assertThat(response.statusCode()).as(body).isEqualTo(400);
            assertThat(assertError(response, "Bad Request")).as(body).doesNotContain("Source:", "#UNKNOWN");
        }
        final HttpResponse<String> truncated = post("/actuator/exporting/pause", bodies.get(0), "Content-Type", "application/json");
        assertThat(assertError(truncated, "Bad Request"))
            .isEqualTo("malformed JSON body: Unexpected end-of-input: expected close marker for Array (line 1, column 14)");
        final HttpResponse<String> badSoft = post("/actuator/exporting/pause?soft=maybe", null);
        assertThat(badSoft.statusCode()).isEqualTo(400);
        assertThat(assertError(badSoft, "Bad Request")).contains("soft must be true or false, was 'maybe'");
        assertThat(client.calls).isEmpty();
    }

    @Test
    void anyFailedPairIs503NamingIt() throws Exception
    {
        topology.unreachable(2);
        client.respondWith(call -> call.target().equals(new PartitionReplica(1, 3)) ?
            CompletableFuture.failedFuture(new RequestTimeoutException("deadline")) :
            call.target().equals(new PartitionReplica(0, 5)) ?
                CompletableFuture.failedFuture(new BrokerErrorException(ErrorCode.NOT_LEADER, 1, "not leader")) :
                FakeBrokerClient.applied(call));

        final HttpResponse<String> response = post("/actuator/exporting/pause", null);

        assertThat(response.statusCode()).isEqualTo(503);
        final JsonNode body = JSON.readTree(response.body());
        assertThat(body.get("result").asString()).isEqualTo("FAILED");
        final List<String> errors = new ArrayList<>();
        for (final JsonNode target : body.get("targets").values())
        {
            if (!target.get("outcome").asString().equals("SUCCEEDED"))
            {
                errors.add(target.get("outcome").asString() + " " + target.get("error").asString());
            }
            else
            {
                assertThat(target.has("error")).isFalse();
            }
        }
        assertThat(errors).hasSize(8)
            .contains("FAILED broker 2 unreachable", "FAILED partition 5 on broker 0: not leader (leader is 1)")
            .anySatisfy(error -> assertThat(error).startsWith("TIMED_OUT partition 3 on broker 1: no answer within 2000 ms"));
    }

    @Test
    void onlyTimeoutsAre504() throws Exception
    {
        client.respondWith(call -> call.target().brokerId() == 0 ?
            CompletableFuture.failedFuture(new RequestTimeoutException("deadline")) : FakeBrokerClient.applied(call));

        final HttpResponse<String> response = post("/actuator/exporting/resume", null);

        assertThat(response.statusCode()).isEqualTo(504);
        assertThat(JSON.readTree(response.body()).get("result").asString()).isEqualTo("TIMED_OUT");
    }

    @Test
    void statusShowsEveryPairAndTheCommonState() throws Exception
    {
        for (final PartitionReplica replica : topology.distribution().replicas())
        {
            topology.report(replica, new PartitionStatus(replica.partitionId(), PartitionRole.FOLLOWER, 1, 0,
                ExportingState.PAUSED, 1, 240, 118, Map.of("file", 118L)));
        }

        final HttpResponse<String> response = get("/actuator/exporting");

        assertThat(response.statusCode()).isEqualTo(200);
        final JsonNode body = JSON.readTree(response.body());
        assertThat(body.get("state").asString()).isEqualTo("PAUSED");
        assertThat(body.get("targets").size()).isEqualTo(18);
        assertThat(body.get("targets").get(0).propertyNames())
            .containsExactly("brokerId", "partitionId", "role", "state", "exportedPosition", "sentPosition", "lastPosition",
                "pausedSince", "expiresAt", "leaseExpiredAt");
        assertThat(body.get("targets").get(0).get("exportedPosition").asLong()).isEqualTo(118);
        assertThat(body.get("targets").get(0).get("sentPosition").isNull()).as("a follower sends nothing").isTrue();

        topology.unreachable(1);
        assertThat(JSON.readTree(get("/actuator/exporting").body()).get("state").asString()).isEqualTo("MIXED");
    }

    @Test
    void managementErrorsAreJson() throws Exception
    {
        final HttpResponse<String> missing = get("/actuator/no-such-thing");
        assertThat(missing.statusCode()).isEqualTo(404);
        assertError(missing, "Not Found");

        final HttpResponse<String> wrongMethod = http.send(
            HttpRequest.newBuilder(management("/actuator/exporting/pause")).GET().build(), HttpResponse.BodyHandlers.ofString());
        assertThat(wrongMethod.statusCode()).isEqualTo(405);
        assertError(wrongMethod, "Method Not Allowed");
    }

    @Test
    void theEndpointsLiveOnTheManagementPortOnly() throws Exception
    {
        final HttpResponse<String> onClientPort = http.send(
            HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + serverPort + "/actuator/exporting/pause"))
                .POST(HttpRequest.BodyPublishers.noBody()).build(),
            HttpResponse.BodyHandlers.ofString());

        assertThat(onClientPort.statusCode()).isEqualTo(404);
        assertThat(client.calls).isEmpty();
        assertThat(get("/actuator/health").statusCode()).isEqualTo(200);
    }

    private String assertError(final HttpResponse<String> response, final String error)
    {
        assertThat(response.headers().firstValue("Content-Type")).hasValueSatisfying(type -> assertThat(type).startsWith("application/json"));
        final JsonNode body = JSON.readTree(response.body());
        assertThat(body.propertyNames()).as(response.body()).containsExactly("error", "message");
        assertThat(body.get("error").asString()).isEqualTo(error);
        assertThat(body.get("message").asString()).isNotBlank();
        return body.get("message").asString();
    }

    private HttpResponse<String> post(final String path, final String body, final String... headers) throws Exception
    {
        final HttpRequest.Builder request = HttpRequest.newBuilder(management(path))
            .timeout(Duration.ofSeconds(30))
            .POST(body == null ? HttpRequest.BodyPublishers.noBody() : HttpRequest.BodyPublishers.ofString(body));
        if (headers.length > 0)
        {
            request.headers(headers);
        }
        return http.send(request.build(), HttpResponse.BodyHandlers.ofString());
    }

    private HttpResponse<String> get(final String path) throws Exception
    {
        return http.send(HttpRequest.newBuilder(management(path)).timeout(Duration.ofSeconds(30)).GET().build(),
            HttpResponse.BodyHandlers.ofString());
    }

    private URI management(final String path)
    {
        return URI.create("http://127.0.0.1:" + managementPort + path);
    }
}
