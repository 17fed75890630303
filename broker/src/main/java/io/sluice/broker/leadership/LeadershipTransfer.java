package io.sluice.broker.leadership;

import io.sluice.broker.errors.PartitionException;
import io.sluice.broker.raft.RaftPeers;
import io.sluice.broker.raft.TransferRetries;
import io.sluice.protocol.codecs.ErrorCode;
import io.sluice.protocol.concurrent.Futures;
import org.apache.ratis.protocol.RaftClientReply;
import org.apache.ratis.protocol.exceptions.LeaderSteppingDownException;
import org.apache.ratis.protocol.exceptions.TransferLeadershipException;
import org.apache.ratis.server.RaftServer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.regex.Pattern;

/**
 * Hands a partition replica's leadership to another replica with Ratis's leadership transfer, one transfer at a time,
 * and keeps the replica's local writes out of its way: they are held while a transfer starts and while the broker
 * stops, and a leader that Ratis 3.2 leaves "stepping down" after a failed transfer is stepped down for good
 * ({@link #clearStuckStepDown}). Thread-safe.
 */
public final class LeadershipTransfer
{
    private static final Logger LOG = LoggerFactory.getLogger(LeadershipTransfer.class);
    /** Longer than a transfer's first step (the transferee's election) takes, far shorter than clients wait. */
    static final Duration STUCK_STEP_DOWN_GRACE = Duration.ofSeconds(1);
    /** The results after which Ratis 3.2 never completes its pending transfer (see {@link #leftSteppingDown}). */
    private static final Pattern TRANSFER_FAILED_BEFORE_START =
        Pattern.compile("NULL_FOLLOWER|NULL_LOG_APPENDER|LAST_ENTRY_CHANGED|COMPLETED_EXCEPTIONALLY|FAILED_TO_START");
    /**
     * One attempt of a transfer that is tried again within a longer bound (a requested rebalance, the controlled
     * shutdown's handover): a transfer to a live, in-sync replica takes well under a second; a transferee that
     * declined the election, or died a moment ago while still looking in sync, fails the attempt at this bound.
     */
    public static final Duration ATTEMPT = Duration.ofSeconds(2);
    /** A requested rebalance is not tried again with less than this left of its timeout. */
    private static final long MIN_RETRY_NANOS = TimeUnit.MILLISECONDS.toNanos(300);
    /** How long a transfer waits at most for proposed local writes to commit before it starts. */
    private static final long MAX_WRITE_DRAIN_MS = 200;

    private final Replica partition;
    private final FollowerSync followers;
    private final int brokerId;
    private final int partitionId;
    /**
     * The running leadership transfer, completing with the leader after it (-1 when it failed), or null: the
     * exporters stay stopped and appends wait while it runs.
     */
    private final AtomicReference<CompletableFuture<Integer>> transfer = new AtomicReference<>();
    /**
     * When local writes began to be refused as "stepping down" with none succeeding since (0: they are not), and
     * when the last one was; see {@link #clearStuckStepDown}.
     */
    private volatile long steppingDownRefusalSinceNanos;
    private volatile long steppingDownRefusalLastNanos;
    public LeadershipTransfer(final Replica partition, final FollowerSync followers)
    {
        this.partition = partition;
        this.followers = followers;
        this.brokerId = partition.brokerId();
        this.partitionId = partition.partitionId();
    }

    /** The running transfer (completing with the leader after it, -1 when it failed), or null. */
    public CompletableFuture<Integer> running()
    {
        return transfer.get();
    }

    public boolean isRunning()
    {
        return transfer.get() != null;
    }

    // ------------------------------------------------------------------------------------------- stuck step-down

    /** A new leader was elected: whatever refused writes before says nothing about this term. */
    public void onLeaderChanged()
    {
        steppingDownRefusalSinceNanos = 0;
    }

    /**
     * Ratis 3.2 leaves a leader "stepping down" for good when a leadership transfer fails before it starts (the
     * leader's log grew while it compared it with the transferee's, or the call to the transferee failed at once):
     * it refuses every write with LeaderSteppingDownException until some election happens, and only an election
     * clears it. Ratis does not expose that state, so the writes tell: when they have been refused that way for
     * {@link #STUCK_STEP_DOWN_GRACE}, none succeeded since, and no transfer of ours runs (nor one Ratis starts
     * itself for peer priorities), this leader steps down and its replicas elect a leader again, possibly this
     * one, within an election timeout. Called by the periodic leadership check while no transfer runs.
     */
    public void clearStuckStepDown(final RaftServer.Division division)
    {
        final long since = steppingDownRefusalSinceNanos;
        if (since == 0)
        {
            return;
        }
        final long now = System.nanoTime();
        final long graceNanos = STUCK_STEP_DOWN_GRACE.toNanos();
        if (now - since < graceNanos || now - steppingDownRefusalLastNanos > 2 * graceNanos ||
            !division.getInfo().isLeader() || followers.hasPeerPriorities())
        {
            return;
        }
        steppingDownRefusalSinceNanos = 0;
        stepDown("Ratis has refused writes as \"stepping down\" for " + TimeUnit.NANOSECONDS.toMillis(now - since) +
            " ms with no leadership transfer running");
    }

