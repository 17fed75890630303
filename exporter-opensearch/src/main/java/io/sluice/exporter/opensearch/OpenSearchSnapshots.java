package io.sluice.exporter.opensearch;

import io.sluice.exporter.spi.SinkSnapshots;
import org.opensearch.client.opensearch.OpenSearchClient;
import org.opensearch.client.opensearch._types.OpenSearchException;
import org.opensearch.client.opensearch.snapshot.SnapshotInfo;
import org.opensearch.client.transport.httpclient5.ApacheHttpClient5Transport;

import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * Snapshots of an opensearch exporter's index in the repository the operator registered
 * ({@code sluice.exporters.<id>.snapshot.repository}), through the snapshot API: taken with
 * {@code wait_for_completion} (the shard is flushed first, so every document indexed before is in it), of the index
 * alone and without the cluster's global state; restored after deleting the index. Not thread-safe.
 */
final class OpenSearchSnapshots implements SinkSnapshots
{
    /** OpenSearch's state of a snapshot being taken. */
    private static final String IN_PROGRESS = "IN_PROGRESS";
    private static final long END_POLL_MILLIS = 50;

    private final OpenSearchExporterConfig config;
    private final String repository;
    private final ApacheHttpClient5Transport transport;
    private final OpenSearchClient client;

    OpenSearchSnapshots(final OpenSearchExporterConfig config)
    {
        this.config = config;
        this.repository = config.snapshotRepository();
        this.transport = OpenSearchExporter.newTransport(config);
        this.client = new OpenSearchClient(transport);
    }

    @Override
    public Snapshot take(final String name, final long timeoutMillis) throws Exception
    {
        final long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMillis);
        final Snapshot existing = check(name, timeoutMillis);
        if (!MISSING.equals(existing.state()))
        {
            // The gateway checked the name free before the backup's hold, so this is the same backup's take, retried
            // through this broker after another one answered too late: its outcome is this take's.
            return awaitEnd(existing, deadline);
        }
        try
        {
            // An index not created yet (nothing exported) is no error: the snapshot then holds no index.
            final SnapshotInfo info = client.snapshot().create((c) -> c.repository(repository).snapshot(name)
                .indices(config.index()).ignoreUnavailable(true).includeGlobalState(false).waitForCompletion(true))
                .snapshot();
            if (info == null)
            {
                return new Snapshot(name, "UNKNOWN", where() + ": the sink answered no snapshot");
            }
            return new Snapshot(name, info.state(), info.reason() == null ? where() : where() + ": " + info.reason());
        }
        catch (final OpenSearchException e)
        {
            // Two takes of the same backup may pass the check above at once: the one refused waits for the other's.
            final Snapshot now = check(name, timeoutMillis);
            return MISSING.equals(now.state()) || "UNKNOWN".equals(now.state()) ?
                new Snapshot(name, "REFUSED", where() + ": " + e.getMessage()) : awaitEnd(now, deadline);
        }
    }

    /** Polls a snapshot the sink is still taking until it ended or the deadline passed (then it stays IN_PROGRESS). */
    private Snapshot awaitEnd(final Snapshot first, final long deadline) throws Exception
    {
        Snapshot snapshot = first;
        while (IN_PROGRESS.equals(snapshot.state()) && deadline - System.nanoTime() > 0)
        {
            Thread.sleep(END_POLL_MILLIS);
            snapshot = check(snapshot.name(), TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime()));
        }
        return snapshot;
    }

    @Override
    public Snapshot check(final String name, final long timeoutMillis) throws Exception
    {
        try
        {
            final List<SnapshotInfo> found = client.snapshot().get((g) -> g.repository(repository).snapshot(name))
                .snapshots();
            if (found.isEmpty())
            {
                return new Snapshot(name, MISSING, where());
            }
            final SnapshotInfo info = found.get(0);
            return new Snapshot(name, info.state(), info.reason() == null ? where() : where() + ": " + info.reason());
        }
        catch (final OpenSearchException e)
        {
            return new Snapshot(name, e.status() == 404 ? MISSING : "UNKNOWN", where() + ": " + e.getMessage());
        }
    }

    @Override
    public void restore(final String name, final long timeoutMillis) throws Exception
    {
        final Snapshot snapshot = check(name, timeoutMillis);
        if (!snapshot.succeeded())
        {
            throw new IllegalStateException("snapshot " + name + " is " + snapshot.state() + " (" + snapshot.detail() +
                ")");
        }
        try
        {
            client.indices().delete((d) -> d.index(config.index()));
        }
        catch (final OpenSearchException e)
        {
            if (e.status() != 404)
            {
                throw e;
            }
        }
        final SnapshotInfo info = client.snapshot().get((g) -> g.repository(repository).snapshot(name)).snapshots().get(0);
        if (!info.indices().contains(config.index()))
        {
            return; // nothing was exported when it was taken: the index stays deleted, the exporters write it again
        }
        client.snapshot().restore((r) -> r.repository(repository).snapshot(name).indices(config.index())
            .includeGlobalState(false).waitForCompletion(true));
    }

    private String where()
    {
        return "index " + config.index() + " in repository " + repository;
    }

    @Override
    public void close() throws Exception
    {
        transport.close();
    }
}
