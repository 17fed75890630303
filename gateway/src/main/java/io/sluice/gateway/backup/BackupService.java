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
import io.sluice.protocol.backup.BackupManifest.SinkCut;
import io.sluice.protocol.backup.BackupStore;
import io.sluice.protocol.backup.BackupVerifier;
import io.sluice.protocol.backup.PartitionUpload;
import io.sluice.protocol.cluster.PartitionDistribution;
import io.sluice.protocol.cluster.PartitionReplica;
import io.sluice.protocol.codecs.ErrorCode;
import io.sluice.protocol.transport.PeerUnreachableException;
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
import java.util.concurrent.TimeoutException;
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
    /** {@code sluice.backup.hold-timeout}'s default (CONTRACT §8). */
    public static final Duration DEFAULT_HOLD_TIMEOUT = Duration.ofSeconds(60);
    /**
     * Beyond the hold's lease, how long a started backup without a cut still reads IN_PROGRESS: the clocks of the
     * gateway taking it and of the one reading may differ a little.
     */
    static final long STARTED_GRACE_MILLIS = 10_000;

    private final BackupClient client;
    private final ClusterTopology topology;
    private final BackupStore store;
    private final Duration requestTimeout;
    private final Duration uploadTimeout;
    private final Duration holdTimeout;
    private final Integer retentionMaxCount;
    private final Clock clock;
    private final AtomicBoolean cutInProgress = new AtomicBoolean();
    private final Set<Long> watched = ConcurrentHashMap.newKeySet();
    private final ScheduledExecutorService watcher;
    private final UploaderOutages outages;

    /** With the default hold timeout, {@link #DEFAULT_HOLD_TIMEOUT}. */
    public BackupService(
        final BackupClient client,
        final ClusterTopology topology,
        final BackupStore store,
        final Duration requestTimeout,
        final Duration uploadTimeout,
        final Integer retentionMaxCount,
        final Clock clock)
    {
        this(client, topology, store, requestTimeout, uploadTimeout, DEFAULT_HOLD_TIMEOUT, retentionMaxCount, clock);
    }

    /**
     * @param uploadTimeout how long after its cut a backup may stay IN_PROGRESS: a partition whose broker has not
     *                      reported by then (it died, or the store stopped answering) fails the backup.
     * @param holdTimeout   the lease of a backup's hold ({@code sluice.backup.hold-timeout}): a cut not committed
     *                      within it fails, and a backup started that long ago (plus a grace) without a cut reads FAILED.
     */
    public BackupService(
        final BackupClient client,
        final ClusterTopology topology,
        final BackupStore store,
        final Duration requestTimeout,
        final Duration uploadTimeout,
        final Duration holdTimeout,
        final Integer retentionMaxCount,
        final Clock clock)
    {
        if (holdTimeout.isNegative() || holdTimeout.toMillis() < 1)
        {
            throw new IllegalArgumentException("sluice.backup.hold-timeout must be positive, was " + holdTimeout);
        }
        this.holdTimeout = holdTimeout;
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
     * cut is committed and the hold released, or fails with a {@link ManagementException}: 400, 409 (an id not above
     * the latest, another backup's cut in progress anywhere in the cluster), 503 or 504 (naming what failed; the hold
     * is released, nothing of the backup's data is kept, and once the hold was taken the backup reads FAILED).
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
            checkIdIsNewest(backupId);
            return new Cut(backupId).run().whenComplete((accepted, error) -> cutInProgress.set(false));
        }
        catch (final RuntimeException e)
        {
            cutInProgress.set(false);
            return CompletableFuture.failedFuture(e);
        }
    }

    /** 409 unless {@code backupId} is above every backup in the store; 503 when the store cannot be read. */
    private void checkIdIsNewest(final long backupId)
    {
        final List<Long> ids;
        try
        {
            ids = BackupKeys.backupIds(store);
        }
        catch (final IOException | RuntimeException e)
        {
            throw new ManagementException(HttpStatus.SERVICE_UNAVAILABLE, "cannot read the " + store.describe() + ": " +
                e.getMessage());
        }
        if (!ids.isEmpty() && backupId <= ids.get(ids.size() - 1))
        {
            throw new ManagementException(HttpStatus.CONFLICT,
                "backup id " + backupId + " is not greater than the latest backup's, " + ids.get(ids.size() - 1));
        }
    }

    /**
     * One backup's cut, in order: take the hold (the control group refuses a second backup's: 409), check no sink
     * has a snapshot of the backup's name yet (409), record the backup as started, wait until every pair's exporters
     * obey the hold (their acknowledged positions stop moving), snapshot the sinks (so every record at or below
     * X(e, p) is in them, and nothing above what the captures hold, which come after), capture every partition,
     * release the hold, and commit the cut. A failure once the hold is taken releases it, and once the backup is
     * recorded as started, records it FAILED with the reason.
     */
    private final class Cut
    {
        /** A sink's state of a snapshot still being taken. */
        private static final String IN_PROGRESS = "IN_PROGRESS";

        private final long backupId;
        private final long createdAt = clock.millis();
        private final PartitionDistribution distribution = topology.distribution();
        private long holdStartedNanos;
        /** The hold was taken: a failure from here releases it. */
        private volatile boolean holdTaken;
        /** {@code started} is in the store: a failure from here records the backup FAILED. */
        private volatile boolean started;

        Cut(final long backupId)
        {
            this.backupId = backupId;
        }

        /**
         * 409 (the hold released, nothing kept) when a sink already holds a good or running snapshot named for this
         * backup (left by a backup of this id since deleted from the store, or by another cluster writing to the same
         * repository): a take that finds its snapshot there answers that snapshot's state, which is how a take retried
         * through a second broker gets the first one's outcome, so the name must be free before the backup starts.
         */
        private CompletableFuture<Void> checkSinkSnapshotsFree()
        {
            return anyBroker("checking the sinks for a snapshot of backup " + backupId,
                (broker, timeout) -> client.sinkSnapshots(broker, backupId, false, timeout))
                .exceptionally((failure) ->
                {
                    final Throwable cause = Futures.unwrapAll(failure);
                    throw new ManagementException(status(cause), "backup " + backupId + " not taken, nothing kept: " +
                        "its sinks could not be checked: " + cause.getMessage());
                })
                .thenAccept((sinks) ->
                {
                    final List<String> there = sinks.stream()
                        .filter((sink) -> sink.succeeded() || IN_PROGRESS.equals(sink.state()))
                        .map((sink) -> "exporter " + sink.exporterId() + "'s sink already holds snapshot " +
                            sink.snapshot() + " (" + sink.state() + ", " + sink.detail() + ")").toList();
                    if (!there.isEmpty())
                    {
                        throw new ManagementException(HttpStatus.CONFLICT, "backup " + backupId + " not taken: " +
                            String.join("; ", there) + "; it is not this backup's: delete it from the repository or " +
                            "take the backup with a greater id");
                    }
                });
        }

        CompletableFuture<BackupView.Accepted> run()
        {
            holdStartedNanos = System.nanoTime();
            return anyBroker("taking the hold of backup " + backupId,
                (broker, timeout) -> client.takeHold(broker, backupId, holdTimeout, timeout))
                .exceptionally((failure) ->
                {
                    final Throwable cause = Futures.unwrapAll(failure);
                    if (BrokerFailure.errorCode(cause) == ErrorCode.CONFLICT)
                    {
                        throw new ManagementException(HttpStatus.CONFLICT, "backup " + backupId + " not taken: " +
                            cause.getMessage());
                    }
                    throw new ManagementException(status(cause), "backup " + backupId + " not taken, nothing kept: " +
                        "its hold could not be taken: " + cause.getMessage());
                })
                .thenCompose((held) ->
                {
                    holdTaken = true;
                    return afterHold();
                })
                .exceptionallyCompose(this::abort);
        }

        private CompletableFuture<BackupView.Accepted> afterHold()
        {
            // Another gateway's backup may have taken and released its hold since the first check.
            checkIdIsNewest(backupId);
            // Under the hold, so no other backup's sink snapshot is being taken (a broker takes them one at a time).
            return checkSinkSnapshotsFree().thenCompose((free) -> recordStarted()).thenCompose((recorded) -> awaitObeyed())
                .thenCompose((obeyed) -> takeSinkSnapshots())
                .thenCompose((sinks) -> capture().thenCompose((cuts) -> release().thenApply((holdMillis) ->
                    commit(cuts, sinks, holdMillis))));
        }

        private CompletableFuture<Void> recordStarted()
        {
            try
            {
                store.putBytes(BackupKeys.started(backupId), new BackupManifest(backupId, createdAt, 0, 0,
                    layout(distribution), List.of()).toBytes());
                started = true;
                return CompletableFuture.completedFuture(null);
            }
            catch (final IOException e)
            {
                throw new ManagementException(HttpStatus.SERVICE_UNAVAILABLE, "cannot write to the " + store.describe() +
                    ": " + e.getMessage());
            }
        }

        /** Every (broker, partition) pair, as a pause: a pair on a broker known down fails at once. */
        private CompletableFuture<Void> awaitObeyed()
        {
            final long deadline = System.nanoTime() + requestTimeout.toNanos();
            final Map<PartitionReplica, CompletableFuture<Long>> pairs = new LinkedHashMap<>();
            for (int p = 1; p <= distribution.partitionCount(); p++)
            {
                for (final int broker : distribution.replicasOf(p))
                {
                    final PartitionReplica pair = new PartitionReplica(broker, p);
                    pairs.put(pair, topology.isKnownDown(broker) ?
                        CompletableFuture.failedFuture(new PeerUnreachableException("broker " + broker + " is down", null)) :
                        client.awaitHoldObeyed(broker, p, backupId, left(deadline)));
                }
            }
            return CompletableFuture.allOf(pairs.values().toArray(CompletableFuture[]::new)).handle((ignored, error) ->
            {
                final List<String> failed = new ArrayList<>();
                boolean anyFailed = false;
                for (final Map.Entry<PartitionReplica, CompletableFuture<Long>> pair : pairs.entrySet())
                {
                    final CompletableFuture<Long> answer = pair.getValue();
                    if (answer.isCompletedExceptionally())
                    {
                        final Throwable cause = Futures.unwrapAll(answer.handle((v, e) -> e).join());
                        anyFailed |= BrokerFailure.of(cause) != BrokerFailure.TIMED_OUT;
                        failed.add(pair.getKey() + ": " + describe(cause));
                    }
                }
                if (!failed.isEmpty())
                {
                    throw new ManagementException(anyFailed ? HttpStatus.SERVICE_UNAVAILABLE : HttpStatus.GATEWAY_TIMEOUT,
                        failed.size() + " of " + pairs.size() + " pairs did not hold acknowledgements: " +
                        String.join("; ", failed));
                }
                return null;
            });
        }

        /** Within the hold's lease, leaving the captures their time (their request timeout, at most a third of it). */
        private CompletableFuture<List<SinkCut>> takeSinkSnapshots()
        {
            final long leftMillis = holdTimeout.toMillis() - (clock.millis() - createdAt) -
                Math.min(requestTimeout.toMillis(), holdTimeout.toMillis() / 3);
            final Duration timeout = Duration.ofMillis(Math.max(1_000, leftMillis));
            return anyBroker("the sink snapshots of backup " + backupId,
                (broker, ignored) -> client.sinkSnapshots(broker, backupId, true, timeout))
                .thenApply((sinks) ->
                {
                    final List<String> refused = sinks.stream().filter((sink) -> !sink.succeeded())
                        .map((sink) -> "the snapshot " + sink.snapshot() + " of exporter " + sink.exporterId() + " is " +
                            sink.state() + " (" + sink.detail() + ")").toList();
                    if (!refused.isEmpty())
                    {
                        throw new ManagementException(HttpStatus.SERVICE_UNAVAILABLE, String.join("; ", refused));
                    }
                    return sinks;
                });
        }

        private CompletableFuture<List<PartitionCut>> capture()
        {
            final long deadline = System.nanoTime() + requestTimeout.toNanos();
            final Map<Integer, CompletableFuture<PartitionCut>> captures = new LinkedHashMap<>();
            for (int p = 1; p <= distribution.partitionCount(); p++)
            {
                captures.put(p, captureOnLeader(distribution, p, backupId, deadline));
            }
            return CompletableFuture.allOf(captures.values().toArray(CompletableFuture[]::new)).handle((ignored, error) ->
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
                    throw new ManagementException(anyFailed ? HttpStatus.SERVICE_UNAVAILABLE : HttpStatus.GATEWAY_TIMEOUT,
                        failed.size() + " of " + captures.size() + " partitions not captured: " + String.join("; ", failed));
                }
                if (clock.millis() - createdAt > holdTimeout.toMillis())
                {
                    // The hold's lease may have ended it: a reader may already count the backup FAILED.
                    throw new ManagementException(HttpStatus.GATEWAY_TIMEOUT, "the cut took longer than the hold's " +
                        "lease (sluice.backup.hold-timeout=" + holdTimeout + ")");
                }
                return cuts;
            });
        }

        /** Releases the hold; completes with how long acknowledgements were held. A failed release is left to the lease. */
        private CompletableFuture<Long> release()
        {
            return anyBroker("releasing the hold of backup " + backupId,
                (broker, timeout) -> client.releaseHold(broker, backupId, timeout))
                .handle((held, failure) ->
                {
                    final long holdMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - holdStartedNanos);
                    if (failure != null)
                    {
                        LOG.warn("backup {}: releasing its hold failed; its lease ends it within {}: {}", backupId,
                            holdTimeout, Futures.unwrapAll(failure).getMessage());
                    }
                    return holdMillis;
                });
        }

        private BackupView.Accepted commit(final List<PartitionCut> cuts, final List<SinkCut> sinks, final long holdMillis)
        {
            final BackupManifest cut = new BackupManifest(backupId, createdAt, 0, holdMillis, layout(distribution), cuts,
                sinks);
            try
            {
                store.putBytes(BackupKeys.cut(backupId), cut.toBytes());
            }
            catch (final IOException e)
            {
                throw new ManagementException(HttpStatus.SERVICE_UNAVAILABLE, "cannot write its cut to the " +
                    store.describe() + ": " + e.getMessage());
            }
            watched.add(backupId);
            LOG.info("backup {}: cut committed in {} ms ({} partitions, {} sink snapshots), acknowledgements held {} ms; " +
                "uploads run on the brokers", backupId, clock.millis() - createdAt, cuts.size(), sinks.size(), holdMillis);
            return new BackupView.Accepted(backupId, BackupState.IN_PROGRESS, holdMillis);
        }

        /** Releases the hold (waiting for it, so the answer comes with exports acknowledged again) and records FAILED. */
        private CompletableFuture<BackupView.Accepted> abort(final Throwable failure)
        {
            final Throwable cause = Futures.unwrapAll(failure);
            final ManagementException refused = cause instanceof ManagementException m ? m :
                new ManagementException(status(cause), String.valueOf(cause.getMessage()));
            if (!holdTaken)
            {
                return CompletableFuture.failedFuture(refused);
            }
            return release().handle((held, ignored) ->
            {
                final String reason = "backup " + backupId + " failed before its cut was committed, hold released, " +
                    "nothing kept: " + refused.getMessage();
                if (started)
                {
                    try
                    {
                        store.putBytes(BackupKeys.failed(backupId), reason.getBytes(StandardCharsets.UTF_8));
                    }
                    catch (final IOException e)
                    {
                        LOG.warn("backup {}: cannot record it FAILED in the {}: {}", backupId, store.describe(),
                            e.getMessage());
                    }
                }
                LOG.warn("{}", reason);
                throw new ManagementException(refused.status(), started ? reason : refused.getMessage());
            });
        }

    }

    /**
     * Asks one broker after another, the control group's leader first, until one answers (a refusal the broker
     * would repeat, such as CONFLICT, ends it), within the request timeout.
     */
    private <T> CompletableFuture<T> anyBroker(final String what, final BrokerCall<T> call)
    {
        final LinkedHashSet<Integer> order = new LinkedHashSet<>();
        topology.controlLeader().ifPresent(order::add);
        for (int b = 0; b < topology.distribution().brokerCount(); b++)
        {
            if (!topology.isKnownDown(b))
            {
                order.add(b);
            }
        }
        return tryEach(new ArrayList<>(order), 0, System.nanoTime() + requestTimeout.toNanos(), call,
            new TimeoutException(what + ": no broker answered within " + requestTimeout));
    }

    private <T> CompletableFuture<T> tryEach(
        final List<Integer> brokers, final int next, final long deadline, final BrokerCall<T> call,
        final Throwable last)
    {
        if (next >= brokers.size() || deadline - System.nanoTime() <= 0)
        {
            return CompletableFuture.failedFuture(last);
        }
        return call.call(brokers.get(next), left(deadline)).handle((answer, error) ->
        {
            if (error == null)
            {
                return CompletableFuture.completedFuture(answer);
            }
            final BrokerFailure failure = BrokerFailure.of(error);
            if (failure == BrokerFailure.REFUSED || failure == BrokerFailure.OTHER)
            {
                return CompletableFuture.<T>failedFuture(error);
            }
            return tryEach(brokers, next + 1, deadline, call, error);
        }).thenCompose((f) -> f);
    }

    @FunctionalInterface
    private interface BrokerCall<T>
    {
        CompletableFuture<T> call(int brokerId, Duration timeout);
    }

    private static Duration left(final long deadlineNanos)
    {
        return Duration.ofNanos(Math.max(1_000_000, deadlineNanos - System.nanoTime()));
    }

    private static HttpStatus status(final Throwable cause)
    {
        if (cause instanceof ManagementException m)
        {
            return HttpStatus.valueOf(m.status().value());
        }
        return BrokerFailure.of(cause) == BrokerFailure.TIMED_OUT ? HttpStatus.GATEWAY_TIMEOUT :
            HttpStatus.SERVICE_UNAVAILABLE;
    }

    private static String describe(final Throwable cause)
    {
        return switch (BrokerFailure.of(cause))
        {
            case TIMED_OUT -> "no answer in time";
            case UNREACHABLE -> "unreachable" + (cause.getMessage() == null ? "" : " (" + cause.getMessage() + ")");
            default -> String.valueOf(cause.getMessage());
        };
    }

    private static BackupManifest.Layout layout(final PartitionDistribution distribution)
    {
        return new BackupManifest.Layout(distribution.brokerCount(), distribution.partitionCount(),
            distribution.replicationFactor());
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
                return startedOnly(backupId);
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

    /** A backup whose cut is not committed: IN_PROGRESS within its hold's lease, FAILED after (its gateway died). */
    private BackupView startedOnly(final long backupId) throws IOException
    {
        final byte[] startedBytes = store.getBytes(BackupKeys.started(backupId));
        if (startedBytes == null)
        {
            throw new ManagementException(HttpStatus.NOT_FOUND, "no backup " + backupId + " in the " + store.describe());
        }
        final BackupManifest started = BackupManifest.parse(startedBytes, BackupKeys.started(backupId));
        final byte[] failed = store.getBytes(BackupKeys.failed(backupId));
        if (failed != null)
        {
            return view(started, BackupState.FAILED, new String(failed, StandardCharsets.UTF_8), Map.of());
        }
        if (clock.millis() - started.createdAtMillis() > holdTimeout.toMillis() + STARTED_GRACE_MILLIS)
        {
            return fail(started, Map.of(), "backup " + backupId + " failed: its cut was not committed within the " +
                "hold's lease (sluice.backup.hold-timeout=" + holdTimeout + "): the gateway taking it stopped, and the " +
                "control group ended its hold");
        }
        return view(started, BackupState.IN_PROGRESS, null, Map.of());
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
        final BackupView view = status(backupId);
        try
        {
            final BackupVerifier.Verification verification = BackupVerifier.verify(store, backupId);
            final List<BackupView.Problem> problems = new ArrayList<>(verification.problems().stream()
                .map((p) -> new BackupView.Problem(p.object(), p.problem())).toList());
            problems.addAll(checkSinks(backupId, view.sinks()));
            return new BackupView.Verification(backupId, problems.isEmpty(), verification.checkedObjects() +
                view.sinks().size(), problems);
        }
        catch (final IOException e)
        {
            throw new ManagementException(HttpStatus.SERVICE_UNAVAILABLE, "cannot read backup " + backupId +
                " from the " + store.describe() + ": " + e.getMessage());
        }
    }

    /** Each sink snapshot of the backup must be SUCCESS in its sink now, as a broker with the exporters sees it. */
    private List<BackupView.Problem> checkSinks(final long backupId, final List<BackupView.SinkView> sinks)
    {
        if (sinks.isEmpty())
        {
            return List.of();
        }
        final List<BackupView.Problem> problems = new ArrayList<>();
        final List<SinkCut> found;
        try
        {
            found = anyBroker("checking the sink snapshots of backup " + backupId,
                (broker, timeout) -> client.sinkSnapshots(broker, backupId, false, timeout)).join();
        }
        catch (final RuntimeException e)
        {
            for (final BackupView.SinkView sink : sinks)
            {
                problems.add(new BackupView.Problem(sinkObject(sink.exporterId(), sink.snapshot()),
                    "cannot be checked: " + Futures.unwrapAll(e).getMessage()));
            }
            return problems;
        }
        for (final BackupView.SinkView sink : sinks)
        {
            final SinkCut now = found.stream().filter((f) -> f.exporterId().equals(sink.exporterId())).findFirst()
                .orElse(null);
            if (now == null)
            {
                problems.add(new BackupView.Problem(sinkObject(sink.exporterId(), sink.snapshot()),
                    "exporter " + sink.exporterId() + " takes no snapshots now (is snapshot.repository still set?)"));
            }
            else if (!now.succeeded())
            {
                problems.add(new BackupView.Problem(sinkObject(sink.exporterId(), sink.snapshot()),
                    "snapshot is " + now.state() + " (" + now.detail() + ")"));
            }
        }
        return problems;
    }

    private static String sinkObject(final String exporterId, final String snapshot)
    {
        return "sink " + exporterId + " snapshot " + snapshot;
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
            backup.holdMillis(), partitions.stream().mapToLong(PartitionView::bytes).sum(), partitions,
            backup.sinks().stream().map((sink) -> new BackupView.SinkView(sink.exporterId(), sink.snapshot(),
                sink.state())).toList());
    }

    @Override
    public void close()
    {
        watcher.shutdownNow();
    }
}
