package io.sluice.gateway.console;

import io.sluice.gateway.exporting.ExportingHttpTest;
import io.sluice.gateway.exporting.FakeBrokerClient;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalManagementPort;
import org.springframework.boot.test.web.server.LocalServerPort;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The console's files over real HTTP: served from the jar on the management port only, readable without the token
 * while every action the page sends still needs it.
 */
@SpringBootTest(
    classes = ExportingHttpTest.FakeCluster.class,
    webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
    properties = {
        "management.server.port=0",
        "sluice.management.token=console-token",
        "management.endpoint.health.group.readiness.include=readinessState" })
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class ConsoleHttpTest
{
    @LocalManagementPort
    private int managementPort;

    @LocalServerPort
    private int serverPort;

    @Autowired
    private FakeBrokerClient client;

    private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

    @BeforeEach
    void resetCluster()
    {
        client.reset();
    }

    @Test
    void thePageLoadsWithoutTheTokenAndNamesItsScriptStyleAndApiBasePath() throws Exception
    {
        for (final String path : new String[] { "/console", "/console/" })
        {
            final HttpResponse<String> page = get(managementPort, path);

            assertThat(page.statusCode()).as(path).isEqualTo(200);
            assertThat(page.headers().firstValue("Content-Type")).hasValueSatisfying(type -> assertThat(type).startsWith("text/html"));
            assertThat(page.body())
                .contains("<script src=\"/console/console.js\"")
                .contains("href=\"/console/console.css\"")
                .contains("content=\"/actuator\"")
                .doesNotContain(ConsoleController.BASE_PATH_PLACEHOLDER);
        }
    }

    @Test
    void theScriptAndStyleSheetComeFromTheJarWithTheirTypes() throws Exception
    {
        final HttpResponse<String> script = get(managementPort, "/console/console.js");
        final HttpResponse<String> style = get(managementPort, "/console/console.css");

        assertThat(script.statusCode()).isEqualTo(200);
        assertThat(script.headers().firstValue("Content-Type")).hasValueSatisfying(type -> assertThat(type).startsWith("text/javascript"));
        assertThat(script.body()).contains("'/exporting/pause'").contains("Authorization").contains("sessionStorage");
        assertThat(style.statusCode()).isEqualTo(200);
        assertThat(style.headers().firstValue("Content-Type")).hasValueSatisfying(type -> assertThat(type).startsWith("text/css"));
        assertThat(style.body()).contains(".state-MIXED");
    }

    @Test
    void thePageMayLoadNothingFromOtherOriginsSoItWorksOffline() throws Exception
    {
        final HttpResponse<String> page = get(managementPort, "/console");

        assertThat(page.headers().firstValue("Content-Security-Policy")).hasValueSatisfying(policy -> assertThat(policy)
            .contains("default-src 'self'").contains("connect-src 'self'").doesNotContain("http"));
        assertThat(page.body()).doesNotContain("http://").doesNotContain("https://");
        // The one absolute URL in the script is the SVG namespace name of the sparklines, which is never fetched.
        assertThat(get(managementPort, "/console/console.js").body().replace("'http://www.w3.org/2000/svg'", ""))
            .doesNotContain("http://").doesNotContain("https://");
    }

    @Test
    void anUnknownConsoleFileIsA404InJson() throws Exception
    {
        final HttpResponse<String> missing = get(managementPort, "/console/other.js");

        assertThat(missing.statusCode()).isEqualTo(404);
        assertThat(missing.body()).contains("\"error\"").contains("other.js");
    }

    @Test
    void theConsoleIsNotOnTheClientPort() throws Exception
    {
        assertThat(get(serverPort, "/console").statusCode()).isEqualTo(404);
    }

    @Test
    void anActionSentWithoutTheTokenIsRefusedWhileTheConsoleStillReads() throws Exception
    {
        final HttpResponse<String> read = get(managementPort, "/actuator/exporting");
        final HttpResponse<String> pause = http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + managementPort +
            "/actuator/exporting/pause")).header("Referer", "http://127.0.0.1:" + managementPort + "/console")
            .POST(HttpRequest.BodyPublishers.noBody()).build(), HttpResponse.BodyHandlers.ofString());

        assertThat(read.statusCode()).isEqualTo(200);
        assertThat(pause.statusCode()).isEqualTo(401);
        assertThat(client.calls).isEmpty();
    }

    private HttpResponse<String> get(final int port, final String path) throws Exception
    {
        return http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path)).GET()
            .timeout(Duration.ofSeconds(20)).build(), HttpResponse.BodyHandlers.ofString());
    }
}
