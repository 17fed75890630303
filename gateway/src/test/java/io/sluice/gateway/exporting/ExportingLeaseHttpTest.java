package io.sluice.gateway.exporting;

import io.sluice.protocol.codecs.AdminRequestKind;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalManagementPort;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/** The {@code lease} of a pause and {@code sluice.exporting.max-pause}, over real HTTP, with a fake cluster behind. */
@SpringBootTest(
    classes = ExportingHttpTest.FakeCluster.class,
    webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
    properties = {
        "management.server.port=0",
        "sluice.gateway.request-timeout=2s",
        "sluice.exporting.max-pause=PT1H",
        "management.endpoint.health.group.readiness.include=readinessState" })
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class ExportingLeaseHttpTest
{
    private static final JsonMapper JSON = JsonMapper.builder().build();

    @LocalManagementPort
    private int managementPort;

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
    void aPauseWithALeaseSendsTheLeaseToEveryPair() throws Exception
    {
        final HttpResponse<String> response = post("/actuator/exporting/pause?lease=PT30M");

        assertThat(response.statusCode()).isEqualTo(200);
        assertThat(client.calls).hasSize(18).allSatisfy((call) ->
        {
            assertThat(call.kind()).isEqualTo(AdminRequestKind.PAUSE_EXPORTING);
            assertThat(call.operation().leaseMicros()).isEqualTo(Duration.ofMinutes(30).toNanos() / 1000);
        });
    }

    @Test
    void aSoftPauseTakesALeaseToo() throws Exception
    {
        final HttpResponse<String> response = post("/actuator/exporting/pause?soft=true&lease=PT3S");

        assertThat(response.statusCode()).isEqualTo(200);
        assertThat(client.calls).hasSize(18).allSatisfy((call) ->
        {
            assertThat(call.kind()).isEqualTo(AdminRequestKind.SOFT_PAUSE_EXPORTING);
            assertThat(call.operation().leaseMicros()).isEqualTo(3_000_000L);
        });
    }

    @Test
    void aPauseWithoutLeaseGetsMaxPauseAndAResumeNone() throws Exception
    {
        assertThat(post("/actuator/exporting/pause").statusCode()).isEqualTo(200);
        assertThat(post("/actuator/exporting/resume").statusCode()).isEqualTo(200);

        final java.util.List<FakeBrokerClient.AdminCall> calls = java.util.List.copyOf(client.calls);
        assertThat(calls).hasSize(36);
        assertThat(calls.subList(0, 18)).allSatisfy((call) ->
            assertThat(call.operation().leaseMicros()).isEqualTo(Duration.ofHours(1).toNanos() / 1000));
        assertThat(calls.subList(18, 36)).allSatisfy((call) -> assertThat(call.operation().leaseMicros()).isZero());
    }

    @Test
    void aLeaseThatIsNotADurationIsRefusedNamingTheParameterAndNothingIsPaused() throws Exception
    {
        assertRefused("/actuator/exporting/pause?lease=soon", "lease must be an ISO-8601 duration such as PT30M, was 'soon'");
        assertRefused("/actuator/exporting/pause?lease=", "lease must be an ISO-8601 duration");
        assertRefused("/actuator/exporting/pause?soft=true&lease=30m", "lease must be an ISO-8601 duration");
    }

    @Test
    void aZeroOrNegativeLeaseIsRefusedAndNothingIsPaused() throws Exception
    {
        assertRefused("/actuator/exporting/pause?lease=PT0S", "lease must be a positive ISO-8601 duration");
        assertRefused("/actuator/exporting/pause?lease=-PT5M", "lease must be a positive ISO-8601 duration");
    }

    @Test
    void aLeaseAboveMaxPauseIsRefusedAndNothingIsPaused() throws Exception
    {
        assertRefused("/actuator/exporting/pause?lease=PT1H1S", "lease PT1H1S is longer than sluice.exporting.max-pause (PT1H)");
    }

    private void assertRefused(final String path, final String message) throws Exception
    {
        final HttpResponse<String> response = post(path);

        assertThat(response.statusCode()).as(path).isEqualTo(400);
        final JsonNode body = JSON.readTree(response.body());
        assertThat(body.toString()).as(path).contains(message).contains("nothing was paused");
        assertThat(client.calls).as("nothing sent for " + path).isEmpty();
    }

    private HttpResponse<String> post(final String path) throws Exception
    {
        return http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + managementPort + path))
            .POST(HttpRequest.BodyPublishers.noBody()).timeout(Duration.ofSeconds(20)).build(),
            HttpResponse.BodyHandlers.ofString());
    }
}
