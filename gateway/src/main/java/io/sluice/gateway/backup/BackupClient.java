package io.sluice.gateway.backup;

import io.sluice.protocol.backup.BackupManifest.PartitionCut;
import io.sluice.protocol.backup.BackupManifest.SinkCut;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;

/** What a backup asks of the brokers, one broker a call. */
public interface BackupClient
{
    /** Asks one broker to capture a partition it leads for a backup; the answer is the partition's checkpoint. */
    CompletableFuture<PartitionCut> capture(int brokerId, int partitionId, long backupId, Duration timeout);

    /** Takes backup {@code backupId}'s hold through any broker, with its lease; a CONFLICT when another backup holds. */
    CompletableFuture<Long> takeHold(int brokerId, long backupId, Duration lease, Duration timeout);

    /** Completes once the pair's exporters on {@code brokerId} obey backup {@code backupId}'s hold. */
    CompletableFuture<Long> awaitHoldObeyed(int brokerId, int partitionId, long backupId, Duration timeout);

    /** Releases backup {@code backupId}'s hold if still in place; answers the backup holding after it (0 none). */
    CompletableFuture<Long> releaseHold(int brokerId, long backupId, Duration timeout);

    /** Takes (or, with {@code take} false, checks) the sinks' snapshots of a backup through one broker. */
    CompletableFuture<List<SinkCut>> sinkSnapshots(int brokerId, long backupId, boolean take, Duration timeout);
}
