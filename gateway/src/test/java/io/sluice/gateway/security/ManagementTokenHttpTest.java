package io.sluice.gateway.security;

import io.sluice.gateway.exporting.ExportingHttpTest;
import io.sluice.gateway.exporting.FakeBrokerClient;
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

@SpringBootTest(
    classes = ExportingHttpTest.FakeCluster.class,
    webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
    properties = {
        "management.server.port=0",
        "management.server.address=0.0.0.0",
        "sluice.management.token=s3cret-token",
        "management.endpoint.health.group.readiness.include=readinessState" })
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class ManagementTokenHttpTest
{
    private static final String TOKEN = "s3cret-token";
    private static final JsonMapper JSON = JsonMapper.builder().build();

    @LocalManagementPort
    private int managementPort;

    @Autowired
    private FakeBrokerClient client;

    private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

    @BeforeEach
    void resetCluster()
    {
        client.reset();
    }

    @Test
    void aMutatingCallWithoutTheTokenIs401AndSendsNothing() throws Exception
    {
        final HttpResponse<String> response = post("/actuator/exporting/pause");

        assertThat(response.statusCode()).isEqualTo(401);
        assertThat(response.headers().firstValue("Content-Type")).hasValueSatisfying(type -> assertThat(type).startsWith("application/json"));
        final JsonNode body = JSON.readTree(response.body());
        assertThat(body.propertyNames()).containsExactly("error", "message");
        assertThat(body.get("error").asString()).isEqualTo("Unauthorized");
        assertThat(body.get("message").asString()).contains("Authorization: Bearer").contains("sluice.management.token");
        assertThat(client.calls).isEmpty();
    }

    @Test
    void aWrongTokenOrSchemeIs401AndTheTokenIsNeverEchoed() throws Exception
    {
        for (final String authorization : new String[] { "Bearer wrong", "Bearer " + TOKEN + "x", "Basic " + TOKEN, "Bearer", TOKEN })
        {
            final HttpResponse<String> response = post("/actuator/exporting/resume", "Authorization", authorization);
            assertThat(response.statusCode()).as(authorization).isEqualTo(401);
            assertThat(response.body()).doesNotContain(TOKEN).contains("\"error\":\"Unauthorized\"");
        }
        assertThat(client.calls).isEmpty();
    }

    @Test
    void theRightTokenIsAccepted() throws Exception
    {
        assertThat(post("/actuator/exporting/pause", "Authorization", "Bearer " + TOKEN).statusCode()).isEqualTo(200);
        assertThat(post("/actuator/exporting/resume", "Authorization", "bearer " + TOKEN).statusCode()).isEqualTo(200);
        assertThat(client.calls).hasSize(36);
    }

    @Test
    void readsNeedNoToken() throws Exception
    {
        final HttpResponse<String> status = http.send(
            HttpRequest.newBuilder(management("/actuator/exporting")).GET().build(), HttpResponse.BodyHandlers.ofString());

        assertThat(status.statusCode()).isEqualTo(200);
    }

    @Test
    void healthShowsComponentDetailsOnlyToTheTokenHolder() throws Exception
    {
        final HttpResponse<String> anonymous = http.send(
            HttpRequest.newBuilder(management("/actuator/health")).GET().build(), HttpResponse.BodyHandlers.ofString());
        final HttpResponse<String> wrongToken = http.send(HttpRequest.newBuilder(management("/actuator/health"))
            .header("Authorization", "Bearer wrong").GET().build(), HttpResponse.BodyHandlers.ofString());
        final HttpResponse<String> operator = http.send(HttpRequest.newBuilder(management("/actuator/health"))
            .header("Authorization", "Bearer " + TOKEN).GET().build(), HttpResponse.BodyHandlers.ofString());

        assertThat(anonymous.statusCode()).isEqualTo(operator.statusCode());
        assertThat(JSON.readTree(anonymous.body()).propertyNames()).contains("status").doesNotContain("components");
        assertThat(anonymous.body()).doesNotContain("diskSpace").doesNotContain("\"path\"");
        assertThat(JSON.readTree(wrongToken.body()).propertyNames()).contains("status").doesNotContain("components");
        assertThat(operator.body()).contains("\"components\"").contains("diskSpace").contains("\"path\"");
    }

    @Test
    void everyMutatingMethodOnTheManagementPortIsGuarded() throws Exception
    {
        for (final String method : new String[] { "PUT", "PATCH", "DELETE" })
        {
            final HttpResponse<String> response = http.send(
                HttpRequest.newBuilder(management("/actuator/exporting/pause")).method(method, HttpRequest.BodyPublishers.noBody()).build(),
                HttpResponse.BodyHandlers.ofString());
            assertThat(response.statusCode()).as(method).isEqualTo(401);
        }
    }

    private HttpResponse<String> post(final String path, final String... headers) throws Exception
    {
        final HttpRequest.Builder request = HttpRequest.newBuilder(management(path))
            .timeout(Duration.ofSeconds(30))
            .POST(HttpRequest.BodyPublishers.noBody());
        if (headers.length > 0)
        {
            request.headers(headers);
        }
        return http.send(request.build(), HttpResponse.BodyHandlers.ofString());
    }

    private URI management(final String path)
    {
        return URI.create("http://127.0.0.1:" + managementPort + path);
    }
}
