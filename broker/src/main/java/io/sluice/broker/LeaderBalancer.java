package io.sluice.broker;

import io.sluice.broker.partition.Partition;
import io.sluice.broker.raft.TransferRetries;
import io.sluice.protocol.cluster.PartitionDistribution;
import io.sluice.protocol.concurrent.Futures;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.LongSupplier;

/**
 * Where a broker's partition leaderships go: back to each partition's preferred broker (the first of its placement)
 * once that replica is in sync, and away from this broker before it stops (controlled shutdown). Both use Ratis's
 * leadership transfer, which waits for the transferee to hold the leader's whole log before it asks it to stand,
 * so no acknowledged record is at risk and clients only wait for one election round.
 * <p>
 * Thread-safety: {@link #autoRebalance()} runs on the broker's scheduler, one round at a time (synchronized: the
 * periodic round and the one a finished transfer asks for may meet), and {@link #handOverLeadership} once, on the
 * closing thread, after the automatic rounds stopped.
 */
final class LeaderBalancer
{
    private static final Logger LOG = LoggerFactory.getLogger(LeaderBalancer.class);
    /**
     * How long an automatic transfer may block the partition's writes at most: Ratis refuses writes until the
     * transferee holds the leader's whole log, and a just-restarted broker on a busy machine can be slow to get
     * there. A transfer that times out is tried again after another stable period.
     */
    static final Duration AUTO_TRANSFER_TIMEOUT = Duration.ofMillis(500);
    /** The automatic balance only moves a leadership to a replica this close behind (commit index entries). */
    static final long AUTO_MAX_LAG_ENTRIES = 8;
    private static final long HANDOVER_POLL_MS = 20;
    /**
     * A follower silent this long is taken for down, so a partition whose followers all are is given up at once.
     * Longer than the in-sync bound: on a loaded machine a live follower's answers can lag a second behind.
     */
    static final Duration FOLLOWER_SILENT_BOUND = Duration.ofMillis(2_500);

    /**
     * A preferred follower this leader has no log appender to, or has not heard from while it answers this broker in
     * other groups, for this long, is cut off in this group alone (seen in CI after a controlled shutdown handed the
     * leadership over: Ratis' new leader had no log appender to the stopping broker any more, and none once it was
     * back; nothing logged; also in a cluster of one partition, where no other group could vouch for it), and the
     * leadership is handed to another in-sync follower, whose new term replicates to every follower afresh. A broker
     * just back answers in all its groups within a heartbeat or two, so this is well past a healthy reconnection.
     */
    static final long CUT_OFF_FOLLOWER_MS = 5_000;

    private final int brokerId;
    private final PartitionDistribution distribution;
    private final Map<Integer, Partition> partitions;
    private final PreferredLeaderWatch watch;
    /** Since when (nanos) each partition's preferred follower has been cut off from this leader alone. */
    private final Map<Integer, Long> cutOffSince = new ConcurrentHashMap<>();
    private final LongSupplier nanoClock;
    private final Runnable nextRound;
    private volatile boolean stopped;

    LeaderBalancer(
        final int brokerId,
        final PartitionDistribution distribution,
        final Map<Integer, Partition> partitions,
        final Duration stablePeriod,
        final LongSupplier nanoClock,
        final Runnable nextRound)
    {
        this.brokerId = brokerId;
        this.distribution = distribution;
        this.partitions = partitions;
        this.watch = new PreferredLeaderWatch(stablePeriod);
        this.nanoClock = nanoClock;
        this.nextRound = nextRound;
    }

    /**
     * One automatic round: each partition led here that is not on its preferred broker moves there once the
     * preferred replica has stayed in sync for the stable period. Groups whose peers carry Ratis priorities are
     * left to Ratis. A finished transfer asks for the next round at once ({@code nextRound}): with one transfer at a
     * time, waiting for the periodic round added up to a second a partition to a restarted broker's return.
     */
    synchronized void autoRebalance()
    {
        if (stopped)
        {
            return;
        }
        final long now = nanoClock.getAsLong();
        // One automatic transfer at a time per broker: a restarted broker takes its leaderships back one by one
        // instead of standing in several elections at once while it is still warming up.
        boolean transferStarted = partitions.values().stream().anyMatch(Partition::isTransferring);
        for (final Partition partition : partitions.values())
        {
            final int partitionId = partition.partitionId();
            final int preferred = partition.preferredBrokerId();
            if (preferred == brokerId || !partition.isLeader() || partition.isTransferring() ||
                partition.followers().hasPeerPriorities())
            {
                watch.forget(partitionId);
                cutOffSince.remove(partitionId);
                continue;
            }
            final boolean inSync = partition.followers().outOfSyncReason(preferred, AUTO_MAX_LAG_ENTRIES) == null;
            if (!inSync && !transferStarted && handOffFromCutOffFollower(partition, preferred, now))
            {
                transferStarted = true;
                watch.forget(partitionId);
                continue;
            }
            if (watch.observe(partitionId, inSync, now) && !transferStarted)
            {
                transferStarted = true;
                watch.forget(partitionId);
                autoTransfer(partition, preferred, true);
            }
        }
    }

