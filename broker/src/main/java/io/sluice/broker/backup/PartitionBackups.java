package io.sluice.broker.backup;

import io.sluice.broker.partition.Partition;
import io.sluice.broker.partition.PartitionStateMachine.CapturedSnapshot;
import io.sluice.protocol.backup.BackupKeys;
import io.sluice.protocol.backup.BackupManifest;
import io.sluice.protocol.backup.BackupManifest.PartitionObject;
import io.sluice.protocol.backup.BackupStore;
import io.sluice.protocol.backup.PartitionUpload;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/**
 * This broker's part of a backup: a leader captures its partition's latest snapshot (hard links into
 * {@code <broker>/backup-staging/<id>/partition-<p>/}, so neither compaction nor a later snapshot can take the files
 * away) and answers its checkpoint at once; the upload to the {@link BackupStore} runs afterwards on one thread of its
 * own, while the cluster goes on. It waits for the backup's cut in the store first: a cut the gateway never committed
 * (some partition failed) leaves nothing stored, and the staged links are deleted either way. The upload ends with the
 * partition's report ({@link PartitionUpload}): its objects with sizes and SHA-256, or why it failed; the report is
 * retried while the store does not answer, an upload stops once its backup failed, and a broker restarted mid-upload
 * reports that upload failed (it is not resumed).
 * <p>
 * Thread-safe.
 */
public final class PartitionBackups implements AutoCloseable
{
    private static final Logger LOG = LoggerFactory.getLogger(PartitionBackups.class);
    static final String STAGING = "backup-staging";
    /** How long a partition's report is retried while the store does not answer (the gateway's upload timeout). */
    static final java.time.Duration REPORT_RETRY = java.time.Duration.ofMinutes(30);

    private final int brokerId;
    private final BackupStore store;
    private final Path stagingRoot;
    private final long cutWaitMillis;
    private final ExecutorService uploads;

    /**
     * @param cutWaitMillis how long a captured partition waits for the gateway to commit the cut before it drops the
     *                      capture.
     */
    public PartitionBackups(final int brokerId, final Path brokerDir, final BackupStore store, final long cutWaitMillis)
    {
        this.brokerId = brokerId;
        this.store = store;
        this.stagingRoot = brokerDir.resolve(STAGING);
        this.cutWaitMillis = cutWaitMillis;
        this.uploads = Executors.newSingleThreadExecutor((r) ->
        {
            final Thread thread = new Thread(r, "broker-" + brokerId + "-backup-upload");
            thread.setDaemon(true);
            return thread;
        });
        // Links left by a broker that stopped mid-upload: that upload is gone; say so in the store, so its backup
        // fails now rather than when the gateway gives up on it.
        final List<long[]> interrupted = stagedCaptures(stagingRoot);
        try
        {
            deleteTree(stagingRoot);
        }
        catch (final IOException e)
        {
            LOG.warn("broker {}: cannot delete the old backup staging directory {}", brokerId, stagingRoot, e);
        }
        for (final long[] capture : interrupted)
        {
            uploads.execute(() -> reportInterrupted(capture[0], (int)capture[1]));
        }
    }

    /** Every {@code <id>/partition-<p>} under the staging root, as (backup id, partition id). */
    private static List<long[]> stagedCaptures(final Path stagingRoot)
    {
        final List<long[]> captures = new ArrayList<>();
        if (!Files.isDirectory(stagingRoot))
        {
            return captures;
        }
        try (Stream<Path> backups = Files.list(stagingRoot))
        {
            for (final Path backup : backups.toList())
            {
                try (Stream<Path> partitions = Files.list(backup))
                {
                    for (final Path partition : partitions.toList())
                    {
                        final String name = partition.getFileName().toString();
                        if (name.startsWith("partition-"))
                        {
                            captures.add(new long[] {Long.parseLong(backup.getFileName().toString()),
                                Integer.parseInt(name.substring("partition-".length()))});
                        }
                    }
                }
            }
        }
        catch (final IOException | NumberFormatException e)
        {
            LOG.warn("cannot read the old backup staging directory {}", stagingRoot, e);
        }
        return captures;
    }

    /** A capture this broker's previous run was uploading when it stopped: reported failed, unless already settled. */
    private void reportInterrupted(final long backupId, final int partitionId)
    {
        try
        {
            final byte[] cutBytes = store.getBytes(BackupKeys.cut(backupId));
            final BackupManifest cut = cutBytes == null ? null : BackupManifest.parse(cutBytes, BackupKeys.cut(backupId));
            if (cut == null || cut.partition(partitionId) == null || cut.partition(partitionId).brokerId() != brokerId ||
                store.getBytes(BackupKeys.upload(backupId, partitionId)) != null ||
                store.getBytes(BackupKeys.manifest(backupId)) != null || store.getBytes(BackupKeys.failed(backupId)) != null)
            {
                return;
            }
            final String reason = "partition " + partitionId + " on broker " + brokerId + ": the broker stopped " +
                "during the upload and was restarted; the upload is not resumed";
            store.putBytes(BackupKeys.upload(backupId, partitionId), new PartitionUpload(partitionId, brokerId,
                cut.partition(partitionId).checkpointPosition(), List.of(), reason).toBytes());
            LOG.warn("broker {}: backup {}: {}", brokerId, backupId, reason);
        }
        catch (final IOException | RuntimeException e)
        {
            LOG.warn("broker {}: backup {} of partition {}: cannot report its interrupted upload to the {}", brokerId,
                backupId, partitionId, store.describe(), e);
        }
    }

    /** A partition's checkpoint in a backup, as its leader captured it. */
    public record Captured(int partitionId, int brokerId, long checkpointPosition, java.util.Map<String, Long> exporterPositions)
    {
    }

