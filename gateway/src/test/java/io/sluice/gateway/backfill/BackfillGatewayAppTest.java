package io.sluice.gateway.backfill;

import io.sluice.gateway.GatewayApplication;
import io.sluice.gateway.LoopbackBrokers;
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

/**
 * The backfill endpoints in the real gateway application (its own beans, the SBE client on the shared
 * transport) while no broker answers: every call says so instead of failing obscurely.
 */
@Timeout(value = 90, unit = TimeUnit.SECONDS)
class BackfillGatewayAppTest
{
    private static final JsonMapper JSON = JsonMapper.builder().build();
    private static final HttpClient HTTP = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

    private static ConfigurableApplicationContext gateway;
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
            "--sluice.gateway.request-timeout=1s",
            "--sluice.backfill.max-tasks=16");
        management = "http://127.0.0.1:" + gateway.getEnvironment().getProperty("local.management.port");
    }

    @AfterAll
    static void stop()
    {
        if (gateway != null)
        {
            gateway.close();
        }
    }

    @Test
    void theApplicationWiresTheServiceWithItsConfiguredMaximum()
    {
        assertThat(gateway.getBean(BackfillService.class).maxTasks()).isEqualTo(16);
        assertThat(gateway.getBean(BackfillClient.class)).isInstanceOf(SbeBackfillClient.class);
    }

    @Test
    void withoutBrokersAResetIs503AndNothingIsSent() throws Exception
    {
        final HttpResponse<String> response = send("POST", "/actuator/exporters/file/resetToLatestAndBackfill");

        assertThat(response.statusCode()).as(response.body()).isEqualTo(503);
        final JsonNode body = JSON.readTree(response.body());
        assertThat(body.get("error").asString()).isEqualTo("Service Unavailable");
        assertThat(body.get("message").asString()).contains("no broker is reachable");

        final HttpResponse<String> tooMany =
            send("POST", "/actuator/exporters/file/resetToLatestAndBackfill?backfillTaskCount=17");
        assertThat(tooMany.statusCode()).isEqualTo(400);
    }

    @Test
    void withoutBrokersTheListNamesEveryPartitionUnavailable() throws Exception
    {
        final HttpResponse<String> response = send("GET", "/actuator/backfills");

        assertThat(response.statusCode()).isEqualTo(200);
        final JsonNode body = JSON.readTree(response.body());
        assertThat(body.get("backfills").size()).isZero();
        assertThat(body.get("unavailablePartitions").size()).isEqualTo(6);
        assertThat(send("GET", "/actuator/backfills/bf-1").statusCode()).isEqualTo(503);
    }

    private static HttpResponse<String> send(final String method, final String path) throws Exception
    {
        return HTTP.send(HttpRequest.newBuilder(URI.create(management + path))
                .method(method, HttpRequest.BodyPublishers.noBody()).timeout(Duration.ofSeconds(20)).build(),
            HttpResponse.BodyHandlers.ofString());
    }
}