    /** Notes how a local write ended, for {@link #clearStuckStepDown}. */
    public void noteWriteOutcome(final RaftClientReply reply)
    {
        if (reply.getException() instanceof LeaderSteppingDownException)
        {
            final long now = System.nanoTime();
            steppingDownRefusalLastNanos = now;
            if (steppingDownRefusalSinceNanos == 0)
            {
                steppingDownRefusalSinceNanos = now;
            }
        }
        else if (reply.isSuccess())
        {
            steppingDownRefusalSinceNanos = 0;
        }
    }

    // ------------------------------------------------------------------------------------------- transfers

    /**
     * Moves the leadership to the preferred broker when this replica leads, is not the preferred one, and the
     * preferred replica is in sync, in attempts of at most {@link #ATTEMPT} within {@code timeout}; completes with
     * where the leadership is afterwards and, unless that is the preferred broker, why. Fails with NOT_LEADER
     * (naming the known leader) when this replica does not lead.
     */
    public CompletableFuture<RebalanceOutcome> rebalance(final Duration timeout)
    {
        final PartitionException notLeader = partition.notLeaderError();
        if (notLeader != null)
        {
            return CompletableFuture.failedFuture(notLeader);
        }
        final int preferredBrokerId = partition.preferredBrokerId();
        if (preferredBrokerId == brokerId)
        {
            return CompletableFuture.completedFuture(new RebalanceOutcome(partitionId, preferredBrokerId, brokerId, null));
        }
        if (partition.isStopping())
        {
            return CompletableFuture.completedFuture(new RebalanceOutcome(partitionId, preferredBrokerId, brokerId,
                "broker " + brokerId + " is stopping and hands its leaderships over"));
        }
        final String outOfSync = followers.outOfSyncReason(preferredBrokerId);
        if (outOfSync != null)
        {
            return CompletableFuture.completedFuture(new RebalanceOutcome(partitionId, preferredBrokerId, brokerId,
                outOfSync));
        }
        // Tried again while this replica still leads and the preferred replica is in sync; the last failure is the
        // answer.
        final TransferRetries.Plan plan = (last, remainingNanos) ->
        {
            if (last == null)
            {
                return new TransferRetries.Transfer(preferredBrokerId);
            }
            if (last.succeeded() || remainingNanos <= MIN_RETRY_NANOS || partition.notLeaderError() != null ||
                followers.outOfSyncReason(preferredBrokerId) != null)
            {
                return new TransferRetries.Stop(null);
            }
            LOG.info("partition {} on broker {}: leadership transfer to broker {} failed, trying again: {}",
                partitionId, brokerId, preferredBrokerId, last.failure().getMessage());
            return new TransferRetries.Transfer(preferredBrokerId);
        };
        return TransferRetries.run(plan, this::attempt, System.nanoTime() + timeout.toNanos(), 0, System::nanoTime)
            .thenApply((outcome) ->
            {
                final TransferRetries.Attempted last = outcome.last();
                if (last == null)
                {
                    return new RebalanceOutcome(partitionId, preferredBrokerId, partition.member().knownLeaderId(),
                        "the timeout of " + timeout.toMillis() + " ms passed before a transfer started");
                }
                if (last.succeeded())
                {
                    return new RebalanceOutcome(partitionId, preferredBrokerId, last.leader(),
                        last.leader() == preferredBrokerId ? null : "the leadership went to broker " + last.leader());
                }
                return new RebalanceOutcome(partitionId, preferredBrokerId, partition.member().knownLeaderId(),
                    last.failure().getMessage());
            });
    }

    /**
     * One attempt of a transfer that is tried again within a bound: {@link #transferLeadership} for at most
     * {@link #ATTEMPT}, and never longer than the {@code remainingNanos} of the bound (at least 1 ms).
     */
    public CompletableFuture<Integer> attempt(final int targetBrokerId, final long remainingNanos)
    {
        return transferLeadership(targetBrokerId, Duration.ofNanos(Math.max(TimeUnit.MILLISECONDS.toNanos(1),
            Math.min(remainingNanos, ATTEMPT.toNanos()))));
    }

