package io.sluice.exporter.opensearch;

import io.sluice.exporter.spi.ExporterConfigException;
import io.sluice.exporter.spi.ExporterSettings;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

final class OpenSearchExporterConfigTest
{
    @Test
    void defaultsAreThoseOfTheContract()
    {
        final OpenSearchExporterConfig config = OpenSearchExporterConfig.parse(Map.of());
        assertThat(config.urls()).hasToString("[http://127.0.0.1:9200]");
        assertThat(config.index()).isEqualTo("sluice-records");
        assertThat(config.bulkMaxRecords()).isEqualTo(1000);
        assertThat(config.bulkMaxBytes()).isEqualTo(5L * 1024 * 1024);
        assertThat(config.bulkMaxDelay()).isEqualTo(Duration.ofSeconds(1));
        assertThat(config.onRejected()).isEqualTo(OpenSearchExporterConfig.OnRejected.RETRY);
        assertThat(config.username()).isNull();
        assertThat(config.snapshotRepository()).as("no snapshots unless a repository is named").isNull();
    }

    @Test
    void aSnapshotRepositoryGivesTheExporterSnapshotsAndABadNameIsRefused() throws Exception
    {
        final OpenSearchExporter exporter = new OpenSearchExporter();
        exporter.configure(new io.sluice.exporter.spi.ExporterContext("search", 0, 0, null,
            Map.of("snapshot.repository", "backups")));
        try (io.sluice.exporter.spi.SinkSnapshots snapshots = exporter.snapshots())
        {
            assertThat(snapshots).isNotNull();
        }
        final OpenSearchExporter without = new OpenSearchExporter();
        without.configure(new io.sluice.exporter.spi.ExporterContext("search", 0, 0, null, Map.of()));
        assertThat(without.snapshots()).isNull();
        assertThatThrownBy(() -> OpenSearchExporterConfig.parse(Map.of("snapshot.repository", "a b")))
            .hasMessageStartingWith("snapshot.repository: 'a b'");
        assertThat(OpenSearchExporterConfig.parse(Map.of("SNAPSHOT_REPOSITORY", "backups")).snapshotRepository())
            .isEqualTo("backups");
    }

    @Test
    void everyPropertyIsRead()
    {
        final OpenSearchExporterConfig config = OpenSearchExporterConfig.parse(Map.of("url",
            "http://a:9200, https://b", "index", "orders", "username", "u", "password", "p", "bulk.max-records", "10",
            "bulk.max-bytes", "512KB", "bulk.max-delay", "250ms", "on-rejected", "dead-letter"));
        assertThat(config.urls()).hasSize(2);
        assertThat(config.bulkMaxBytes()).isEqualTo(512 * 1024);
        assertThat(config.bulkMaxDelay()).isEqualTo(Duration.ofMillis(250));
        assertThat(config.onRejected()).isEqualTo(OpenSearchExporterConfig.OnRejected.DEAD_LETTER);
        assertThat(config.toString()).doesNotContain("=p,");
    }

    @Test
    void aBadValueIsRefusedNamingItsProperty()
    {
        assertThatThrownBy(() -> OpenSearchExporterConfig.parse(Map.of("bulk.max-records", "lots")))
            .hasMessageStartingWith("bulk.max-records: 'lots'");
        assertThatThrownBy(() -> OpenSearchExporterConfig.parse(Map.of("bulk.max-records", "0")))
            .hasMessageStartingWith("bulk.max-records: ");
        assertThatThrownBy(() -> OpenSearchExporterConfig.parse(Map.of("bulk.max-bytes", "5 parsecs")))
            .hasMessageStartingWith("bulk.max-bytes: ");
        assertThatThrownBy(() -> OpenSearchExporterConfig.parse(Map.of("bulk.max-delay", "soon")))
            .hasMessageStartingWith("bulk.max-delay: ");
        assertThatThrownBy(() -> OpenSearchExporterConfig.parse(Map.of("on-rejected", "skip")))
            .hasMessageStartingWith("on-rejected: 'skip'");
        assertThatThrownBy(() -> OpenSearchExporterConfig.parse(Map.of("url", "ftp://x")))
            .hasMessageStartingWith("url: ");
        assertThatThrownBy(() -> OpenSearchExporterConfig.parse(Map.of("index", "Upper")))
            .hasMessageStartingWith("index: ");
        assertThatThrownBy(() -> OpenSearchExporterConfig.parse(Map.of("username", "u")))
            .hasMessageStartingWith("password: ");
        assertThatThrownBy(() -> OpenSearchExporterConfig.parse(Map.of("bulk.max-recrods", "5")))
            .hasMessageStartingWith("bulk.max-recrods: unknown setting of an opensearch exporter");
    }

    @Test
    void everySettingTakesTheSpellingsEnvironmentVariablesGive()
    {
        // SLUICE_EXPORTERS_SEARCH_BULK_MAXRECORDS, ..._BULK_MAX_BYTES, ..._ONREJECTED, ..._BULK_MAX_DELAY
        final OpenSearchExporterConfig config = OpenSearchExporterConfig.parse(Map.of("bulk.maxrecords", "7",
            "bulk.max.bytes", "1MB", "onrejected", "DEAD_LETTER", "BULK_MAX_DELAY", "2s", "URL", "http://h:1"));
        assertThat(config.bulkMaxRecords()).isEqualTo(7);
        assertThat(config.bulkMaxBytes()).isEqualTo(1024 * 1024);
        assertThat(config.bulkMaxDelay()).isEqualTo(Duration.ofSeconds(2));
        assertThat(config.onRejected()).isEqualTo(OpenSearchExporterConfig.OnRejected.DEAD_LETTER);
        assertThat(config.urls()).hasToString("[http://h:1]");
    }

    @Test
    void theExportersIdNamesTheFullSettingInARefusal()
    {
        assertThatThrownBy(() -> OpenSearchExporterConfig.from(
            new ExporterSettings("search", Map.of("bulk.maxbytes", "lots"))))
            .isInstanceOf(ExporterConfigException.class)
            .hasMessage("sluice.exporters.search.bulk.maxbytes: 'lots' is not a positive size (e.g. 512KB, 10MB)");
    }
}