    /** Captures {@code partition} (which this broker must lead) for backup {@code backupId} and starts its upload. */
    public CompletableFuture<Captured> capture(final Partition partition, final long backupId, final long timeoutMs)
    {
        final int partitionId = partition.partitionId();
        final Path staging = stagingRoot.resolve(Long.toString(backupId)).resolve("partition-" + partitionId);
        try
        {
            deleteTree(staging);
        }
        catch (final IOException e)
        {
            return CompletableFuture.failedFuture(e);
        }
        return partition.captureForBackup(staging, timeoutMs).handle((captured, error) ->
        {
            if (error != null)
            {
                deleteQuietly(staging);
                throw error instanceof RuntimeException r ? r : new java.util.concurrent.CompletionException(error);
            }
            // The wait for the cut counts from the capture: queued captures of a cut never committed end together.
            final long cutDeadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(cutWaitMillis);
            uploads.execute(() -> upload(partitionId, backupId, captured, staging, cutDeadline));
            return new Captured(partitionId, brokerId, captured.lastPosition(), captured.exporterPositions());
        });
    }

    private void upload(
        final int partitionId, final long backupId, final CapturedSnapshot captured, final Path staging,
        final long cutDeadline)
    {
        try
        {
            final BackupManifest cut = awaitCut(backupId, cutDeadline);
            if (cut == null || cut.partition(partitionId) == null ||
                cut.partition(partitionId).brokerId() != brokerId)
            {
                LOG.info("broker {}: backup {} of partition {} dropped: {}", brokerId, backupId, partitionId,
                    cut == null ? "its cut was not committed" : "another replica was chosen for it");
                return;
            }
            final List<PartitionObject> objects = new ArrayList<>();
            PartitionUpload report;
            try
            {
                for (final Path file : captured.files())
                {
                    if (store.getBytes(BackupKeys.failed(backupId)) != null)
                    {
                        throw new IOException("backup " + backupId + " failed meanwhile; the rest is not uploaded");
                    }
                    final String name = staging.relativize(file).toString().replace('\\', '/');
                    final BackupStore.StoredObject stored =
                        store.put(BackupKeys.partitionObject(backupId, partitionId, name), file);
                    objects.add(new PartitionObject(name, stored.size(), stored.sha256()));
                }
                report = new PartitionUpload(partitionId, brokerId, captured.lastPosition(), objects, null);
                LOG.info("broker {}: backup {} of partition {} stored ({} objects, up to position {})", brokerId,
                    backupId, partitionId, objects.size(), captured.lastPosition());
            }
            catch (final IOException | RuntimeException e)
            {
                LOG.warn("broker {}: backup {} of partition {} failed", brokerId, backupId, partitionId, e);
                report = new PartitionUpload(partitionId, brokerId, captured.lastPosition(), objects,
                    "partition " + partitionId + " on broker " + brokerId + ": upload to the " + store.describe() +
                    " failed: " + e);
            }
            putReport(backupId, partitionId, report);
        }
        catch (final IOException | RuntimeException e)
        {
            LOG.warn("broker {}: backup {} of partition {}: cannot report to the {}", brokerId, backupId, partitionId,
                store.describe(), e);
        }
        catch (final InterruptedException e)
        {
            Thread.currentThread().interrupt();
        }
        finally
        {
            deleteQuietly(staging);
            try
            {
                Files.deleteIfExists(staging.getParent());
            }
            catch (final IOException e)
            {
                // another partition of this backup is still staged: the last one deletes the directory
            }
        }
    }

    /**
     * Writes the partition's report, retrying with capped backoff while the store cannot take it (it may have stopped
     * answering mid-upload, which is why the upload failed): without the report the backup would wait for the
     * gateway's upload timeout.
     */
    private void putReport(final long backupId, final int partitionId, final PartitionUpload report)
        throws IOException, InterruptedException
    {
        final long deadline = System.nanoTime() + REPORT_RETRY.toNanos();
        long backoffMillis = 200;
        while (true)
        {
            try
            {
                store.putBytes(BackupKeys.upload(backupId, partitionId), report.toBytes());
                return;
            }
            catch (final IOException | RuntimeException e)
            {
                if (System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(backoffMillis) > deadline)
                {
                    throw e;
                }
                LOG.warn("broker {}: backup {} of partition {}: cannot report to the {} yet, retrying in {} ms: {}",
                    brokerId, backupId, partitionId, store.describe(), backoffMillis, e.toString());
                Thread.sleep(backoffMillis);
                backoffMillis = Math.min(backoffMillis * 2, 10_000);
            }
        }
    }

    private BackupManifest awaitCut(final long backupId, final long deadline) throws IOException, InterruptedException
    {
        while (true)
        {
            final byte[] cut = store.getBytes(BackupKeys.cut(backupId));
            if (cut != null)
            {
                return BackupManifest.parse(cut, BackupKeys.cut(backupId));
            }
            if (System.nanoTime() > deadline)
            {
                return null;
            }
            Thread.sleep(50);
        }
    }

    @Override
    public void close()
    {
        uploads.shutdownNow();
    }

    private void deleteQuietly(final Path dir)
    {
        try
        {
            deleteTree(dir);
        }
        catch (final IOException e)
        {
            LOG.warn("broker {}: cannot delete {}", brokerId, dir, e);
        }
    }

    static void deleteTree(final Path dir) throws IOException
    {
        if (!Files.exists(dir))
        {
            return;
        }
        try (Stream<Path> walk = Files.walk(dir))
        {
            for (final Path path : walk.sorted(Comparator.reverseOrder()).toList())
            {
                Files.deleteIfExists(path);
            }
        }
    }
}
