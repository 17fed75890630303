package io.sluice.broker.exporter;

import io.sluice.exporter.opensearch.OpenSearchExporter;
import io.sluice.protocol.cluster.InvalidClusterConfigException;
import org.junit.jupiter.api.Test;

import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

final class ExporterRegistryTest
{
    private static Map<String, ExporterConfig> one(final String type, final Map<String, String> properties)
    {
        return Map.of("search", new ExporterConfig("search", type, properties));
    }

    @Test
    void opensearchIsABuiltInKind()
    {
        final ExporterRegistry registry = ExporterRegistry.builtIn();
        registry.validate(one("opensearch", Map.of("url", "http://127.0.0.1:9200")));
        assertThat(registry.create(new ExporterConfig("search", "opensearch", Map.of())))
            .isInstanceOf(OpenSearchExporter.class);
    }

    @Test
    void aBadOpenSearchPropertyStopsTheBrokerNamingTheFullSetting()
    {
        assertThatThrownBy(() -> ExporterRegistry.builtIn().validate(one("opensearch", Map.of("bulk.max-bytes", "lots"))))
            .isInstanceOf(InvalidClusterConfigException.class)
            .hasMessageStartingWith("sluice.exporters.search.bulk.max-bytes: 'lots'")
            .satisfies(e -> assertThat(((InvalidClusterConfigException)e).setting())
                .isEqualTo("sluice.exporters.search.bulk.max-bytes"));
        assertThatThrownBy(() -> ExporterRegistry.builtIn().validate(one("opensearch", Map.of("on-rejected", "drop"))))
            .hasMessageStartingWith("sluice.exporters.search.on-rejected: 'drop'");
    }

    @Test
    void theRetryBackoffCapIsReadForEveryKindWithTheKindsDefault()
    {
        assertThat(ExporterRegistry.maxBackoffMs(new ExporterConfig("f", "file", Map.of()))).isEqualTo(5_000);
        assertThat(ExporterRegistry.maxBackoffMs(new ExporterConfig("s", "opensearch", Map.of()))).isEqualTo(30_000);
        assertThat(ExporterRegistry.maxBackoffMs(new ExporterConfig("f", "file", Map.of("retry.max-backoff", "2s"))))
            .isEqualTo(2_000);
        assertThatThrownBy(() -> ExporterRegistry.builtIn().validate(one("file", Map.of("retry.max-backoff", "never"))))
            .hasMessageStartingWith("sluice.exporters.search.retry.max-backoff: 'never'");
    }

    @Test
    void startFromIsEarliestByDefaultOrLatestAndNeverReachesTheExporter()
    {
        assertThat(new ExporterConfig("f", "file", Map.of()).startFrom()).isEqualTo(ExporterConfig.StartFrom.EARLIEST);
        final ExporterConfig latest = new ExporterConfig("s", "opensearch", Map.of("start-from", "Latest", "index", "x"));
        assertThat(latest.startFrom()).isEqualTo(ExporterConfig.StartFrom.LATEST);
        assertThat(latest.exporterProperties()).containsOnlyKeys("index");
        // an opensearch exporter refuses unknown properties: start-from is the broker's, so it passes
        ExporterRegistry.builtIn().validate(Map.of("s", latest));
    }

    @Test
    void aBadStartFromStopsTheBrokerNamingTheSetting()
    {
        assertThatThrownBy(() -> ExporterRegistry.builtIn().validate(one("file", Map.of("start-from", "beginning"))))
            .isInstanceOf(InvalidClusterConfigException.class)
            .hasMessageStartingWith("sluice.exporters.search.start-from: 'beginning' is neither earliest")
            .satisfies(e -> assertThat(((InvalidClusterConfigException)e).setting())
                .isEqualTo("sluice.exporters.search.start-from"));
    }
}