    /**
     * When this leader has had no log appender to the preferred follower, or has not heard from it while that broker
     * answers here in other groups, for {@link #CUT_OFF_FOLLOWER_MS}, hands the leadership to another in-sync
     * follower; returns whether it started.
     */
    private boolean handOffFromCutOffFollower(final Partition partition, final int preferred, final long nowNanos)
    {
        final int partitionId = partition.partitionId();
        final long heardMs = partition.followers().lastHeardMs(preferred);
        final long answersElsewhereMs = answersElsewhereMs(preferred, partitionId);
        // No appender at all to a peer of the group's configuration is the defect itself, whether or not that broker
        // is up (a Ratis leader starts one for every peer): a partition alone on its brokers has no other group to
        // tell a cut-off follower from a down one. A silent appender is cut off only while that broker answers
        // elsewhere; otherwise it is taken for down.
        final boolean noAppender = heardMs < 0 && partition.followers().isVoter(preferred);
        if ((heardMs >= 0 && heardMs <= FOLLOWER_SILENT_BOUND.toMillis()) || (answersElsewhereMs < 0 && !noAppender))
        {
            cutOffSince.remove(partitionId);
            return false;
        }
        final long since = cutOffSince.computeIfAbsent(partitionId, (id) -> nowNanos);
        if (nowNanos - since < TimeUnit.MILLISECONDS.toNanos(CUT_OFF_FOLLOWER_MS))
        {
            return false;
        }
        int target = -1;
        for (final int candidate : distribution.replicasOf(partitionId))
        {
            if (candidate != brokerId && candidate != preferred &&
                partition.followers().outOfSyncReason(candidate) == null)
            {
                target = candidate;
                break;
            }
        }
        if (target < 0)
        {
            return false;
        }
        cutOffSince.remove(partitionId);
        LOG.warn("broker {}: partition {}: this leader has {} for {} ms ({}): handing the leadership to broker {}, " +
            "whose term replicates to it afresh", brokerId, partitionId,
            noAppender ? "no log appender to broker " + preferred : "not heard from broker " + preferred + " for " +
            heardMs + " ms", TimeUnit.NANOSECONDS.toMillis(nowNanos - since), answersElsewhereMs < 0 ?
            "it answers in no other group here" : "it answers here in other groups, last " + answersElsewhereMs +
            " ms ago", target);
        autoTransfer(partition, target, false);
        return true;
    }

    /** Starts a transfer of the balance's own; logs how it ended and asks for the next round at once. */
    private void autoTransfer(final Partition partition, final int to, final boolean preferred)
    {
        final int partitionId = partition.partitionId();
        final long start = nanoClock.getAsLong();
        partition.transferLeadership(to, AUTO_TRANSFER_TIMEOUT).whenComplete((leader, error) ->
        {
            final long tookMs = TimeUnit.NANOSECONDS.toMillis(nanoClock.getAsLong() - start);
            final String target = (preferred ? "its preferred broker " : "broker ") + to;
            if (error == null)
            {
                LOG.info("broker {}: partition {} leadership {} {} in {} ms", brokerId, partitionId,
                    preferred ? "back on" : "moved to", target, tookMs);
            }
            else
            {
                LOG.info("broker {}: partition {} leadership did not move to {} ({} ms): {}", brokerId, partitionId,
                    target, tookMs, Futures.unwrapAll(error).getMessage());
            }
            if (!stopped)
            {
                nextRound.run();
            }
        });
    }

    /** How recently {@code otherBrokerId} was heard in any other partition's group here; -1 when not within the bound. */
    private long answersElsewhereMs(final int otherBrokerId, final int exceptPartitionId)
    {
        long best = -1;
        for (final Partition other : partitions.values())
        {
            if (other.partitionId() == exceptPartitionId)
            {
                continue;
            }
            final long heard = other.followers().lastHeardMs(otherBrokerId);
            if (heard >= 0 && heard <= FOLLOWER_SILENT_BOUND.toMillis() && (best < 0 || heard < best))
            {
                best = heard;
            }
        }
        return best;
    }

