package io.sluice.broker.exporter;

import io.sluice.protocol.cluster.InvalidClusterConfigException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

final class ExporterRegistryTest
{
    @TempDir
    Path dataDir;

    private static Map<String, ExporterConfig> one(final String type, final Map<String, String> properties)
    {
        return Map.of("search", new ExporterConfig("search", type, properties));
    }

    @Test
    void theBuiltInKindsAreFoundThroughTheServiceLoader()
    {
        final ExporterRegistry registry = ExporterRegistry.builtIn();
        assertThat(registry.factories()).containsOnlyKeys("file", "opensearch", "kafka");
        registry.validate(0, dataDir, one("opensearch", Map.of("url", "http://127.0.0.1:9200")));
        assertThat(registry.create(new ExporterConfig("search", "opensearch", Map.of())).getClass().getName())
            .isEqualTo("io.sluice.exporter.opensearch.OpenSearchExporter");
        assertThat(registry.create(new ExporterConfig("bus", "kafka", Map.of())).getClass().getName())
            .isEqualTo("io.sluice.exporter.kafka.KafkaExporter");
    }

    @Test
    void anUnknownTypeStopsTheBrokerListingTheKnownOnes()
    {
        assertThatThrownBy(() -> ExporterRegistry.builtIn().validate(one("elastic", Map.of())))
            .isInstanceOf(InvalidClusterConfigException.class)
            .hasMessageStartingWith("sluice.exporters.search.type: unknown exporter type 'elastic' (known: file, kafka, " +
                "opensearch;");
    }

    @Test
    void aBadOpenSearchPropertyStopsTheBrokerNamingTheFullSetting()
    {
        assertThatThrownBy(() -> ExporterRegistry.builtIn().validate(0, dataDir,
            one("opensearch", Map.of("bulk.max-bytes", "lots"))))
            .isInstanceOf(InvalidClusterConfigException.class)
            .hasMessageStartingWith("sluice.exporters.search.bulk.max-bytes: 'lots'")
            .satisfies(e -> assertThat(((InvalidClusterConfigException)e).setting())
                .isEqualTo("sluice.exporters.search.bulk.max-bytes"));
        assertThatThrownBy(() -> ExporterRegistry.builtIn().validate(0, dataDir,
            one("opensearch", Map.of("on-rejected", "drop"))))
            .hasMessageStartingWith("sluice.exporters.search.on-rejected: 'drop'");
    }

    @Test
    void theRetryBackoffCapIsReadForEveryKindWithTheKindsDefault()
    {
        assertThat(ExporterRegistry.maxBackoffMs(new ExporterConfig("f", "file", Map.of()))).isEqualTo(5_000);
        assertThat(ExporterRegistry.maxBackoffMs(new ExporterConfig("s", "opensearch", Map.of()))).isEqualTo(30_000);
        assertThat(ExporterRegistry.maxBackoffMs(new ExporterConfig("k", "kafka", Map.of()))).isEqualTo(5_000);
        assertThat(ExporterRegistry.maxBackoffMs(new ExporterConfig("f", "file", Map.of("retry.max-backoff", "2s"))))
            .isEqualTo(2_000);
        assertThatThrownBy(() -> ExporterRegistry.builtIn().validate(one("file", Map.of("retry.max-backoff", "never"))))
            .hasMessageStartingWith("sluice.exporters.search.retry.max-backoff: 'never'");
    }

    @Test
    void aKafkaExporterTakesTheRetryBackoffCapInEverySpellingAndNeverSeesIt()
    {
        for (final String spelling : new String[] {"retry.max-backoff", "retry.maxbackoff", "retry.max.backoff"})
        {
            final ExporterConfig kafka = new ExporterConfig("bus", "kafka",
                Map.of("bootstrapservers", "127.0.0.1:9092", spelling, "5s"));
            ExporterRegistry.builtIn().validate(0, dataDir, Map.of("bus", kafka));
            assertThat(ExporterRegistry.maxBackoffMs(kafka)).as(spelling).isEqualTo(5_000);
            assertThat(kafka.exporterProperties()).as(spelling).containsOnlyKeys("bootstrapservers");
        }
    }

    @Test
    void aTypoUnderRetryIsRefusedRatherThanDroppedWithTheBrokersGroup()
    {
        assertThatThrownBy(() -> ExporterRegistry.builtIn().validate(
            Map.of("bus", new ExporterConfig("bus", "kafka", Map.of("bootstrap-servers", "h:1", "retry.max-backof", "5s")))))
            .isInstanceOf(InvalidClusterConfigException.class)
            .hasMessageStartingWith("sluice.exporters.bus.retry.max-backof: unknown setting");
    }

    @Test
    void aSettingUnknownToItsKindStopsTheBrokerNamingItAsGiven()
    {
        assertThatThrownBy(() -> ExporterRegistry.builtIn().validate(0, dataDir,
            Map.of("bus", new ExporterConfig("bus", "kafka", Map.of("bootstrap-servers", "h:1", "topik", "t")))))
            .isInstanceOf(InvalidClusterConfigException.class)
            .hasMessageStartingWith("sluice.exporters.bus.topik: unknown setting of a kafka exporter");
        assertThatThrownBy(() -> ExporterRegistry.builtIn().validate(0, dataDir,
            Map.of("file", new ExporterConfig("file", "file", Map.of("paht", "/x")))))
            .hasMessageStartingWith("sluice.exporters.file.paht: unknown setting of a file exporter");
    }

    @Test
    void startFromIsEarliestByDefaultOrLatestAndNeverReachesTheExporter()
    {
        assertThat(new ExporterConfig("f", "file", Map.of()).startFrom()).isEqualTo(ExporterConfig.StartFrom.EARLIEST);
        final ExporterConfig latest = new ExporterConfig("s", "opensearch", Map.of("start-from", "Latest", "index", "x"));
        assertThat(latest.startFrom()).isEqualTo(ExporterConfig.StartFrom.LATEST);
        assertThat(latest.exporterProperties()).containsOnlyKeys("index");
        assertThat(new ExporterConfig("s", "file", Map.of("STARTFROM", "latest")).startFrom())
            .isEqualTo(ExporterConfig.StartFrom.LATEST);
        // an opensearch exporter refuses unknown properties: start-from is the broker's, so it passes
        ExporterRegistry.builtIn().validate(0, dataDir, Map.of("s", latest));
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

    @Test
    void twoSpellingsOfABrokerSettingWithDifferentValuesAreRefused()
    {
        assertThatThrownBy(() -> new ExporterConfig("s", "file", Map.of("start-from", "latest", "startfrom", "earliest")))
            .isInstanceOf(InvalidClusterConfigException.class)
            .hasMessageContaining("spellings of one setting");
    }
}
