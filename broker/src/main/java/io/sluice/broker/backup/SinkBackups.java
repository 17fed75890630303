package io.sluice.broker.backup;

import io.sluice.broker.exporter.ExporterConfig;
import io.sluice.broker.exporter.ExporterRegistry;
import io.sluice.exporter.spi.Exporter;
import io.sluice.exporter.spi.ExporterContext;
import io.sluice.exporter.spi.SinkSnapshots;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;

/**
 * The sinks' part of a backup on this broker (issue 26): for every configured exporter that can take snapshots of its
 * sink ({@link Exporter#snapshots}, for OpenSearch one with {@code snapshot.repository} set), takes the snapshot
 * named for the backup, or checks it. Any broker serves it alike (every broker has the same exporters); the gateway
 * asks one while the backup's hold is in place. The sinks' calls block, so they run on one thread of their own.
 * Thread-safe.
 */
public final class SinkBackups implements AutoCloseable
{
    private static final Logger LOG = LoggerFactory.getLogger(SinkBackups.class);

    /** The snapshot of backup {@code backupId} in every sink: lower case, as OpenSearch wants it. */
    public static String snapshotName(final long backupId)
    {
        return "sluice-backup-" + backupId;
    }

    /** One exporter's snapshot of a backup. */
    public record SinkSnapshot(String exporterId, String snapshot, String state, String detail)
    {
    }

    private final int brokerId;
    private final Path dataDir;
    private final Map<String, ExporterConfig> exporters;
    private final ExporterRegistry registry;
    private final ExecutorService calls;

    public SinkBackups(
        final int brokerId, final Path dataDir, final Map<String, ExporterConfig> exporters, final ExporterRegistry registry)
    {
        this.brokerId = brokerId;
        this.dataDir = dataDir;
        this.exporters = new TreeMap<>(exporters);
        this.registry = registry;
        this.calls = Executors.newSingleThreadExecutor((r) ->
        {
            final Thread thread = new Thread(r, "broker-" + brokerId + "-sink-snapshots");
            thread.setDaemon(true);
            return thread;
        });
    }

    /** Takes (or, with {@code take} false, checks) backup {@code backupId}'s snapshot of every snapshot-taking sink. */
    public CompletableFuture<List<SinkSnapshot>> snapshots(final long backupId, final boolean take, final long timeoutMillis)
    {
        return CompletableFuture.supplyAsync(() -> run(backupId, take, timeoutMillis), calls)
            .orTimeout(Math.max(1, timeoutMillis), TimeUnit.MILLISECONDS);
    }

    private List<SinkSnapshot> run(final long backupId, final boolean take, final long timeoutMillis)
    {
        final String name = snapshotName(backupId);
        final List<SinkSnapshot> answered = new ArrayList<>();
        for (final ExporterConfig config : exporters.values())
        {
            try (SinkSnapshots snapshots = snapshotsOf(config))
            {
                if (snapshots == null)
                {
                    continue;
                }
                final long startNs = System.nanoTime();
                final SinkSnapshots.Snapshot snapshot = take ? snapshots.take(name, timeoutMillis) :
                    snapshots.check(name, timeoutMillis);
                answered.add(new SinkSnapshot(config.id(), name, snapshot.state(), snapshot.detail()));
                LOG.info("broker {}: backup {}: snapshot {} of exporter {} {} {} in {} ms ({})", brokerId, backupId, name,
                    config.id(), take ? "taken:" : "checked:", snapshot.state(),
                    TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - startNs), snapshot.detail());
            }
            catch (final Exception e)
            {
                LOG.warn("broker {}: backup {}: snapshot {} of exporter {} failed", brokerId, backupId, name, config.id(), e);
                answered.add(new SinkSnapshot(config.id(), name, "FAILED", String.valueOf(e.getMessage())));
            }
        }
        return answered;
    }

    /** The exporter's sink snapshots, or null when it takes none. */
    private SinkSnapshots snapshotsOf(final ExporterConfig config) throws Exception
    {
        final Exporter exporter = registry.create(config);
        exporter.configure(new ExporterContext(config.id(), ExporterRegistry.CHECK_PARTITION_ID, brokerId, dataDir,
            config.exporterProperties()));
        return exporter.snapshots();
    }

    @Override
    public void close()
    {
        calls.shutdownNow();
    }
}