    /**
     * Controlled shutdown: stops every exporter here, then hands each leadership held here to an in-sync replica
     * (the preferred broker first), and again if one comes back, until none is led here or {@code bound} passed,
     * all partitions at once ({@link TransferRetries}, one run each). A partition without any follower answering is
     * given up at once: nobody could take it. Logs one line per partition led here during the handover. Returns the
     * partitions still led here at the end.
     */
    Set<Integer> handOverLeadership(final Duration bound)
    {
        stopped = true;
        final long start = nanoClock.getAsLong();
        final long deadline = start + bound.toNanos();
        partitions.values().forEach(Partition::prepareToStop);
        final Map<Integer, CompletableFuture<TransferRetries.Outcome>> runs = new TreeMap<>();
        final Set<Integer> givenUp = ConcurrentHashMap.newKeySet();
        for (final Partition partition : partitions.values())
        {
            if (partition.isLeader())
            {
                runs.put(partition.partitionId(), TransferRetries.run(handOverPlan(partition, givenUp),
                    partition::transferAttempt, deadline, HANDOVER_POLL_MS, nanoClock));
            }
        }
        try
        {
            // A run notices the bound at its next round: a poll interval after it at the latest.
            CompletableFuture.allOf(runs.values().toArray(CompletableFuture[]::new))
                .get(Math.max(0, deadline - nanoClock.getAsLong()) + TimeUnit.MILLISECONDS.toNanos(2 * HANDOVER_POLL_MS),
                    TimeUnit.NANOSECONDS);
        }
        catch (final InterruptedException e)
        {
            Thread.currentThread().interrupt();
        }
        catch (final ExecutionException | TimeoutException e)
        {
            // described below, run by run
        }
        final Set<Integer> stillLed = new HashSet<>();
        int handedOver = 0;
        final long tookMs = TimeUnit.NANOSECONDS.toMillis(nanoClock.getAsLong() - start);
        for (final Map.Entry<Integer, CompletableFuture<TransferRetries.Outcome>> run : runs.entrySet())
        {
            final int partitionId = run.getKey();
            final TransferRetries.Outcome outcome = run.getValue().getNow(null);
            final String described = outcome == null ? "transfer still running at the bound" : describe(outcome);
            final boolean led = partitions.get(partitionId).isLeader();
            if (led)
            {
                stillLed.add(partitionId);
            }
            else if (outcome != null && outcome.transferred())
            {
                handedOver++;
            }
            LOG.info("broker {} controlled shutdown: partition {}: {}", brokerId, partitionId,
                led && !givenUp.contains(partitionId) ? "still led here after " + tookMs + " ms (bound " +
                bound.toMillis() + " ms), stopping anyway: " + described : described);
        }
        LOG.info("broker {} controlled shutdown: {} partition(s) handed over, {} still led here, in {} ms",
            brokerId, handedOver, stillLed.size(), tookMs);
        return stillLed;
    }

    /**
     * A partition's handover: to an in-sync follower while this replica leads (the attempt's bound is the requested
     * rebalance's too: a follower that died a moment ago still looks in sync, and the attempt to it fails at that
     * bound, after which it looks dead); waiting while a follower answers but lags; given up when none answers.
     */
    private TransferRetries.Plan handOverPlan(final Partition partition, final Set<Integer> givenUp)
    {
        final int partitionId = partition.partitionId();
        return (last, remainingNanos) ->
        {
            if (!partition.isLeader())
            {
                return new TransferRetries.Stop(null);
            }
            final int target = partition.followers().inSyncFollower(distribution.replicasOf(partitionId));
            if (target >= 0)
            {
                return new TransferRetries.Transfer(target);
            }
            if (partition.followers().hasAnsweringFollower(FOLLOWER_SILENT_BOUND))
            {
                return new TransferRetries.Wait("waiting for a follower to catch up");
            }
            givenUp.add(partitionId);
            return new TransferRetries.Stop("no follower answers, nobody to hand over to; its replicas elect a " +
                "leader once a quorum is back");
        };
    }

    private static String describe(final TransferRetries.Outcome outcome)
    {
        final TransferRetries.Attempted last = outcome.last();
        if (outcome.why() != null || last == null)
        {
            return outcome.why() == null ? "not led here any more" : outcome.why();
        }
        final long tookMs = TimeUnit.NANOSECONDS.toMillis(last.endedAfterNanos());
        return last.succeeded() ? "leadership handed to broker " + last.leader() + " after " + tookMs + " ms" :
            "transfer failed after " + tookMs + " ms: " + last.failure().getMessage();
    }

    /** Partition ids this broker leads now, ascending. */
    List<Integer> ledPartitions()
    {
        final List<Integer> led = new ArrayList<>();
        partitions.values().forEach((p) ->
        {
            if (p.isLeader())
            {
                led.add(p.partitionId());
            }
        });
        led.sort(null);
        return led;
    }
}
