package io.sluice.gateway.metrics;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.sluice.gateway.backup.BackupService;
import io.sluice.protocol.backup.BackupKeys;
import io.sluice.protocol.backup.BackupManifest;
import io.sluice.protocol.backup.FilesystemBackupStore;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.beans.factory.support.StaticListableBeanFactory;

import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

class BackupGaugesTest
{
    @TempDir
    Path temp;

    @Test
    void theGaugesCountBackupsByStateAndShowTheLastCompletedBackupsAgeAndSize() throws Exception
    {
        final Instant now = Instant.parse("2026-12-03T15:00:00Z");
        final Clock clock = Clock.fixed(now, ZoneOffset.UTC);
        final FilesystemBackupStore store = new FilesystemBackupStore(temp);
        final BackupManifest.Layout layout = new BackupManifest.Layout(3, 1, 3);
        final BackupManifest cut5 = new BackupManifest(5, now.minusSeconds(200).toEpochMilli(), 0, 0, layout,
            List.of(new BackupManifest.PartitionCut(1, 0, 40, Map.of("file", 30L), List.of())));
        store.putBytes(BackupKeys.cut(5), cut5.toBytes());
        store.putBytes(BackupKeys.manifest(5), cut5.completed(Map.of(1, List.of(
            new BackupManifest.PartitionObject("state", 1500, "ab"))), now.minusSeconds(120).toEpochMilli()).toBytes());
        final BackupManifest cut6 = new BackupManifest(6, now.minusSeconds(1).toEpochMilli(), 0, 0, layout,
            List.of(new BackupManifest.PartitionCut(1, 0, 50, Map.of(), List.of())));
        store.putBytes(BackupKeys.cut(6), cut6.toBytes());
        final BackupService service = new BackupService(
            (broker, partition, id, timeout) -> CompletableFuture.failedFuture(new IllegalStateException("unused")),
            new MutableTopology().allExporting(0, Map.of()), store, Duration.ofSeconds(5), Duration.ofMinutes(30), null,
            clock);
        try
        {
            final StaticListableBeanFactory beans = new StaticListableBeanFactory(Map.of("backups", service,
                "clock", clock));
            final SimpleMeterRegistry registry = new SimpleMeterRegistry();
            new BackupGauges(beans.getBeanProvider(BackupService.class), beans.getBeanProvider(Clock.class))
                .bindTo(registry);

            assertThat(registry.get(BackupGauges.BACKUPS).tag("state", "COMPLETED").gauge().value()).isEqualTo(1.0);
            assertThat(registry.get(BackupGauges.BACKUPS).tag("state", "IN_PROGRESS").gauge().value()).isEqualTo(1.0);
            assertThat(registry.get(BackupGauges.BACKUPS).tag("state", "FAILED").gauge().value()).isEqualTo(0.0);
            assertThat(registry.get(BackupGauges.LAST_SUCCESS_AGE).gauge().value()).isCloseTo(120.0, within(0.001));
            assertThat(registry.get(BackupGauges.LAST_SUCCESS_BYTES).gauge().value()).isEqualTo(1500.0);
        }
        finally
        {
            service.close();
        }
    }
}
