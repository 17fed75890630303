package io.sluice.gateway.security;

import io.sluice.gateway.exporting.ExportingHttpTest;
import io.sluice.gateway.exporting.FakeBrokerClient;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/** With the management API on the client port, the actuator paths keep their token check and nothing else gets it. */
@SpringBootTest(
    classes = ExportingHttpTest.FakeCluster.class,
    webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
    properties = {
        "management.server.port=",
        "sluice.management.token=shared-port-token",
        "management.endpoint.health.group.readiness.include=readinessState" })
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class SharedPortManagementTest
{
    @LocalServerPort
    private int port;

    @Autowired
    private FakeBrokerClient client;

    private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

    @BeforeEach
    void resetCluster()
    {
        client.reset();
    }

    @Test
    void exportingControlIsServedUnderTheActuatorPathAndGuarded() throws Exception
    {
        assertThat(post("/actuator/exporting/pause", null).statusCode()).isEqualTo(401);
        assertThat(client.calls).isEmpty();

        final HttpResponse<String> authorised = post("/actuator/exporting/pause", "Bearer shared-port-token");

        assertThat(authorised.statusCode()).isEqualTo(200);
        assertThat(client.calls).hasSize(18);
    }

    @Test
    void pathsOutsideTheActuatorAreNotGuarded() throws Exception
    {
        final HttpResponse<String> response = post("/v1/not-management", null);

        assertThat(response.statusCode()).isNotEqualTo(401);
    }

    private HttpResponse<String> post(final String path, final String authorization) throws Exception
    {
        final HttpRequest.Builder request = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
            .timeout(Duration.ofSeconds(30))
            .POST(HttpRequest.BodyPublishers.noBody());
        if (authorization != null)
        {
            request.header("Authorization", authorization);
        }
        return http.send(request.build(), HttpResponse.BodyHandlers.ofString());
    }
}
