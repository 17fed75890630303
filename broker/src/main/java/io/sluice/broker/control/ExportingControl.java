package io.sluice.broker.control;

import io.sluice.broker.partition.Partition;
import io.sluice.broker.errors.PartitionException;
import io.sluice.protocol.codecs.ErrorCode;
import io.sluice.protocol.concurrent.Futures;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Duration;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * A pause, soft pause or resume of one (broker, partition) pair on this broker (issue 15). The gateway sends every pair
 * of an operation at once, each request naming the whole operation ({@link ExportingChange}); this broker turns all
 * the pairs of one operation it gets into at most one control group entry, and answers a pair once
 * <ol>
 *   <li>its replica of the control group has applied the operation (or a newer one) for the pair's partition, and</li>
 *   <li>the partition's exporters and backfill tasks here obey it ({@code ExportingView.awaitObeyed}): nothing is
 *   exported here after a pause's answer, no position is acknowledged after a soft pause's.</li>
 * </ol>
 * The control group's leader proposes at once. Another broker, told the leader got the same operation
 * ({@code leaderTargeted}), first waits briefly for the leader's entry to reach its replica, and proposes (through the
 * leader) only if it does not: so an operation costs one control group commit, whatever the number of pairs. Every
 * wait is bounded by the admin timeout; nothing is answered that this replica has not applied. Thread-safe.
 */
public final class ExportingControl
{
    /**
     * At DEBUG, one line a pair ({@code exporting span version=.. partition=.. applied_us=.. obeyed_us=..}: from the
     * request's arrival to this replica's apply and to the exporters obeying) and one a proposal
     * ({@code exporting span version=.. committed_us=..}): where a pause's time goes, read by the pause-http benchmark.
     */
    private static final Logger LOG = LoggerFactory.getLogger(ExportingControl.class);

    /**
     * How long a broker other than the control leader waits for the leader's entry of the same operation before it
     * proposes the operation itself: the leader's commit reaches the other replicas within a few milliseconds.
     */
    static final long LEADER_ENTRY_WAIT_MS = 300;

    private final int brokerId;
    private final ControlGroup control;
    private final Map<Integer, Partition> partitions;
    private final Duration adminTimeout;
    /** The operations this broker is committing now, so all their pairs share one proposal. */
    private final ConcurrentHashMap<ExportingChange, CompletableFuture<Void>> committing = new ConcurrentHashMap<>();

    public ExportingControl(
        final int brokerId, final ControlGroup control, final Map<Integer, Partition> partitions, final Duration adminTimeout)
    {
        this.brokerId = brokerId;
        this.control = control;
        this.partitions = partitions;
        this.adminTimeout = adminTimeout;
    }

    /**
     * Applies {@code change} to the pair of this broker and {@code partitionId} (which the change must cover); completes
     * once answered as above, or fails with a {@link PartitionException}: TIMEOUT when the control group did not commit
     * within the admin timeout (no quorum), UNAVAILABLE when it could not be reached.
     */
    public CompletableFuture<Void> change(final int partitionId, final ExportingChange change, final boolean leaderTargeted)
    {
        final Partition partition = partitions.get(partitionId);
        if (partition == null || !change.covers(partitionId))
        {
            throw new IllegalArgumentException("broker " + brokerId + " cannot apply " + change + " to partition " +
                partitionId);
        }
        final long startNs = System.nanoTime();
        final ControlState state = control.state();
        final CompletableFuture<ExportingStamp> applied = state.stamp(partitionId).version() >= change.version() ?
            CompletableFuture.completedFuture(state.stamp(partitionId)) :
            committed(partitionId, change, leaderTargeted).handle((ignored, failure) -> failure)
                .thenCompose((failure) ->
                {
                    // Another broker's entry of the same operation may have reached this replica meanwhile.
                    final ExportingStamp held = state.stamp(partitionId);
                    if (failure == null || held.version() >= change.version())
                    {
                        return state.awaitVersion(partitionId, change.version());
                    }
                    return CompletableFuture.failedFuture(failure);
                });
        final long[] appliedNs = {0};
        return applied
            .thenCompose((stamp) ->
            {
                appliedNs[0] = System.nanoTime();
                return partition.exporting().awaitObeyed(stamp.state());
            })
            .whenComplete((ignored, failure) ->
            {
                if (failure == null && LOG.isDebugEnabled())
                {
                    LOG.debug("exporting span version={} partition={} applied_us={} obeyed_us={}", change.version(),
                        partitionId, (appliedNs[0] - startNs) / 1000, (System.nanoTime() - startNs) / 1000);
                }
            })
            .orTimeout(adminTimeout.toMillis(), TimeUnit.MILLISECONDS)
            .exceptionally((failure) ->
            {
                throw toPartitionException(partitionId, change, Futures.unwrapAll(failure));
            });
    }

    /**
     * Completes once the control group committed {@code change} or this replica applied it: one proposal for all the
     * pairs of one operation on this broker.
     */
    private CompletableFuture<Void> committed(final int partitionId, final ExportingChange change, final boolean leaderTargeted)
    {
        final CompletableFuture<Void> fresh = new CompletableFuture<>();
        final CompletableFuture<Void> running = committing.putIfAbsent(change, fresh);
        if (running != null)
        {
            return running;
        }
        fresh.whenComplete((ignored, error) -> committing.remove(change, fresh));
        final CompletableFuture<Void> proposed;
        if (control.isLeader() || !leaderTargeted)
        {
            proposed = propose(change);
        }
        else
        {
            // The leader got this operation too: its entry usually reaches this replica within milliseconds.
            proposed = control.state().awaitVersion(partitionId, change.version())
                .completeOnTimeout(null, LEADER_ENTRY_WAIT_MS, TimeUnit.MILLISECONDS)
                .thenCompose((stamp) -> stamp != null ? CompletableFuture.completedFuture(null) : propose(change));
        }
        proposed.whenComplete((ignored, error) ->
        {
            if (error != null)
            {
                fresh.completeExceptionally(error);
            }
            else
            {
                fresh.complete(null);
            }
        });
        return fresh;
    }

    private CompletableFuture<Void> propose(final ExportingChange change)
    {
        final long startNs = System.nanoTime();
        return control.commit(ControlEntries.exportingChange(change, brokerId, control.nowMicros())).thenApply((index) ->
        {
            if (LOG.isDebugEnabled())
            {
                LOG.debug("exporting span version={} committed_us={}", change.version(), (System.nanoTime() - startNs) / 1000);
            }
            return null;
        });
    }

    private PartitionException toPartitionException(final int partitionId, final ExportingChange change, final Throwable cause)
    {
        if (cause instanceof PartitionException failure)
        {
            return failure;
        }
        final String pair = "partition " + partitionId + " on broker " + brokerId;
        if (cause instanceof TimeoutException)
        {
            return new PartitionException(ErrorCode.TIMEOUT, partitionId, -1, pair + ": exporting " + change.state() +
                " version " + change.version() + " not applied within " + adminTimeout.toMillis() +
                " ms (no control group quorum? its leader is " + leaderName() + ")");
        }
        return new PartitionException(ErrorCode.UNAVAILABLE, partitionId, -1, pair + ": unavailable: " +
            cause.getMessage());
    }

    private String leaderName()
    {
        final int leader = control.leaderId();
        return leader < 0 ? "unknown" : "broker " + leader;
    }
}
