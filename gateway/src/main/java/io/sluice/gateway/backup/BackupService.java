package io.sluice.gateway.backup;

import io.sluice.gateway.backup.BackupView.BackupState;
import io.sluice.gateway.backup.BackupView.PartitionView;
import io.sluice.gateway.broker.BrokerFailure;
import io.sluice.gateway.management.ManagementException;
import io.sluice.gateway.topology.ClusterTopology;
import io.sluice.protocol.backup.BackupKeys;
import io.sluice.protocol.backup.BackupManifest;
import io.sluice.protocol.backup.BackupManifest.PartitionCut;
import io.sluice.protocol.backup.BackupManifest.PartitionObject;
import io.sluice.protocol.backup.BackupStore;
import io.sluice.protocol.backup.BackupVerifier;
import io.sluice.protocol.backup.PartitionUpload;
import io.sluice.protocol.cluster.PartitionDistribution;
import io.sluice.protocol.concurrent.Futures;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.http.HttpStatus;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.OptionalInt;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * Backups in one call (CONTRACT §8). A backup's cut is every partition's leader capturing its latest snapshot at once
 * ({@link BackupClient#capture}): the checkpoint C(p) and the exporters' positions X(e, p) come from one applied
 * state, so they are consistent by construction, and a capture holds every record its leader acknowledged before.
 * Once every partition answered, the cut is committed by writing it to the store ({@link BackupKeys#cut}): the brokers
 * upload only then, so a failed cut (a 503/504 naming the pairs) leaves nothing. The uploads run on the brokers;
 * this service puts the manifest together once every partition reported ({@link #status}, also run every
 * {@value #WATCH_MILLIS} ms for the backups this gateway started).
 * <p>
 * All of a backup's state is in the store, so any gateway answers for any backup and a restarted one goes on.
 * Thread-safe.
 */
public final class BackupService implements AutoCloseable
{
    private static final Logger LOG = LoggerFactory.getLogger(BackupService.class);
    static final long WATCH_MILLIS = 250;

    private final BackupClient client;
    private final ClusterTopology topology;
    private final BackupStore store;
    private final Duration requestTimeout;
    private final Duration uploadTimeout;
    private final Integer retentionMaxCount;
    private final Clock clock;
    private final AtomicBoolean cutInProgress = new AtomicBoolean();
    private final Set<Long> watched = ConcurrentHashMap.newKeySet();
    private final ScheduledExecutorService watcher;
    private final UploaderOutages outages;

    /**
     * @param uploadTimeout how long after its cut a backup may stay IN_PROGRESS: a partition whose broker has not
     *                      reported by then (it died, or the store stopped answering) fails the backup.
     */
    public BackupService(
        final BackupClient client,
        final ClusterTopology topology,
        final BackupStore store,
        final Duration requestTimeout,
        final Duration uploadTimeout,
        final Integer retentionMaxCount,
        final Clock clock)
    {
        this.client = client;
        this.topology = topology;
        this.store = store;
        this.requestTimeout = requestTimeout;
        this.uploadTimeout = uploadTimeout;
        this.retentionMaxCount = retentionMaxCount;
        this.clock = clock;
        this.outages = new UploaderOutages(topology, clock, UploaderOutages.DEFAULT_GRACE);
        this.watcher = Executors.newSingleThreadScheduledExecutor((r) ->
        {
            final Thread thread = new Thread(r, "sluice-backup-watcher");
            thread.setDaemon(true);
            return thread;
        });
        watcher.scheduleWithFixedDelay(this::watch, WATCH_MILLIS, WATCH_MILLIS, TimeUnit.MILLISECONDS);
    }

    public BackupStore store()
    {
        return store;
    }

    /**
     * Takes backup {@code requestedId} (null: the current epoch milliseconds); completes with the 202 answer once the
     * cut is committed, or fails with a {@link ManagementException} (409, 503, 504) having kept nothing.
     */
    public CompletableFuture<BackupView.Accepted> take(final Long requestedId)
    {
        final long backupId = requestedId == null ? clock.millis() : requestedId;
        if (backupId < 1)
        {
            return CompletableFuture.failedFuture(new ManagementException(HttpStatus.BAD_REQUEST,
                "backupId must be a positive integer, was " + backupId));
        }
        if (!cutInProgress.compareAndSet(false, true))
        {
            return CompletableFuture.failedFuture(new ManagementException(HttpStatus.CONFLICT,
                "another backup's cut is in progress; try again when it is answered"));
        }
        try
        {
            final List<Long> ids = BackupKeys.backupIds(store);
            if (!ids.isEmpty() && backupId <= ids.get(ids.size() - 1))
            {
                cutInProgress.set(false);
                return CompletableFuture.failedFuture(new ManagementException(HttpStatus.CONFLICT,
                    "backup id " + backupId + " is not greater than the latest backup's, " + ids.get(ids.size() - 1)));
            }
        }
        catch (final IOException | RuntimeException e)
        {
            cutInProgress.set(false);
            return CompletableFuture.failedFuture(new ManagementException(HttpStatus.SERVICE_UNAVAILABLE,
                "cannot read the " + store.describe() + ": " + e.getMessage()));
        }
        final long started = System.nanoTime();
        final long createdAt = clock.millis();
        final PartitionDistribution distribution = topology.distribution();
        final long deadline = started + requestTimeout.toNanos();
        final Map<Integer, CompletableFuture<PartitionCut>> captures = new LinkedHashMap<>();
        for (int p = 1; p <= distribution.partitionCount(); p++)
        {
            captures.put(p, captureOnLeader(distribution, p, backupId, deadline));
        }
        return CompletableFuture.allOf(captures.values().toArray(CompletableFuture[]::new))
            .handle((ignored, error) -> commit(backupId, createdAt, distribution, captures, started))
            .whenComplete((accepted, error) -> cutInProgress.set(false));
    }

    private BackupView.Accepted commit(
        final long backupId,
        final long createdAt,
        final PartitionDistribution distribution,
        final Map<Integer, CompletableFuture<PartitionCut>> captures,
        final long started)
    {
        final List<PartitionCut> cuts = new ArrayList<>();
        final List<String> failed = new ArrayList<>();
        boolean anyFailed = false;
        for (final Map.Entry<Integer, CompletableFuture<PartitionCut>> capture : captures.entrySet())
        {
            try
            {
                cuts.add(capture.getValue().join());
            }
            catch (final RuntimeException e)
            {
                final Throwable cause = Futures.unwrapAll(e);
                anyFailed |= BrokerFailure.of(cause) != BrokerFailure.TIMED_OUT;
                failed.add("partition " + capture.getKey() + ": " + cause.getMessage());
            }
        }
        if (!failed.isEmpty())
        {
            LOG.warn("backup {}: not taken, {} of {} partitions not captured: {}", backupId, failed.size(),
                captures.size(), failed);
            throw new ManagementException(anyFailed ? HttpStatus.SERVICE_UNAVAILABLE : HttpStatus.GATEWAY_TIMEOUT,
                "backup " + backupId + " not taken, nothing kept: " + String.join("; ", failed));
        }
        final BackupManifest cut = new BackupManifest(backupId, createdAt, 0, 0,
            new BackupManifest.Layout(distribution.brokerCount(), distribution.partitionCount(),
                distribution.replicationFactor()), cuts);
        try
        {
            store.putBytes(BackupKeys.cut(backupId), cut.toBytes());
        }
        catch (final IOException e)
        {
            throw new ManagementException(HttpStatus.SERVICE_UNAVAILABLE, "backup " + backupId +
                " not taken, nothing kept: cannot write its cut to the " + store.describe() + ": " + e.getMessage());
        }
        watched.add(backupId);
        LOG.info("backup {}: cut committed in {} ms ({} partitions); uploads run on the brokers", backupId,
            (System.nanoTime() - started) / 1_000_000, cuts.size());
        return new BackupView.Accepted(backupId, BackupState.IN_PROGRESS, cut.holdMillis());
    }

    /**
     * The partition's leader as the topology knows it first, then each other replica: a NOT_LEADER answer goes to the
     * leader it names next. Every replica at most once, within the deadline.
     */
    private CompletableFuture<PartitionCut> captureOnLeader(
        final PartitionDistribution distribution, final int partitionId, final long backupId, final long deadline)
    {
        final LinkedHashSet<Integer> order = new LinkedHashSet<>();
        final OptionalInt known = topology.leaderOf(partitionId);
        known.ifPresent(order::add);
        order.addAll(distribution.replicasOf(partitionId));
        return attempt(new ArrayList<>(order), new LinkedHashSet<>(), partitionId, backupId, deadline, null);
    }

    private CompletableFuture<PartitionCut> attempt(
        final List<Integer> candidates, final Set<Integer> tried, final int partitionId, final long backupId,
        final long deadline, final Throwable last)
    {
        final long leftNanos = deadline - System.nanoTime();
        final Integer next = candidates.stream().filter((b) -> !tried.contains(b)).findFirst().orElse(null);
        if (next == null || leftNanos <= 0)
        {
            return CompletableFuture.failedFuture(last != null ? last :
                new java.util.concurrent.TimeoutException("no leader answered within " + requestTimeout));
        }
        tried.add(next);
        return client.capture(next, partitionId, backupId, Duration.ofNanos(leftNanos)).handle((cut, error) ->
        {
            if (error == null)
            {
                return CompletableFuture.completedFuture(cut);
            }
            final int hint = BrokerFailure.leaderHint(error);
            final List<Integer> rest = new ArrayList<>(candidates);
            if (hint >= 0 && !tried.contains(hint))
            {
                rest.remove(Integer.valueOf(hint));
                rest.add(0, hint);
            }
            final BrokerFailure failure = BrokerFailure.of(error);
            if (failure == BrokerFailure.REFUSED || failure == BrokerFailure.OTHER)
            {
                return CompletableFuture.<PartitionCut>failedFuture(error);
            }
            return attempt(rest, tried, partitionId, backupId, deadline, error);
        }).thenCompose((f) -> f);
    }

    /** The backup as the store holds it; completes it (writes its manifest) once every partition reported. */
    public BackupView status(final long backupId)
    {
        try
        {
            final byte[] manifest = store.getBytes(BackupKeys.manifest(backupId));
            if (manifest != null)
            {
                final BackupManifest completed = BackupManifest.parse(manifest, BackupKeys.manifest(backupId));
                return view(completed, BackupState.COMPLETED, null, Map.of());
            }
            final byte[] cutBytes = store.getBytes(BackupKeys.cut(backupId));
            if (cutBytes == null)
            {
                throw new ManagementException(HttpStatus.NOT_FOUND, "no backup " + backupId + " in the " +
                    store.describe());
            }
            final BackupManifest cut = BackupManifest.parse(cutBytes, BackupKeys.cut(backupId));
            final Map<Integer, PartitionUpload> uploads = new LinkedHashMap<>();
            for (final PartitionCut partition : cut.partitions())
            {
                final byte[] report = store.getBytes(BackupKeys.upload(backupId, partition.partitionId()));
                if (report != null)
                {
                    uploads.put(partition.partitionId(), PartitionUpload.parse(report,
                        BackupKeys.upload(backupId, partition.partitionId())));
                }
            }
            final byte[] failed = store.getBytes(BackupKeys.failed(backupId));
            if (failed != null)
            {
                return view(cut, BackupState.FAILED, new String(failed, StandardCharsets.UTF_8), uploads);
            }
            final List<String> failures = uploads.values().stream().filter(PartitionUpload::failed)
                .map(PartitionUpload::failure).toList();
            if (failures.isEmpty() && uploads.size() < cut.partitions().size() &&
                clock.millis() - cut.createdAtMillis() > uploadTimeout.toMillis())
            {
                final List<String> missing = new ArrayList<>();
                for (final PartitionCut partition : cut.partitions())
                {
                    if (!uploads.containsKey(partition.partitionId()))
                    {
                        missing.add("partition " + partition.partitionId() + " (broker " + partition.brokerId() + ")");
                    }
                }
                return fail(cut, uploads, "not uploaded within " + uploadTimeout + ": " + String.join(", ", missing));
            }
            if (!failures.isEmpty())
            {
                return fail(cut, uploads, String.join("; ", failures));
            }
            final String lost = lostUploads(cut, uploads);
            if (lost != null)
            {
                return fail(cut, uploads, lost);
            }
            if (uploads.size() < cut.partitions().size())
            {
                return view(cut, BackupState.IN_PROGRESS, null, uploads);
            }
            final Map<Integer, List<PartitionObject>> objects = new LinkedHashMap<>();
            uploads.forEach((p, upload) -> objects.put(p, upload.objects()));
            final BackupManifest completed = cut.completed(objects, Math.max(1, clock.millis()));
            store.putBytes(BackupKeys.manifest(backupId), completed.toBytes());
            LOG.info("backup {}: completed, {} bytes in {} objects", backupId, completed.bytes(),
                objects.values().stream().mapToInt(List::size).sum());
            applyRetention();
            return view(completed, BackupState.COMPLETED, null, Map.of());
        }
        catch (final IOException e)
        {
            throw new ManagementException(HttpStatus.SERVICE_UNAVAILABLE, "cannot read backup " + backupId +
                " from the " + store.describe() + ": " + e.getMessage());
        }
        catch (final IllegalArgumentException e)
        {
            throw new ManagementException(HttpStatus.INTERNAL_SERVER_ERROR, "backup " + backupId + " is unreadable: " +
                e.getMessage());
        }
    }

    /**
     * The partitions whose uploading broker went down before it reported (its upload died with its process), or null
     * when there are none: such a backup can never complete, so it fails now rather than at the upload timeout.
     */
    private String lostUploads(final BackupManifest cut, final Map<Integer, PartitionUpload> uploads)
    {
        final List<String> lost = new ArrayList<>();
        for (final PartitionCut partition : cut.partitions())
        {
            final long downSince = uploads.containsKey(partition.partitionId()) ? -1 :
                outages.lostSince(partition.brokerId());
            if (downSince >= 0)
            {
                lost.add("partition " + partition.partitionId() + " on broker " + partition.brokerId() + ": the " +
                    "broker went down during the upload (no connection to it since " +
                    Instant.ofEpochMilli(downSince) + ")");
            }
        }
        return lost.isEmpty() ? null : String.join("; ", lost);
    }

    private BackupView fail(final BackupManifest cut, final Map<Integer, PartitionUpload> uploads, final String reason)
        throws IOException
    {
        store.putBytes(BackupKeys.failed(cut.backupId()), reason.getBytes(StandardCharsets.UTF_8));
        LOG.warn("backup {}: FAILED: {}", cut.backupId(), reason);
        return view(cut, BackupState.FAILED, reason, uploads);
    }

    /** Every backup in the store, newest first. */
    public BackupView.BackupList list()
    {
        final List<Long> ids;
        try
        {
            ids = new ArrayList<>(BackupKeys.backupIds(store));
        }
        catch (final IOException e)
        {
            throw new ManagementException(HttpStatus.SERVICE_UNAVAILABLE, "cannot list the " + store.describe() +
                ": " + e.getMessage());
        }
        Collections.reverse(ids);
        final List<BackupView> views = new ArrayList<>();
        for (final long id : ids)
        {
            try
            {
                views.add(status(id));
            }
            catch (final ManagementException e)
            {
                if (e.status().value() != HttpStatus.NOT_FOUND.value())
                {
                    throw e;
                }
            }
        }
        return new BackupView.BackupList(views);
    }

    /** Deletes a backup that is not in progress; 404 unknown, 409 in progress. */
    public void delete(final long backupId)
    {
        final BackupView view = status(backupId);
        if (view.state() == BackupState.IN_PROGRESS)
        {
            throw new ManagementException(HttpStatus.CONFLICT, "backup " + backupId + " is in progress; delete it " +
                "once it completed or failed");
        }
        try
        {
            store.deletePrefix(BackupKeys.prefix(backupId));
        }
        catch (final IOException e)
        {
            throw new ManagementException(HttpStatus.SERVICE_UNAVAILABLE, "cannot delete backup " + backupId +
                " from the " + store.describe() + ": " + e.getMessage());
        }
        watched.remove(backupId);
        LOG.info("backup {}: deleted", backupId);
    }

    /** Checks every object of a backup without restoring anything; 404 unknown. */
    public BackupView.Verification verify(final long backupId)
    {
        status(backupId);
        try
        {
            final BackupVerifier.Verification verification = BackupVerifier.verify(store, backupId);
            return new BackupView.Verification(backupId, verification.ok(), verification.checkedObjects(),
                verification.problems().stream().map((p) -> new BackupView.Problem(p.object(), p.problem())).toList());
        }
        catch (final IOException e)
        {
            throw new ManagementException(HttpStatus.SERVICE_UNAVAILABLE, "cannot read backup " + backupId +
                " from the " + store.describe() + ": " + e.getMessage());
        }
    }

    private void applyRetention() throws IOException
    {
        if (retentionMaxCount == null)
        {
            return;
        }
        final List<Long> completed = new ArrayList<>();
        for (final long id : BackupKeys.backupIds(store))
        {
            if (store.getBytes(BackupKeys.manifest(id)) != null)
            {
                completed.add(id);
            }
        }
        for (int i = 0; i < completed.size() - retentionMaxCount; i++)
        {
            store.deletePrefix(BackupKeys.prefix(completed.get(i)));
            LOG.info("backup {}: deleted by retention (sluice.backup.retention.max-count={})", completed.get(i),
                retentionMaxCount);
        }
    }

    private void watch()
    {
        try
        {
            outages.observe();
        }
        catch (final RuntimeException e)
        {
            LOG.debug("backup watcher: cannot read the topology", e); // an exception would end the schedule
        }
        for (final long id : List.copyOf(watched))
        {
            try
            {
                if (status(id).state() != BackupState.IN_PROGRESS)
                {
                    watched.remove(id);
                }
            }
            catch (final RuntimeException e)
            {
                LOG.debug("backup {}: status check failed", id, e);
            }
        }
    }

    private static BackupView view(
        final BackupManifest backup, final BackupState state, final String reason,
        final Map<Integer, PartitionUpload> uploads)
    {
        final List<PartitionView> partitions = new ArrayList<>();
        for (final PartitionCut cut : backup.partitions())
        {
            final PartitionUpload upload = uploads.get(cut.partitionId());
            final BackupState partitionState = state == BackupState.COMPLETED ? BackupState.COMPLETED :
                upload == null ? (state == BackupState.FAILED ? BackupState.FAILED : BackupState.IN_PROGRESS) :
                upload.failed() ? BackupState.FAILED : BackupState.COMPLETED;
            final long bytes = state == BackupState.COMPLETED ? cut.bytes() :
                upload == null ? 0 : upload.objects().stream().mapToLong(PartitionObject::size).sum();
            partitions.add(new PartitionView(cut.partitionId(), cut.brokerId(), partitionState,
                cut.checkpointPosition(), new java.util.TreeMap<>(cut.exporterPositions()), bytes));
        }
        return new BackupView(backup.backupId(), state, reason, Instant.ofEpochMilli(backup.createdAtMillis()).toString(),
            backup.isComplete() ? Instant.ofEpochMilli(backup.completedAtMillis()).toString() : null,
            backup.holdMillis(), partitions.stream().mapToLong(PartitionView::bytes).sum(), partitions, List.of());
    }

    @Override
    public void close()
    {
        watcher.shutdownNow();
    }
}
