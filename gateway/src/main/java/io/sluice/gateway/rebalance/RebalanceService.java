package io.sluice.gateway.rebalance;

import io.sluice.gateway.broker.BrokerFailure;
import io.sluice.gateway.exporting.ExportingOutcome;
import io.sluice.gateway.topology.ClusterTopology;
import io.sluice.protocol.cluster.PartitionDistribution;
import io.sluice.protocol.codecs.ErrorCode;
import io.sluice.protocol.concurrent.Futures;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.stereotype.Service;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.OptionalInt;
import java.util.Set;
import java.util.concurrent.CompletableFuture;

/**
 * Moves every partition's leadership to its preferred broker (the first of its placement), all partitions at
 * once. Each request goes to the partition's leader as the topology knows it (else to the preferred replica, which
 * names the leader); a NOT_LEADER answer is followed to the leader it names, and an unreachable broker is skipped
 * for the partition's next replica, each replica at most once. The leader moves the leadership only when the
 * preferred replica is in sync, and says why not otherwise. Never completes exceptionally. Thread-safe.
 */
@Service
public class RebalanceService
{
    private static final Logger LOG = LoggerFactory.getLogger(RebalanceService.class);
    /** Time the leader keeps for answering after its transfer deadline, so its answer beats ours. */
    private static final Duration ANSWER_MARGIN = Duration.ofMillis(1_000);
    private static final Duration MIN_TRANSFER_TIMEOUT = Duration.ofMillis(500);

    private final RebalanceClient client;
    private final ClusterTopology topology;
    private final Duration requestTimeout;

    public RebalanceService(
        final RebalanceClient client,
        final ClusterTopology topology,
        @Value("${sluice.gateway.request-timeout:5s}") final Duration requestTimeout)
    {
        if (requestTimeout.isNegative() || requestTimeout.isZero())
        {
            throw new IllegalArgumentException("sluice.gateway.request-timeout must be positive, was " + requestTimeout);
        }
        this.client = client;
        this.topology = topology;
        this.requestTimeout = requestTimeout;
    }

    public CompletableFuture<RebalanceResult> rebalance()
    {
        final PartitionDistribution distribution = topology.distribution();
        final long startNanos = System.nanoTime();
        final long deadlineNanos = startNanos + requestTimeout.toNanos();
        final List<CompletableFuture<RebalanceResult.PartitionResult>> pending = new ArrayList<>();
        for (int partitionId = 1; partitionId <= distribution.partitionCount(); partitionId++)
        {
            final int preferred = distribution.replicasOf(partitionId).get(0);
            final OptionalInt known = topology.leaderOf(partitionId);
            pending.add(ask(partitionId, preferred, known.isPresent() ? known.getAsInt() : preferred, new HashSet<>(),
                deadlineNanos));
        }
        return CompletableFuture.allOf(pending.toArray(CompletableFuture[]::new)).handle((ignored, error) ->
        {
            final List<RebalanceResult.PartitionResult> results = new ArrayList<>(pending.size());
            for (final CompletableFuture<RebalanceResult.PartitionResult> future : pending)
            {
                results.add(future.join());
            }
            final RebalanceResult result = new RebalanceResult(RebalanceResult.OPERATION,
                ExportingOutcome.summarise(results.stream().map(RebalanceResult.PartitionResult::outcome).toList()),
                results);
            final long notPreferred = results.stream().filter((r) -> r.outcome() != ExportingOutcome.SUCCEEDED).count();
            LOG.info("rebalance: {} of {} partitions on their preferred broker in {} ms{}", results.size() - notPreferred,
                results.size(), (System.nanoTime() - startNanos) / 1_000_000, notPreferred == 0 ? "" :
                "; not: " + results.stream().filter((r) -> r.outcome() != ExportingOutcome.SUCCEEDED)
                    .map((r) -> r.partitionId() + " (" + r.error() + ")").toList());
            return result;
        });
    }

    private CompletableFuture<RebalanceResult.PartitionResult> ask(
        final int partitionId, final int preferred, final int brokerId, final Set<Integer> tried, final long deadlineNanos)
    {
        tried.add(brokerId);
        final long remainingNanos = deadlineNanos - System.nanoTime();
        if (remainingNanos <= 0)
        {
            return CompletableFuture.completedFuture(new RebalanceResult.PartitionResult(partitionId, preferred,
                topology.leaderOf(partitionId).orElse(-1), ExportingOutcome.TIMED_OUT,
                "no answer within sluice.gateway.request-timeout (" + requestTimeout + ")"));
        }
        final Duration remaining = Duration.ofNanos(remainingNanos);
        final Duration transfer = remaining.minus(ANSWER_MARGIN).compareTo(MIN_TRANSFER_TIMEOUT) < 0 ?
            MIN_TRANSFER_TIMEOUT : remaining.minus(ANSWER_MARGIN);
        CompletableFuture<RebalanceClient.RebalanceAnswer> answer;
        try
        {
            answer = client.rebalance(brokerId, partitionId, transfer, remaining);
        }
        catch (final RuntimeException e)
        {
            answer = CompletableFuture.failedFuture(e);
        }
        return answer.handle((reply, error) ->
        {
            if (error == null)
            {
                final boolean onPreferred = reply.leaderId() == preferred;
                return CompletableFuture.completedFuture(new RebalanceResult.PartitionResult(partitionId, preferred,
                    reply.leaderId(), onPreferred ? ExportingOutcome.SUCCEEDED : ExportingOutcome.FAILED,
                    onPreferred ? null : reply.reason() == null ? "the leader is broker " + reply.leaderId() : reply.reason()));
            }
            final Throwable cause = Futures.unwrapAll(error);
            final BrokerFailure failure = BrokerFailure.of(cause);
            if (failure == BrokerFailure.TIMED_OUT)
            {
                return CompletableFuture.completedFuture(new RebalanceResult.PartitionResult(partitionId, preferred,
                    topology.leaderOf(partitionId).orElse(-1), ExportingOutcome.TIMED_OUT,
                    "broker " + brokerId + " did not answer within " + requestTimeout));
            }
            final boolean notLeader = BrokerFailure.errorCode(cause) == ErrorCode.NOT_LEADER;
            final int hint = BrokerFailure.leaderHint(cause);
            int next = -1;
            if (hint >= 0 && !tried.contains(hint) && topology.distribution().contains(hint, partitionId))
            {
                next = hint;
            }
            else if (failure == BrokerFailure.UNREACHABLE || notLeader)
            {
                next = topology.distribution().replicasOf(partitionId).stream()
                    .filter((b) -> !tried.contains(b)).findFirst().orElse(-1);
            }
            if (next >= 0)
            {
                return ask(partitionId, preferred, next, tried, deadlineNanos);
            }
            final String why = failure == BrokerFailure.UNREACHABLE ? "broker " + brokerId + " unreachable" :
                cause.getMessage();
            return CompletableFuture.completedFuture(new RebalanceResult.PartitionResult(partitionId, preferred,
                topology.leaderOf(partitionId).orElse(-1), ExportingOutcome.FAILED, why));
        }).thenCompose((next) -> next);
    }
}
