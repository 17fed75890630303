package io.sluice.gateway;

import io.sluice.testing.QuietPeriod;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/** A gateway whose brokers are all down keeps running, says so, and answers writes 503 at the deadline. */
@Timeout(value = 2, unit = TimeUnit.MINUTES)
class GatewayWithoutBrokersIT
{
    private static final JsonMapper JSON = JsonMapper.builder().build();
    private static final HttpClient HTTP = HttpClient.newHttpClient();

    private static ConfigurableApplicationContext gateway;
    private static String api;
    private static String management;

    @BeforeAll
    static void startGateway() throws IOException
    {
        // Free ports with nothing listening: no broker runs while the test does.
        final String brokers = LoopbackBrokers.brokerList(3);
        gateway = new SpringApplicationBuilder(GatewayApplication.class).run(
            "--server.port=0",
            "--management.server.port=0",
            "--management.server.address=127.0.0.1",
            "--sluice.cluster.brokers=" + brokers,
            "--sluice.gateway.request-timeout=1s");
        api = "http://127.0.0.1:" + gateway.getEnvironment().getProperty("local.server.port");
        management = "http://127.0.0.1:" + gateway.getEnvironment().getProperty("local.management.port");
    }

    @AfterAll
    static void stop()
    {
        gateway.close();
    }

    @Test
    void livenessIsUpAndReadinessDownWhileNoBrokerAnswers() throws Exception
    {
        assertThat(get(management + "/actuator/health/liveness").statusCode()).isEqualTo(200);
        final HttpResponse<String> readiness = get(management + "/actuator/health/readiness");
        assertThat(readiness.statusCode()).isEqualTo(503);
        assertThat(readiness.body()).contains("partitionsWithoutLeader");
    }

    @Test
    void partitionsListEveryPairOfTheDistributionAsUnknown() throws Exception
    {
        QuietPeriod.of(Duration.ofSeconds(1), "the topology polls the absent brokers: still nothing known");
        final JsonNode view = JSON.readTree(get(management + "/actuator/partitions").body());

        assertThat(view.get("brokers").size()).isEqualTo(3);
        assertThat(view.get("brokers").get(1).get("reachable").asBoolean()).isFalse();
        assertThat(view.get("partitions").size()).isEqualTo(6);
        int pairs = 0;
        for (final JsonNode partition : view.get("partitions"))
        {
            assertThat(partition.get("leaderId").asInt()).isEqualTo(-1);
            assertThat(partition.get("health").asString()).isEqualTo("UNAVAILABLE");
            for (final JsonNode replica : partition.get("replicas"))
            {
                pairs++;
                assertThat(replica.get("role").asString()).isEqualTo("UNKNOWN");
                assertThat(replica.get("reachable").asBoolean()).isFalse();
            }
        }
        assertThat(pairs).isEqualTo(18);
    }

    @Test
    void writeWithoutLeaderIs503WithinTheRequestTimeout() throws Exception
    {
        final long started = System.nanoTime();
        final HttpResponse<String> response = HTTP.send(HttpRequest.newBuilder(URI.create(api + "/v1/records"))
            .POST(HttpRequest.BodyPublishers.ofString("{\"key\": \"k\", \"payload\": {\"a\": 1}}")).build(),
            HttpResponse.BodyHandlers.ofString());

        assertThat(response.statusCode()).isEqualTo(503);
        final JsonNode body = JSON.readTree(response.body());
        assertThat(body.get("error").asString()).isEqualTo("unavailable");
        assertThat(body.get("message").asString()).contains("partition");
        assertThat(Duration.ofNanos(System.nanoTime() - started)).isLessThan(Duration.ofSeconds(10));
    }

    @Test
    void formTypedBodyFromBareCurlIsReadAsJson() throws Exception
    {
        // curl -d sends application/x-www-form-urlencoded: the body must still be parsed as the JSON it is.
        final HttpResponse<String> response = HTTP.send(HttpRequest.newBuilder(URI.create(api + "/v1/records"))
            .header("content-type", "application/x-www-form-urlencoded")
            .POST(HttpRequest.BodyPublishers.ofString("{\"key\":\"k\",\"payload\":{\"a\":\"x%20y\"}}")).build(),
            HttpResponse.BodyHandlers.ofString());

        assertThat(response.statusCode()).as(response.body()).isEqualTo(503);
    }

    @Test
    void unknownPathAnswersJsonErrorWithMessage() throws Exception
    {
        final HttpResponse<String> response = get(api + "/v1/nothing");
        assertThat(response.statusCode()).isEqualTo(404);
        final JsonNode body = JSON.readTree(response.body());
        assertThat(body.has("error")).isTrue();
    }

    private static HttpResponse<String> get(final String url) throws Exception
    {
        return HTTP.send(HttpRequest.newBuilder(URI.create(url)).GET().build(), HttpResponse.BodyHandlers.ofString());
    }
}
