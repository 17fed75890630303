package io.sluice.dist.restore;

import io.sluice.broker.exporter.ExporterConfig;
import io.sluice.broker.exporter.ExporterRegistry;
import io.sluice.exporter.spi.Exporter;
import io.sluice.exporter.spi.ExporterContext;
import io.sluice.exporter.spi.SinkSnapshots;
import io.sluice.protocol.backup.BackupKeys;
import io.sluice.protocol.backup.BackupManifest;
import io.sluice.protocol.backup.BackupManifest.SinkCut;
import io.sluice.protocol.backup.BackupStore;

import java.io.IOException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * {@code restore --sinks}: each sink snapshot a backup took inside its cut goes back into its exporter's sink (for
 * OpenSearch: the index is deleted, then restored from the snapshot in the operator's repository, which must be
 * registered where the exporter points). {@link #prepare} checks everything first, the exporter configured with
 * snapshots and each snapshot SUCCESS in its sink, so a refusal writes nothing; {@link #restore} then replaces each
 * sink's data. After the brokers start, the exporters go on from the backed-up positions and the sinks converge to
 * exactly the restored log. Not thread-safe.
 */
final class SinkRestore implements AutoCloseable
{
    /** Bound of one sink's check or restore. */
    static final long TIMEOUT_MILLIS = 600_000;

    /** A sink that cannot be restored; the message says which and why. */
    static final class SinkRestoreException extends Exception
    {
        SinkRestoreException(final String message)
        {
            super(message);
        }
    }

    private final long backupId;
    private final Map<SinkCut, SinkSnapshots> sinks;

    private SinkRestore(final long backupId, final Map<SinkCut, SinkSnapshots> sinks)
    {
        this.backupId = backupId;
        this.sinks = sinks;
    }

    /** Checks every sink snapshot of the completed backup against the exporters configured here; touches no data. */
    static SinkRestore prepare(final BackupStore store, final long backupId, final Map<String, ExporterConfig> exporters)
        throws SinkRestoreException, IOException
    {
        final byte[] bytes = store.getBytes(BackupKeys.manifest(backupId));
        if (bytes == null)
        {
            throw new SinkRestoreException("refused, nothing written: backup " + backupId + " has no manifest in the " +
                store.describe() + " (not completed)");
        }
        final BackupManifest manifest = BackupManifest.parse(bytes, BackupKeys.manifest(backupId));
        final ExporterRegistry registry = ExporterRegistry.builtIn();
        final Map<SinkCut, SinkSnapshots> opened = new LinkedHashMap<>();
        final SinkRestore restore = new SinkRestore(backupId, opened);
        try
        {
            for (final SinkCut sink : manifest.sinks())
            {
                final ExporterConfig config = exporters.get(sink.exporterId());
                if (config == null)
                {
                    throw new SinkRestoreException("refused, nothing written: backup " + backupId + " holds a snapshot " +
                        "of exporter '" + sink.exporterId() + "', which is not configured here (sluice.exporters." +
                        sink.exporterId() + ".*)");
                }
                final Exporter exporter = registry.create(config);
                exporter.configure(new ExporterContext(config.id(), ExporterRegistry.CHECK_PARTITION_ID, -1, null,
                    config.exporterProperties()));
                final SinkSnapshots snapshots = exporter.snapshots();
                if (snapshots == null)
                {
                    throw new SinkRestoreException("refused, nothing written: exporter '" + sink.exporterId() +
                        "' takes no snapshots here (set sluice.exporters." + sink.exporterId() +
                        ".snapshot.repository to the repository backup " + backupId + " was taken into)");
                }
                opened.put(sink, snapshots);
                final SinkSnapshots.Snapshot found = snapshots.check(sink.snapshot(), TIMEOUT_MILLIS);
                if (!found.succeeded())
                {
                    throw new SinkRestoreException("refused, nothing written: the snapshot " + sink.snapshot() +
                        " of exporter '" + sink.exporterId() + "' is " + found.state() + " (" + found.detail() +
                        "; is the repository registered on the sink?)");
                }
            }
            return restore;
        }
        catch (final SinkRestoreException | IOException e)
        {
            restore.close();
            throw e;
        }
        catch (final Exception e)
        {
            restore.close();
            throw new SinkRestoreException("refused, nothing written: the sinks of backup " + backupId +
                " cannot be checked: " + e.getMessage());
        }
    }

    /** Restores each sink snapshot into its sink; answers a line for each. */
    List<String> restore() throws SinkRestoreException
    {
        final List<String> done = new ArrayList<>();
        if (sinks.isEmpty())
        {
            done.add("backup " + backupId + " holds no sink snapshot: the exporters export again from the restored " +
                "positions");
        }
        for (final Map.Entry<SinkCut, SinkSnapshots> sink : sinks.entrySet())
        {
            final SinkCut cut = sink.getKey();
            try
            {
                sink.getValue().restore(cut.snapshot(), TIMEOUT_MILLIS);
                done.add("exporter '" + cut.exporterId() + "': its sink restored from snapshot " + cut.snapshot());
            }
            catch (final Exception e)
            {
                throw new SinkRestoreException("the data directories are written, but restoring the snapshot " +
                    cut.snapshot() + " of exporter '" + cut.exporterId() + "' failed: " + e.getMessage() +
                    " (restore that snapshot by hand before starting the brokers)");
            }
        }
        return done;
    }

    @Override
    public void close()
    {
        for (final SinkSnapshots snapshots : sinks.values())
        {
            try
            {
                snapshots.close();
            }
            catch (final Exception e)
            {
                // nothing was changed through it that closing could lose
            }
        }
    }
}
