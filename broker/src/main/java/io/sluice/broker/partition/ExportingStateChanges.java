package io.sluice.broker.partition;

import io.sluice.protocol.codecs.ErrorCode;
import io.sluice.protocol.codecs.ExportingState;
import io.sluice.protocol.concurrent.Futures;
import org.apache.ratis.protocol.Message;
import org.apache.ratis.protocol.RaftClientReply;
import org.apache.ratis.server.RaftServer;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * The path of a pause or resume on one replica: the exporting state change is proposed here when this replica leads,
 * forwarded to the leader otherwise, and answered once this replica has applied it. Thread-safe.
 */
final class ExportingStateChanges
{
    /**
     * How long a follower waits for the leader's own copy of the same request to commit the change before it
     * forwards the entry itself: the gateway sends the same version to every replica at once.
     */
    private static final long FOLLOWER_WAIT_MS = 300;

    private final Partition partition;
    private final LeadershipTransfer transfers;
    private final Duration adminTimeout;
    private final int brokerId;
    private final int partitionId;

    ExportingStateChanges(final Partition partition, final LeadershipTransfer transfers, final Duration adminTimeout)
    {
        this.partition = partition;
        this.transfers = transfers;
        this.adminTimeout = adminTimeout;
        this.brokerId = partition.brokerId();
        this.partitionId = partition.partitionId();
    }

    /** See {@link Partition#changeExportingState}. */
    CompletableFuture<Void> change(final ExportingState state, final long version, final boolean leaderTargeted)
    {
        final PartitionState held = partition.state();
        if (held.exportingStateVersion() >= version)
        {
            return CompletableFuture.completedFuture(null);
        }
        final RaftServer.Division division = partition.openDivision();
        if (division == null)
        {
            return CompletableFuture.failedFuture(partition.unavailable("not started"));
        }
        final Message entry = StateEntries.exportingState(state, version);
        if (division.getInfo().isLeader())
        {
            return commit(proposeAsLeader(entry));
        }
        if (!leaderTargeted)
        {
            return commit(partition.submitThroughClient(entry));
        }
        // Follower: the leader's own request usually commits this version within a round trip; answer from the
        // applied state then, and forward the entry only when it does not show up (the sender's leader was stale).
        return held.awaitExportingStateVersion(version, FOLLOWER_WAIT_MS).thenCompose((applied) -> applied ?
            CompletableFuture.completedFuture(null) : commit(partition.submitThroughClient(entry)));
    }

    /**
     * Proposes an exporting state entry on this leader. Local writes are held while a leadership transfer starts
     * and while the broker stops (see {@link LeadershipTransfer}); an exporting state change must not fail for
     * that, so it waits for a running transfer and then proposes here if this replica still leads, or goes to the
     * leader through the Raft client otherwise, as it does when this replica's local proposal is refused.
     */
    private CompletableFuture<RaftClientReply> proposeAsLeader(final Message entry)
    {
        final CompletableFuture<Integer> running = transfers.running();
        if (running != null)
        {
            return running.handle((leader, error) -> null).thenCompose((ignored) -> proposeAsLeader(entry));
        }
        if (partition.isStopping() || !partition.isLeader())
        {
            return partition.submitThroughClient(entry);
        }
        return partition.submitLocal(entry).handle((reply, error) ->
        {
            if (reply != null && reply.isSuccess())
            {
                return CompletableFuture.completedFuture(reply);
            }
            // Refused (a transfer started meanwhile, or leadership moved): wait for the transfer, or forward.
            return transfers.isRunning() ? proposeAsLeader(entry) : partition.submitThroughClient(entry);
        }).thenCompose((next) -> next);
    }

    /** Waits until this replica applied the committed entry, at most the admin timeout. */
    private CompletableFuture<Void> commit(final CompletableFuture<RaftClientReply> committed)
    {
        return committed
            .thenCompose((reply) ->
            {
                if (!reply.isSuccess())
                {
                    throw partition.toPartitionException(reply);
                }
                return partition.stateMachine().awaitApplied(reply.getLogIndex());
            })
            .orTimeout(adminTimeout.toMillis(), TimeUnit.MILLISECONDS)
            .exceptionally((e) ->
            {
                final Throwable cause = Futures.unwrap(e);
                if (cause instanceof PartitionException)
                {
                    throw (PartitionException)cause;
                }
                if (cause instanceof TimeoutException)
                {
                    throw new PartitionException(ErrorCode.TIMEOUT, partitionId, -1, "partition " + partitionId +
                        " on broker " + brokerId + ": exporting state change not committed within " + adminTimeout +
                        " (no quorum?)");
                }
                throw partition.unavailable(cause.toString());
            });
    }
}
