package io.sluice.gateway.backup;

import io.sluice.gateway.backup.BackupView.BackupState;
import io.sluice.gateway.exporting.FakeClusterTopology;
import io.sluice.protocol.backup.BackupKeys;
import io.sluice.protocol.backup.BackupManifest.PartitionCut;
import io.sluice.protocol.backup.BackupManifest.SinkCut;
import io.sluice.protocol.backup.BackupManifest.PartitionObject;
import io.sluice.protocol.backup.FilesystemBackupStore;
import io.sluice.protocol.backup.PartitionUpload;
import io.sluice.protocol.cluster.PartitionDistribution;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicLong;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The backup service over a real filesystem store and a topology the test sets: an upload whose broker went down
 * fails the backup soon, naming the partition and broker, instead of leaving it IN_PROGRESS until the upload timeout.
 */
class BackupServiceTest
{
    private static final PartitionDistribution LAYOUT = PartitionDistribution.of(
        "127.0.0.1:26501,127.0.0.1:26511,127.0.0.1:26521", 3, 3);

    @TempDir
    Path temp;

    private final FakeClusterTopology topology = new FakeClusterTopology(LAYOUT);
    private final ManualClock clock = new ManualClock(1_700_000_000_000L);
    private BackupService service;
    private FilesystemBackupStore store;

    @AfterEach
    void close()
    {
        service.close();
    }

    private void start()
    {
        store = new FilesystemBackupStore(temp.resolve("backups"));
        // Broker (p - 1) leads and uploads partition p.
        final BackupClient client = new BrokersThatObey();
        for (int p = 1; p <= LAYOUT.partitionCount(); p++)
        {
            topology.leader(p, p - 1);
        }
        service = new BackupService(client, topology, store, Duration.ofSeconds(5), Duration.ofMinutes(30), null,
            clock);
    }

    private void report(final long backupId, final int partitionId) throws Exception
    {
        store.putBytes(BackupKeys.upload(backupId, partitionId), new PartitionUpload(partitionId, partitionId - 1,
            10L * partitionId, List.of(new PartitionObject("state", 3, "ab".repeat(32))), null).toBytes());
    }

    @Test
    void anUploadWhoseBrokerWentDownFailsTheBackupNamingItLongBeforeTheUploadTimeout() throws Exception
    {
        start();
        assertThat(service.take(5L).join().state()).isEqualTo(BackupState.IN_PROGRESS);
        report(5, 1);
        report(5, 3);
        topology.unreachable(1);

        assertThat(service.status(5).state()).as("one refused poll fails nothing").isEqualTo(BackupState.IN_PROGRESS);
        clock.advance(UploaderOutages.DEFAULT_GRACE.plusMillis(1));
        final BackupView failed = service.status(5);

        assertThat(failed.state()).isEqualTo(BackupState.FAILED);
        assertThat(failed.failureReason()).startsWith("partition 2 on broker 1: the broker went down during the upload");
        assertThat(failed.partitions()).extracting(BackupView.PartitionView::state)
            .containsExactly(BackupState.COMPLETED, BackupState.FAILED, BackupState.COMPLETED);
        // The broker coming back does not bring the upload back: the backup stays failed.
        topology.reset();
        report(5, 2);
        assertThat(service.status(5).state()).isEqualTo(BackupState.FAILED);
    }

    @Test
    void aBrokerDownOnlyBrieflyOrAfterItReportedFailsNothing() throws Exception
    {
        start();
        service.take(6L).join();
        report(6, 2);
        topology.unreachable(1);
        topology.unreachable(0);
        service.status(6);
        clock.advance(Duration.ofSeconds(1));
        topology.reset();
        assertThat(service.status(6).state()).isEqualTo(BackupState.IN_PROGRESS);
        clock.advance(Duration.ofSeconds(10));
        assertThat(service.status(6).state()).isEqualTo(BackupState.IN_PROGRESS);

        report(6, 1);
        report(6, 3);
        assertThat(service.status(6).state()).isEqualTo(BackupState.COMPLETED);
    }

    /** A clock the test moves. */
    static final class ManualClock extends Clock
    {
        private final AtomicLong millis;

        ManualClock(final long millis)
        {
            this.millis = new AtomicLong(millis);
        }

        void advance(final Duration by)
        {
            millis.addAndGet(by.toMillis());
        }

        @Override
        public ZoneId getZone()
        {
            return ZoneOffset.UTC;
        }

        @Override
        public Clock withZone(final ZoneId zone)
        {
            return this;
        }

        @Override
        public Instant instant()
        {
            return Instant.ofEpochMilli(millis.get());
        }
    }

    /** Brokers that grant the hold, obey it, have no sinks with snapshots and capture partition p at 10 p. */
    private static final class BrokersThatObey implements BackupClient
    {
        @Override
        public CompletableFuture<PartitionCut> capture(final int brokerId, final int partitionId, final long backupId,
            final Duration timeout)
        {
            return CompletableFuture.completedFuture(
                new PartitionCut(partitionId, brokerId, 10L * partitionId, Map.of("file", 5L), List.of()));
        }

        @Override
        public CompletableFuture<Long> takeHold(final int brokerId, final long backupId, final Duration lease,
            final Duration timeout)
        {
            return CompletableFuture.completedFuture(backupId);
        }

        @Override
        public CompletableFuture<Long> awaitHoldObeyed(final int brokerId, final int partitionId, final long backupId,
            final Duration timeout)
        {
            return CompletableFuture.completedFuture(backupId);
        }

        @Override
        public CompletableFuture<Long> releaseHold(final int brokerId, final long backupId, final Duration timeout)
        {
            return CompletableFuture.completedFuture(0L);
        }

        @Override
        public CompletableFuture<List<SinkCut>> sinkSnapshots(final int brokerId, final long backupId, final boolean take,
            final Duration timeout)
        {
            return CompletableFuture.completedFuture(List.of());
        }
    }
}