    /**
     * Hands this replica's leadership to {@code targetBrokerId} with Ratis's leadership transfer, waiting at most
     * {@code timeout}; completes with the leader after the transfer. This replica's exporters and backfills stop
     * before the transfer starts, so the new leader never exports beside them; if the transfer fails while this
     * replica still leads, they start again. Fails with {@link PartitionException}: NOT_LEADER when this replica
     * does not lead, CONFLICT when a transfer is already running, UNAVAILABLE when the transfer failed.
     */
    public CompletableFuture<Integer> transferLeadership(final int targetBrokerId, final Duration timeout)
    {
        final PartitionException notLeader = partition.notLeaderError();
        if (notLeader != null)
        {
            return CompletableFuture.failedFuture(notLeader);
        }
        final RaftServer.Division division = partition.member().division();
        if (targetBrokerId == brokerId)
        {
            return CompletableFuture.completedFuture(brokerId);
        }
        final CompletableFuture<Integer> done = new CompletableFuture<>();
        if (!transfer.compareAndSet(null, done))
        {
            return CompletableFuture.failedFuture(new PartitionException(ErrorCode.CONFLICT, partitionId, brokerId,
                "partition " + partitionId + " on broker " + brokerId + ": a leadership transfer is already running"));
        }
        partition.stopExporting();
        // Ratis fails a transfer for good (see clearStuckStepDown) when the leader's log grows while it compares
        // it with the transferee's; so local writes wait out the transfer (then go on here or to the new leader, see
        // LocalWrites) and the ones already proposed commit first.
        final LocalWrites writes = partition.writes();
        writes.hold(true);
        final long timeoutMs = Math.max(1, timeout.toMillis());
        final long drainDeadline = System.nanoTime() +
            TimeUnit.MILLISECONDS.toNanos(Math.min(MAX_WRITE_DRAIN_MS, timeoutMs / 2));
        return writes.drained(drainDeadline)
            .thenCompose((drained) -> partition.member().transferLeadership(targetBrokerId, timeoutMs))
            .handle((answer, error) ->
            {
                writes.hold(partition.isStopping());
                writes.wakeHeld();
                final int leader = RaftPeers.brokerIdOf(division.getInfo().getLeaderId());
                // Writes refused while our transfer ran say nothing about a stuck one.
                steppingDownRefusalSinceNanos = 0;
                transfer.set(null);
                done.complete(error == null && answer.isSuccess() ? leader : -1);
                if (error == null && answer.isSuccess())
                {
                    return leader < 0 ? targetBrokerId : leader;
                }
                final Throwable cause = error != null ? Futures.unwrapAll(error) : answer.getException();
                final boolean leads = !partition.member().isClosed() && division.getInfo().isLeader();
                if (leads && leftSteppingDown(cause))
                {
                    stepDown("the leadership transfer to broker " + targetBrokerId + " failed before it started (" +
                        cause.getMessage() + "), after which Ratis refuses writes until an election");
                }
                else if (leads && !partition.isStopping())
                {
                    partition.resumeExporting();
                }
                throw new PartitionException(ErrorCode.UNAVAILABLE, partitionId, leader,
                    "partition " + partitionId + ": leadership transfer from broker " + brokerId + " to broker " +
                    targetBrokerId + " failed: " + (cause != null ? cause.getMessage() : "unknown"));
            });
    }

    /**
     * Whether a failed transfer left Ratis "stepping down": the results Ratis reaches before it schedules the
     * transfer's timeout (its pending transfer is then never completed), or the refusal it answers while one is
     * pending. A timed-out transfer, or one refused up front (target not in the group), leaves nothing behind.
     */
    private static boolean leftSteppingDown(final Throwable cause)
    {
        return cause instanceof LeaderSteppingDownException ||
            cause instanceof TransferLeadershipException && cause.getMessage() != null &&
            TRANSFER_FAILED_BEFORE_START.matcher(cause.getMessage()).find();
    }

    /** Steps this leader down so its replicas elect one (possibly this one again) within an election timeout. */
    private void stepDown(final String why)
    {
        LOG.warn("partition {} on broker {}: stepping down: {}", partitionId, brokerId, why);
        partition.member().transferLeadership(-1, STUCK_STEP_DOWN_GRACE.toMillis()).whenComplete((reply, error) ->
        {
            if (error != null)
            {
                LOG.warn("partition {} on broker {}: step down failed: {}", partitionId, brokerId,
                    Futures.unwrapAll(error).getMessage());
            }
        });
    }
}
