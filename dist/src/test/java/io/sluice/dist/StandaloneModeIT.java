package io.sluice.dist;

import io.sluice.gateway.LoopbackBrokers;
import io.sluice.protocol.cluster.PartitionDistribution;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.context.ConfigurableApplicationContext;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/** The newcomer path: standalone mode takes a record over HTTP, exports it to a file, and closes its brokers. */
@Timeout(value = 5, unit = TimeUnit.MINUTES)
class StandaloneModeIT
{
    @TempDir
    Path dataDir;

    @Test
    void standaloneCommitsAndExportsARecordAndReleasesEveryPortOnClose() throws Exception
    {
        final String brokers = LoopbackBrokers.brokerList(3);
        final List<Integer> ports = PartitionDistribution.parseAddresses(brokers).stream()
            .map(InetSocketAddress::getPort).toList();
        final ByteArrayOutputStream err = new ByteArrayOutputStream();
        final SluiceMain.Launch launch = SluiceMain.launch(new String[]{
            "--sluice.data-dir=" + dataDir,
            "--sluice.cluster.brokers=" + brokers,
            "--server.port=0",
            "--management.server.port=0",
            "--sluice.gateway.request-timeout=20s"}, new PrintStream(err, true, StandardCharsets.UTF_8));
        assertThat(launch.exitCode()).as(err.toString(StandardCharsets.UTF_8)).isZero();
        final ConfigurableApplicationContext context = launch.context();
        try
        {
            final String api = "http://127.0.0.1:" + context.getEnvironment().getProperty("local.server.port");
            final String management = "http://127.0.0.1:" + context.getEnvironment().getProperty("local.management.port");
            final HttpClient http = HttpClient.newHttpClient();
            await().atMost(Duration.ofSeconds(90)).pollInterval(Duration.ofMillis(250)).until(() ->
                http.send(HttpRequest.newBuilder(URI.create(management + "/actuator/health/readiness")).build(),
                    HttpResponse.BodyHandlers.discarding()).statusCode() == 200);

            // A bare curl -d: no JSON content type.
            final HttpResponse<String> response = http.send(HttpRequest.newBuilder(URI.create(api + "/v1/records"))
                .header("content-type", "application/x-www-form-urlencoded")
                .POST(HttpRequest.BodyPublishers.ofString("{\"key\":\"k\",\"payload\":{\"a\":1}}")).build(),
                HttpResponse.BodyHandlers.ofString());
            assertThat(response.statusCode()).as(response.body()).isEqualTo(200);
            final String partition = response.body().replaceAll(".*\"partitionId\":(\\d+).*", "$1");

            final Path export = dataDir.resolve("exports").resolve("file").resolve("partition-" + partition + ".jsonl");
            await().atMost(Duration.ofSeconds(30)).until(() ->
                Files.exists(export) && Files.readString(export).contains("\"payload\":{\"a\":1}"));
            assertThat(dataDir.resolve("broker-0")).isDirectory();
            assertThat(dataDir.resolve("broker-2")).isDirectory();
        }
        finally
        {
            context.close();
        }
        for (final int port : ports)
        {
            try (ServerSocket command = new ServerSocket(port); ServerSocket raft = new ServerSocket(port + 1))
            {
                assertThat(command.getLocalPort()).isEqualTo(port);
            }
        }
    }
}
