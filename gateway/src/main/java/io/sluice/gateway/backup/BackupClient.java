package io.sluice.gateway.backup;

import io.sluice.protocol.backup.BackupManifest.PartitionCut;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;

/** Asks one broker to capture a partition it leads for a backup; the answer is the partition's checkpoint. */
public interface BackupClient
{
    CompletableFuture<PartitionCut> capture(int brokerId, int partitionId, long backupId, Duration timeout);
}
