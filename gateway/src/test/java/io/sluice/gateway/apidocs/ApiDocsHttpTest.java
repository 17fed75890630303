package io.sluice.gateway.apidocs;

import io.sluice.gateway.exporting.ExportingHttpTest;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalManagementPort;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Import;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The OpenAPI document over real HTTP on both ports: the same bytes as {@code docs/openapi.json}, and every
 * endpoint the contract promises (§2 client API, §3 management API) described with its parameters and answers.
 * <p>
 * After changing the API, edit {@code gateway/src/main/resources/io/sluice/gateway/apidocs/openapi.json} and
 * regenerate the repository copy with
 * {@code mvn -pl gateway -am test -Dtest=ApiDocsHttpTest -Dsurefire.failIfNoSpecifiedTests=false -Dsluice.openapi.write=true}.
 */
@SpringBootTest(
    classes = ApiDocsHttpTest.Gateway.class,
    webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
    properties = {
        "management.server.port=0",
        "management.endpoint.health.group.readiness.include=readinessState" })
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class ApiDocsHttpTest
{
    static final String WRITE_PROPERTY = "sluice.openapi.write";
    private static final Path REPOSITORY_COPY = Path.of("..", "docs", "openapi.json");
    private static final JsonMapper JSON = JsonMapper.builder().build();

    /** The exporting fake cluster of {@link ExportingHttpTest}, plus the client port's document controller. */
    @Configuration(proxyBeanMethods = false)
    @Import({ ExportingHttpTest.FakeCluster.class, ClientApiDocsController.class })
    static class Gateway
    {
    }

    @LocalManagementPort
    private int managementPort;

    @LocalServerPort
    private int serverPort;

    private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

    @Test
    void bothPortsServeTheDocumentKeptInTheRepository() throws Exception
    {
        final HttpResponse<String> client = get(serverPort, "/v3/api-docs");
        final HttpResponse<String> management = get(managementPort, "/v3/api-docs");
        if (Boolean.getBoolean(WRITE_PROPERTY))
        {
            Files.writeString(REPOSITORY_COPY, client.body(), StandardCharsets.UTF_8);
        }

        assertThat(client.statusCode()).isEqualTo(200);
        assertThat(client.headers().firstValue("Content-Type")).hasValueSatisfying(type -> assertThat(type).startsWith("application/json"));
        assertThat(management.statusCode()).isEqualTo(200);
        assertThat(management.body()).isEqualTo(client.body());
        assertThat(client.body())
            .as("docs/openapi.json differs from the served document; regenerate it with -D" + WRITE_PROPERTY + "=true")
            .isEqualTo(Files.readString(REPOSITORY_COPY, StandardCharsets.UTF_8));
        assertThat(JSON.readTree(client.body()).path("openapi").asString()).startsWith("3.");
    }

    @Test
    void everyEndpointOfTheContractIsDescribed() throws Exception
    {
        final JsonNode paths = document().path("paths");
        final List<String> missing = new ArrayList<>();
        for (final String endpoint : List.of(
            "post /v1/records",
            "post /actuator/exporting/pause", "post /actuator/exporting/resume", "get /actuator/exporting",
            "get /actuator/exporters", "post /actuator/exporters/{exporterId}/resetToLatestAndBackfill",
            "get /actuator/backfills", "get /actuator/backfills/{backfillId}", "delete /actuator/backfills/{backfillId}",
            "get /actuator/partitions", "get /actuator/topology", "get /actuator/health", "post /actuator/rebalance"))
        {
            final String[] methodAndPath = endpoint.split(" ");
            if (paths.path(methodAndPath[1]).path(methodAndPath[0]).isMissingNode())
            {
                missing.add(endpoint);
            }
        }
        assertThat(missing).as("contract endpoints missing from the document").isEmpty();
    }

    @Test
    void parametersStatusCodesAndTheTokenAreDescribedAsTheContractSays() throws Exception
    {
        final JsonNode paths = document().path("paths");
        final JsonNode pause = paths.path("/actuator/exporting/pause").path("post");
        assertThat(parameterNames(pause)).containsExactly("soft", "lease");
        assertThat(pause.path("responses").propertyNames()).contains("200", "503", "504", "400", "401");
        assertThat(pause.path("security").toString()).contains("managementToken");
        assertThat(pause.path("requestBody").path("required").asBoolean(true)).as("plain curl -X POST works").isFalse();

        final JsonNode reset = paths.path("/actuator/exporters/{exporterId}/resetToLatestAndBackfill").path("post");
        assertThat(parameterNames(reset)).containsExactly("exporterId", "backfillTaskCount", "dryRun");
        assertThat(reset.path("responses").propertyNames()).contains("200", "202", "400", "401", "404", "409");

        final JsonNode records = paths.path("/v1/records").path("post");
        assertThat(parameterNames(records)).containsExactly("Idempotency-Key");
        assertThat(records.path("responses").propertyNames()).contains("200", "400", "422", "503", "507");
        assertThat(records.path("security").isMissingNode()).as("the client API takes no token").isTrue();

        for (final String read : List.of("/actuator/exporting", "/actuator/exporters", "/actuator/backfills", "/actuator/partitions"))
        {
            assertThat(paths.path(read).path("get").path("security").isMissingNode()).as(read + " needs no token").isTrue();
        }
    }

    @Test
    void theExportingStatusAnswerHasTheFieldsTheDocumentNames() throws Exception
    {
        final JsonNode schemas = document().path("components").path("schemas");
        final JsonNode status = JSON.readTree(get(managementPort, "/actuator/exporting").body());

        assertThat(schemas.path("ExportingStatus").path("properties").propertyNames()).containsAll(status.propertyNames());
        assertThat(schemas.path("ExportingStatus").path("properties").path("targets").path("items").path("properties").propertyNames())
            .containsAll(status.path("targets").get(0).propertyNames());
    }

    private static List<String> parameterNames(final JsonNode operation)
    {
        final List<String> names = new ArrayList<>();
        operation.path("parameters").forEach(parameter -> names.add(parameter.path("name").asString()));
        return names;
    }

    private JsonNode document() throws Exception
    {
        return JSON.readTree(get(serverPort, "/v3/api-docs").body());
    }

    private HttpResponse<String> get(final int port, final String path) throws Exception
    {
        return http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path)).GET()
            .timeout(Duration.ofSeconds(20)).build(), HttpResponse.BodyHandlers.ofString());
    }
}
