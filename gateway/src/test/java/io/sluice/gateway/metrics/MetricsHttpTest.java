package io.sluice.gateway.metrics;

import io.sluice.gateway.broker.BrokerClient;
import io.sluice.gateway.exporting.ExportingControlService;
import io.sluice.gateway.exporting.FakeBrokerClient;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalManagementPort;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Import;
import org.springframework.beans.factory.annotation.Autowired;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/** The exporting metric families over real HTTP at /actuator/prometheus on the management port. */
@SpringBootTest(
    classes = MetricsHttpTest.Cluster.class,
    webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
    properties = {"management.server.port=0", "sluice.gateway.request-timeout=2s",
        "sluice.gateway.metrics.exporter-refresh-interval=200ms",
        "management.endpoint.health.group.readiness.include=readinessState"})
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class MetricsHttpTest
{
    /** The exporting service and the metrics over a hand-set topology whose replicas take what they are asked. */
    @Configuration(proxyBeanMethods = false)
    @EnableAutoConfiguration
    @Import({ExportingControlService.class, ExportingOperationMetrics.class, ExportingGauges.class,
        BackfillGauges.class, MetricsRefresher.class})
    static class Cluster
    {
        @Bean
        MutableTopology clusterTopology()
        {
            return new MutableTopology().allExporting(100, Map.of("file", 60L));
        }

        @Bean
        BrokerClient brokerClient(final MutableTopology topology)
        {
            // Every admin request is obeyed, and the next topology view shows the state asked for.
            return new FakeBrokerClient().respondWith(call ->
            {
                topology.setState(call.target(), FakeBrokerClient.stateOf(call.kind()));
                return FakeBrokerClient.applied(call);
            });
        }
    }

    @LocalManagementPort
    private int managementPort;

    @Autowired
    private ExportingControlService exporting;

    private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

    @Test
    void aPauseShowsInStateLatencyAndLagFamilies() throws Exception
    {
        final HttpResponse<String> pause = http.send(
            HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + managementPort + "/actuator/exporting/pause"))
                .POST(HttpRequest.BodyPublishers.noBody()).timeout(Duration.ofSeconds(20)).build(),
            HttpResponse.BodyHandlers.ofString());
        assertThat(pause.statusCode()).as(pause.body()).isEqualTo(200);

        final HttpResponse<String> scrape = http.send(
            HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + managementPort + "/actuator/prometheus"))
                .GET().timeout(Duration.ofSeconds(20)).build(),
            HttpResponse.BodyHandlers.ofString());
        assertThat(scrape.statusCode()).isEqualTo(200);
        final List<String> lines = scrape.body().lines().filter(line -> !line.startsWith("#")).toList();

        assertThat(lines).contains(
            "sluice_exporting_state{broker=\"0\",partition=\"1\",state=\"PAUSED\"} 1.0",
            "sluice_exporting_state{broker=\"0\",partition=\"1\",state=\"EXPORTING\"} 0.0",
            "sluice_exporting_state{broker=\"2\",partition=\"2\",state=\"PAUSED\"} 1.0",
            "sluice_exporting_state{broker=\"2\",partition=\"2\",state=\"UNKNOWN\"} 0.0",
            "sluice_exporter_position{exporter=\"file\",partition=\"1\"} 60.0",
            "sluice_exporter_lag_records{exporter=\"file\",partition=\"2\"} 40.0",
            "sluice_exporting_operation_seconds_count{operation=\"PAUSE\",result=\"SUCCEEDED\"} 1",
            "sluice_exporting_target_outcomes_total{operation=\"PAUSE\",outcome=\"SUCCEEDED\"} 6.0");
        assertThat(lines).anySatisfy(line ->
            assertThat(line).startsWith("sluice_exporting_operation_seconds_bucket{operation=\"PAUSE\",result=\"SUCCEEDED\",le=\""));
        assertThat(lines).filteredOn(line -> line.startsWith("sluice_exporting_state{") && line.endsWith(" 1.0"))
            .hasSize(6)
            .allSatisfy(line -> assertThat(line).contains("state=\"PAUSED\""));
        assertThat(exporting.status().state()).isEqualTo("PAUSED");
    }
}
