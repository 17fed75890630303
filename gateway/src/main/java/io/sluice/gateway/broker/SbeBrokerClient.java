package io.sluice.gateway.broker;

import io.sluice.protocol.cluster.PartitionDistribution;
import io.sluice.protocol.cluster.PartitionReplica;
import io.sluice.protocol.codecs.ErrorCode;
import io.sluice.protocol.concurrent.Futures;
import io.sluice.protocol.transport.RequestTimeoutException;
import io.sluice.protocol.transport.TransportClient;
import io.sluice.protocol.transport.TransportException;

import java.time.Duration;
import java.util.List;
import java.util.OptionalInt;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

/**
 * {@link BrokerClient} over the SBE transport.
 * <p>
 * Appends go to the partition's leader as the {@link LeaderLookup} knows it, then follow NOT_LEADER hints,
 * and otherwise walk the partition's replicas with a small backoff until the deadline. An attempt that times
 * out is tried again (possibly elsewhere) with the same {@link AppendId}, so the partition commits it at most once
 * (the caller gives every batch an id; without one a retried batch may be committed twice). Admin and topology
 * requests go to exactly one broker and are never retried. Thread-safe; callbacks run on transport threads
 * or on the one backoff thread and never block.
 */
public final class SbeBrokerClient implements BrokerClient
{
    /** Pause before trying again after a refused or unreachable leader, so an election can finish. */
    static final long RETRY_BACKOFF_MS = 50;
    /**
     * A leadership transfer or election on a loaded machine ends within 0.2–0.8 s; retrying at most every 200 ms adds
     * at most that much to a client's wait once it ended (a 400 ms cap made rolling-restart gaps reach 0.8–1 s).
     */
    static final long MAX_RETRY_BACKOFF_MS = 200;
    /** Shortest deadline of one append attempt within the caller's deadline. */
    static final Duration MIN_ATTEMPT_TIMEOUT = Duration.ofSeconds(1);

    private final TransportClient transport;
    private final PartitionDistribution distribution;
    private final BrokerRequests requests;
    private final LeaderLookup leaders;
    private final boolean ownsTransport;
    private final ScheduledExecutorService retryTimer;

    /**
     * @param ownsTransport whether {@link #close()} closes the transport too.
     */
    public SbeBrokerClient(
        final TransportClient transport,
        final PartitionDistribution distribution,
        final LeaderLookup leaders,
        final boolean ownsTransport)
    {
        this.transport = transport;
        this.distribution = distribution;
        this.requests = new BrokerRequests(transport, distribution);
        this.leaders = leaders;
        this.ownsTransport = ownsTransport;
        this.retryTimer = Executors.newSingleThreadScheduledExecutor(runnable ->
        {
            final Thread thread = new Thread(runnable, "sluice-broker-client-retry");
            thread.setDaemon(true);
            return thread;
        });
    }

    public PartitionDistribution distribution()
    {
        return distribution;
    }

    @Override
    public CompletableFuture<AdminResult> admin(
        final PartitionReplica target, final AdminOperation operation, final Duration timeout)
    {
        return requests.send(target, RequestWriters.admin(target.brokerId(), target.partitionId(), operation), timeout,
            (buffer, replica, what) -> ResponseDecoders.get().decodeAdmin(buffer, replica));
    }

    @Override
    public CompletableFuture<BrokerTopology> topology(final int brokerId, final Duration timeout)
    {
        if (!distribution.isBroker(brokerId))
        {
            return CompletableFuture.failedFuture(new IllegalArgumentException(
                "unknown broker " + brokerId + " (cluster has " + distribution.brokerCount() + ")"));
        }
        return requests.send(brokerId, RequestWriters.topology(brokerId), timeout,
            buffer -> ResponseDecoders.get().decodeTopology(buffer, brokerId));
    }

    @Override
    public CompletableFuture<AppendResult> append(
        final int partitionId, final List<RecordToAppend> records, final AppendId id, final Duration timeout)
    {
        final RequestWriters.AppendWriter request;
        try
        {
            if (!distribution.isPartition(partitionId))
            {
                throw new IllegalArgumentException("unknown partition " + partitionId +
                    " (partitions are 1.." + distribution.partitionCount() + ")");
            }
            request = RequestWriters.append(partitionId, records, id);
        }
        catch (final IllegalArgumentException e)
        {
            return CompletableFuture.failedFuture(e);
        }
        final AppendAttempts attempts = new AppendAttempts(partitionId, request, System.nanoTime() + timeout.toNanos());
        attempts.tryNext(-1);
        return attempts.result;
    }

    @Override
    public void close()
    {
        retryTimer.shutdownNow();
        if (ownsTransport)
        {
            transport.close();
        }
    }

