package io.sluice.gateway.rebalance;

import io.sluice.gateway.broker.BrokerErrorException;
import io.sluice.gateway.exporting.ExportingControlService;
import io.sluice.gateway.exporting.FakeBrokerClient;
import io.sluice.gateway.exporting.FakeClusterTopology;
import io.sluice.protocol.codecs.ErrorCode;
import io.sluice.protocol.transport.PeerUnreachableException;
import io.sluice.protocol.transport.RequestTimeoutException;
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
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code POST /actuator/rebalance} over real HTTP on the management port, token-protected, with fake brokers behind
 * the service (the real-broker version is the qa {@code RollingRestartIT}).
 */
@SpringBootTest(
    classes = RebalanceHttpTest.FakeCluster.class,
    webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
    properties = {
        "management.server.port=0",
        "sluice.gateway.request-timeout=2s",
        "sluice.management.token=" + RebalanceHttpTest.TOKEN,
        "management.endpoint.health.group.readiness.include=readinessState" })
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class RebalanceHttpTest
{
    static final String TOKEN = "rebalance-token";
    private static final JsonMapper JSON = JsonMapper.builder().build();

    /** The rebalance service over a fake 3-broker, 6-partition, RF 3 cluster, plus Boot's auto-configuration. */
    @Configuration(proxyBeanMethods = false)
    @EnableAutoConfiguration
    @Import({RebalanceService.class, ExportingControlService.class})
    public static class FakeCluster
    {
        @Bean
        public FakeBrokerClient brokerClient()
        {
            return new FakeBrokerClient();
        }

        @Bean
        public FakeRebalanceClient rebalanceClient()
        {
            return new FakeRebalanceClient();
        }

        @Bean
        public FakeClusterTopology clusterTopology()
        {
            return FakeClusterTopology.threeBrokersSixPartitions();
        }
    }

    /** Answers as each broker is told to; by default every broker answers that the preferred broker leads. */
    static final class FakeRebalanceClient implements RebalanceClient
    {
        final List<String> calls = new CopyOnWriteArrayList<>();
        final Map<String, Function<Integer, CompletableFuture<RebalanceAnswer>>> answers = new ConcurrentHashMap<>();

        void reset()
        {
            calls.clear();
            answers.clear();
        }

        void answer(final int brokerId, final int partitionId, final Function<Integer, CompletableFuture<RebalanceAnswer>> answer)
        {
            answers.put(brokerId + ":" + partitionId, answer);
        }

        @Override
        public CompletableFuture<RebalanceAnswer> rebalance(
            final int brokerId, final int partitionId, final Duration transferTimeout, final Duration timeout)
        {
            calls.add(brokerId + ":" + partitionId);
            final Function<Integer, CompletableFuture<RebalanceAnswer>> answer = answers.get(brokerId + ":" + partitionId);
            final int preferred = (partitionId - 1) % 3;
            return answer != null ? answer.apply(preferred) :
                CompletableFuture.completedFuture(new RebalanceAnswer(partitionId, preferred, preferred, null));
        }
    }

    @LocalManagementPort
    private int managementPort;

    @Autowired
    private FakeRebalanceClient client;

    @Autowired
    private FakeClusterTopology topology;

    private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

    @BeforeEach
    void resetCluster()
    {
        client.reset();
        topology.reset();
        for (int p = 1; p <= 6; p++)
        {
            topology.leader(p, (p - 1) % 3);
        }
    }

    @Test
    void aPlainPostAnswers200WhenEveryPartitionIsOnItsPreferredBroker() throws Exception
    {
        final HttpResponse<String> response = post("/actuator/rebalance", null, true);

        assertThat(response.statusCode()).isEqualTo(200);
        assertThat(response.headers().firstValue("Content-Type")).hasValueSatisfying(type -> assertThat(type).startsWith("application/json"));
        final JsonNode body = JSON.readTree(response.body());
        assertThat(body.propertyNames()).containsExactly("operation", "result", "partitions");
        assertThat(body.get("operation").asString()).isEqualTo("REBALANCE");
        assertThat(body.get("result").asString()).isEqualTo("SUCCEEDED");
        assertThat(body.get("partitions").size()).isEqualTo(6);
        final JsonNode fourth = body.get("partitions").get(3);
        assertThat(fourth.propertyNames()).containsExactly("partitionId", "preferredBrokerId", "leaderId", "outcome");
        assertThat(fourth.get("partitionId").asInt()).isEqualTo(4);
        assertThat(fourth.get("preferredBrokerId").asInt()).isZero();
        assertThat(fourth.get("leaderId").asInt()).isZero();
        assertThat(fourth.get("outcome").asString()).isEqualTo("SUCCEEDED");
        assertThat(client.calls).containsExactlyInAnyOrder("0:1", "1:2", "2:3", "0:4", "1:5", "2:6");
    }

    @Test
    void aPartitionThatStaysAwayFromItsPreferredBrokerGives503WithTheLeadersReason() throws Exception
    {
        topology.leader(2, 2);
        client.answer(2, 2, (preferred) -> CompletableFuture.completedFuture(new RebalanceClient.RebalanceAnswer(
            2, preferred, 2, "broker 1 is catching up on partition 2 (commit index 10 of 400)")));

        final HttpResponse<String> response = post("/actuator/rebalance", null, true);

        assertThat(response.statusCode()).isEqualTo(503);
        final JsonNode body = JSON.readTree(response.body());
        assertThat(body.get("result").asString()).isEqualTo("FAILED");
        final JsonNode second = body.get("partitions").get(1);
        assertThat(second.get("preferredBrokerId").asInt()).isEqualTo(1);
        assertThat(second.get("leaderId").asInt()).isEqualTo(2);
        assertThat(second.get("outcome").asString()).isEqualTo("FAILED");
        assertThat(second.get("error").asString()).contains("catching up");
        assertThat(body.get("partitions").get(0).get("outcome").asString()).isEqualTo("SUCCEEDED");
    }

    @Test
    void aNotLeaderAnswerIsFollowedToTheLeaderItNames() throws Exception
    {
        topology.leader(1, 1);
        client.answer(1, 1, (preferred) -> CompletableFuture.failedFuture(
            new BrokerErrorException(ErrorCode.NOT_LEADER, 2, "partition 1 on broker 1: not leader (leader is 2)")));

        final HttpResponse<String> response = post("/actuator/rebalance", null, true);

        assertThat(response.statusCode()).isEqualTo(200);
        assertThat(client.calls).contains("1:1", "2:1").doesNotContain("0:1");
    }

    @Test
    void anUnreachableBrokerIsSkippedForTheNextReplicaAndATimeoutIsReported() throws Exception
    {
        topology.leader(3, 0);
        client.answer(0, 3, (preferred) -> CompletableFuture.failedFuture(new PeerUnreachableException("broker 0 down", null)));
        client.answer(2, 3, (preferred) -> CompletableFuture.failedFuture(new RequestTimeoutException("no answer")));

        final HttpResponse<String> response = post("/actuator/rebalance", null, true);

        assertThat(response.statusCode()).isEqualTo(503);
        final JsonNode third = JSON.readTree(response.body()).get("partitions").get(2);
        assertThat(third.get("outcome").asString()).isEqualTo("TIMED_OUT");
        assertThat(third.get("error").asString()).contains("broker 2");
        assertThat(client.calls).contains("0:3", "2:3");
    }

    @Test
    void withoutTheTokenTheCallIsRefusedWith401AndNothingIsSent() throws Exception
    {
        final HttpResponse<String> response = post("/actuator/rebalance", null, false);

        assertThat(response.statusCode()).isEqualTo(401);
        assertThat(JSON.readTree(response.body()).get("message").asString()).contains("Authorization: Bearer");
        assertThat(client.calls).isEmpty();
    }

    @Test
    void anUnknownQueryParameterOrABodyIsRefusedWith400AndNothingIsSent() throws Exception
    {
        final HttpResponse<String> query = post("/actuator/rebalance?partition=2", null, true);
        assertThat(query.statusCode()).isEqualTo(400);
        final JsonNode error = JSON.readTree(query.body());
        assertThat(error.propertyNames()).contains("error", "message");
        assertThat(error.get("message").asString()).contains("unknown query parameter 'partition'");

        final HttpResponse<String> body = post("/actuator/rebalance", "{\"partitions\": [2]}", true);
        assertThat(body.statusCode()).isEqualTo(400);
        assertThat(JSON.readTree(body.body()).get("message").asString()).contains("no request body");
        assertThat(client.calls).isEmpty();
    }

    private HttpResponse<String> post(final String path, final String body, final boolean withToken) throws Exception
    {
        final HttpRequest.Builder request = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + managementPort + path))
            .timeout(Duration.ofSeconds(30))
            .POST(body == null ? HttpRequest.BodyPublishers.noBody() : HttpRequest.BodyPublishers.ofString(body));
        if (body != null)
        {
            request.header("Content-Type", "application/json");
        }
        if (withToken)
        {
            request.header("Authorization", "Bearer " + TOKEN);
        }
        return http.send(request.build(), HttpResponse.BodyHandlers.ofString());
    }
}