    /** The retry loop of one append: one attempt in flight at a time, ending at the deadline. */
    private final class AppendAttempts
    {
        final CompletableFuture<AppendResult> result = new CompletableFuture<>();
        final int partitionId;
        final RequestWriters.AppendWriter request;
        final long deadlineNanos;
        int attempt;
        int replicaCursor;
        int lastBroker = -1;
        int hintsFollowed;
        String lastFailure = "no attempt made";

        AppendAttempts(final int partitionId, final RequestWriters.AppendWriter request, final long deadlineNanos)
        {
            this.partitionId = partitionId;
            this.request = request;
            this.deadlineNanos = deadlineNanos;
        }

        /** @param hintedLeader a leader named by a NOT_LEADER answer, or -1. */
        void tryNext(final int hintedLeader)
        {
            final long remainingNanos = deadlineNanos - System.nanoTime();
            if (remainingNanos <= 0)
            {
                result.completeExceptionally(new RequestTimeoutException(
                    "partition " + partitionId + ": not committed within the deadline (" + lastFailure + ")"));
                return;
            }
            attempt++;
            final int brokerId = pickBroker(hintedLeader);
            // Half the time left (at least MIN_ATTEMPT_TIMEOUT): a hung leader leaves time to try its successor.
            final long attemptNanos = Math.min(remainingNanos, Math.max(remainingNanos / 2, MIN_ATTEMPT_TIMEOUT.toNanos()));
            requests.send(brokerId, request, Duration.ofNanos(attemptNanos),
                buffer -> ResponseDecoders.get().decodeAppend(buffer, brokerId, partitionId))
                .whenComplete((appended, error) ->
                {
                    if (error == null)
                    {
                        result.complete(appended);
                    }
                    else
                    {
                        onFailure(brokerId, Futures.unwrapAll(error));
                    }
                });
        }

        private int pickBroker(final int hintedLeader)
        {
            final List<Integer> replicas = distribution.replicasOf(partitionId);
            final int picked;
            final OptionalInt known = leaders.leaderOf(partitionId);
            if (hintedLeader >= 0 && replicas.contains(hintedLeader))
            {
                picked = hintedLeader;
            }
            else if (known.isPresent() && replicas.contains(known.getAsInt()) && known.getAsInt() != lastBroker)
            {
                picked = known.getAsInt();
            }
            else
            {
                // No leader we trust yet (an election, or the known one just failed): walk the replicas.
                int candidate = replicas.get(replicaCursor++ % replicas.size());
                if (candidate == lastBroker && replicas.size() > 1)
                {
                    candidate = replicas.get(replicaCursor++ % replicas.size());
                }
                picked = candidate;
            }
            lastBroker = picked;
            return picked;
        }

        private void onFailure(final int brokerId, final Throwable error)
        {
            lastFailure = "broker " + brokerId + ": " + error.getMessage();
            switch (BrokerFailure.of(error))
            {
                case UNAVAILABLE ->
                {
                    if (BrokerFailure.errorCode(error) == ErrorCode.NOT_LEADER)
                    {
                        onNotLeader(brokerId, BrokerFailure.leaderHint(error));
                    }
                    else
                    {
                        retryAfterBackoff(-1);
                    }
                }
                case UNREACHABLE, TRANSPORT -> retryAfterBackoff(-1);
                // The batch may still commit there; its id makes the next attempt answer the same positions.
                case TIMED_OUT -> tryNext(-1);
                default -> result.completeExceptionally(error);
            }
        }

        private void onNotLeader(final int brokerId, final int hint)
        {
            if (hint >= 0 && hint != brokerId && hintsFollowed++ < 3)
            {
                tryNext(hint);
            }
            else
            {
                // Stale hints can point in a circle during an election: wait before following again.
                hintsFollowed = 0;
                retryAfterBackoff(hint != brokerId ? hint : -1);
            }
        }

        private void retryAfterBackoff(final int hintedLeader)
        {
            final long backoffMs = Math.min(MAX_RETRY_BACKOFF_MS, RETRY_BACKOFF_MS << Math.min(attempt - 1, 4));
            final long remainingMs = TimeUnit.NANOSECONDS.toMillis(deadlineNanos - System.nanoTime());
            if (remainingMs <= 0)
            {
                tryNext(hintedLeader);
                return;
            }
            try
            {
                retryTimer.schedule(() -> tryNext(hintedLeader), Math.min(backoffMs, remainingMs), TimeUnit.MILLISECONDS);
            }
            catch (final RuntimeException e)
            {
                result.completeExceptionally(new TransportException("broker client closed", e));
            }
        }
    }
}
