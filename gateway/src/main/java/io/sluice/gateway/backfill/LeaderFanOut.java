package io.sluice.gateway.backfill;

import io.sluice.gateway.broker.BrokerErrorException;
import io.sluice.gateway.broker.BrokerFailure;
import io.sluice.gateway.topology.ClusterTopology;
import io.sluice.protocol.cluster.PartitionReplica;
import io.sluice.protocol.codecs.ErrorCode;
import io.sluice.protocol.codecs.PartitionRole;
import io.sluice.protocol.concurrent.Futures;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.OptionalInt;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.BiFunction;
import java.util.function.IntFunction;

/**
 * Asks partitions' leaders for a backfill's part (register, status, cancel) and follows leaders that move while it
 * asks: the fan-out side of {@link BackfillService}. Every answer is a {@link PartitionAnswer}; nothing here fails.
 */
final class LeaderFanOut
{
    private static final Logger LOG = LoggerFactory.getLogger(LeaderFanOut.class);
    /** The first wait before asking again a partition whose leader is moving; doubled up to the max. */
    static final Duration NOT_LEADER_BACKOFF = Duration.ofMillis(25);
    static final Duration NOT_LEADER_BACKOFF_MAX = Duration.ofMillis(400);
    /** How often a start or cancel looks at the topology again while a partition shows no leader. */
    private static final Duration LEADER_POLL = Duration.ofMillis(50);

    private final ClusterTopology topology;
    private final Duration requestTimeout;

    LeaderFanOut(final ClusterTopology topology, final Duration requestTimeout)
    {
        this.topology = topology;
        this.requestTimeout = requestTimeout;
    }

    /**
     * One partition's answer: its tasks, or what went wrong asking its leader; {@code leaderHint} is the leader a
     * NOT_LEADER answer named, or -1.
     */
    record PartitionAnswer(
        int partitionId, List<BackfillTaskStatus> tasks, String error, ErrorCode code, boolean timedOut, int leaderHint)
    {
    }

    /** The leader of every partition that has a reachable one; the others are missing from the map. */
    Map<Integer, Integer> leaders()
    {
        final Map<Integer, Integer> leaders = new TreeMap<>();
        for (int partitionId = 1; partitionId <= topology.distribution().partitionCount(); partitionId++)
        {
            final OptionalInt leader = topology.leaderOf(partitionId);
            if (leader.isPresent() && topology.isReachable(leader.getAsInt()) &&
                topology.status(new PartitionReplica(leader.getAsInt(), partitionId))
                    .filter(s -> s.role() == PartitionRole.LEADER).isPresent())
            {
                leaders.put(partitionId, leader.getAsInt());
            }
        }
        return leaders;
    }

    /**
     * {@link #leaders()}, once no partition with a reachable replica shows no leader, or once {@code requestTimeout}
     * has passed: a leadership moving (the automatic balance bringing it home, an election) is seen leaderless by the
     * topology for a poll or two, and a start or cancel must not fail for it. A partition whose replicas are all
     * unreachable is not waited for. Polls on a timer, never on the caller's thread.
     */
    CompletableFuture<Map<Integer, Integer>> awaitLeaders()
    {
        return awaitLeaders(System.nanoTime() + requestTimeout.toNanos());
    }

    private CompletableFuture<Map<Integer, Integer>> awaitLeaders(final long deadlineNanos)
    {
        final Map<Integer, Integer> leaders = leaders();
        if (!leaderMoving(leaders) || System.nanoTime() - deadlineNanos >= 0)
        {
            return CompletableFuture.completedFuture(leaders);
        }
        return CompletableFuture.runAsync(() -> { },
                CompletableFuture.delayedExecutor(LEADER_POLL.toMillis(), TimeUnit.MILLISECONDS))
            .thenCompose(ignored -> awaitLeaders(deadlineNanos));
    }

    private boolean leaderMoving(final Map<Integer, Integer> leaders)
    {
        for (int partitionId = 1; partitionId <= topology.distribution().partitionCount(); partitionId++)
        {
            if (!leaders.containsKey(partitionId) &&
                topology.distribution().replicasOf(partitionId).stream().anyMatch(topology::isReachable))
            {
                return true;
            }
        }
        return false;
    }

    /** Asks every partition in {@code leaders} at once, through {@link #askLeader}; never fails. */
    CompletableFuture<Map<Integer, PartitionAnswer>> askEvery(final Map<Integer, Integer> leaders, final String what,
        final BiFunction<Integer, Integer, CompletableFuture<List<BackfillTaskStatus>>> request)
    {
        final Map<Integer, CompletableFuture<PartitionAnswer>> pending = new TreeMap<>();
        leaders.forEach((partitionId, leaderId) -> pending.put(partitionId,
            askLeader(partitionId, leaderId, what, (broker) -> request.apply(partitionId, broker))));
        return CompletableFuture.allOf(pending.values().toArray(CompletableFuture[]::new)).thenApply(ignored ->
        {
            final Map<Integer, PartitionAnswer> answers = new TreeMap<>();
            pending.forEach((partitionId, future) -> answers.put(partitionId, future.join()));
            return answers;
        });
    }

    /**
     * Asks the partition's leader as the topology last saw it. Leaders move (automatic balance, a restart) between
     * the topology poll and the request: a NOT_LEADER answer is asked again, at once at the broker it names, else
     * after a short backoff at the leader the topology knows by then, until {@link #requestTimeout} is spent, so a
     * move the cluster makes by itself does not fail the call. Never fails: see {@link #answerOf}.
     */
    CompletableFuture<PartitionAnswer> askLeader(final int partitionId, final int leaderId, final String what,
        final IntFunction<CompletableFuture<List<BackfillTaskStatus>>> request)
    {
        return askLeader(partitionId, leaderId, what, request, System.nanoTime() + requestTimeout.toNanos(), 0);
    }

    private CompletableFuture<PartitionAnswer> askLeader(final int partitionId, final int leaderId, final String what,
        final IntFunction<CompletableFuture<List<BackfillTaskStatus>>> request, final long deadlineNanos,
        final int attempt)
    {
        return answerOf(partitionId, leaderId, request.apply(leaderId)).thenCompose(answer ->
        {
            if (answer.code() != ErrorCode.NOT_LEADER)
            {
                return CompletableFuture.completedFuture(answer);
            }
            final boolean named = answer.leaderHint() >= 0 && answer.leaderHint() != leaderId;
            final int next = named ? answer.leaderHint() : topology.leaderOf(partitionId).orElse(leaderId);
            final long backoffMs = named && attempt == 0 ? 0 :
                Math.min(NOT_LEADER_BACKOFF.toMillis() << Math.min(attempt, 8), NOT_LEADER_BACKOFF_MAX.toMillis());
            if (System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(backoffMs) - deadlineNanos >= 0)
            {
                return CompletableFuture.completedFuture(answer);
            }
            LOG.info("{}: partition {} is not led by broker {}, asking broker {}{}", what, partitionId, leaderId, next,
                backoffMs == 0 ? "" : " in " + backoffMs + " ms");
            return CompletableFuture.runAsync(() -> { },
                    CompletableFuture.delayedExecutor(backoffMs, TimeUnit.MILLISECONDS))
                .thenCompose(ignored -> askLeader(partitionId, next, what, request, deadlineNanos, attempt + 1));
        });
    }

    /** Never fails: a failure becomes an answer with an error naming the pair. */
    private CompletableFuture<PartitionAnswer> answerOf(
        final int partitionId, final int leaderId, final CompletableFuture<List<BackfillTaskStatus>> request)
    {
        return request.handle((tasks, failure) ->
        {
            if (failure == null)
            {
                return new PartitionAnswer(partitionId, tasks, null, null, false, -1);
            }
            final Throwable cause = Futures.unwrapAll(failure);
            final String pair = "partition " + partitionId + " on broker " + leaderId;
            return switch (BrokerFailure.of(cause))
            {
                case TIMED_OUT -> new PartitionAnswer(partitionId, List.of(),
                    pair + ": no answer within " + requestTimeout.toMillis() + " ms", ErrorCode.TIMEOUT, true, -1);
                case UNREACHABLE -> new PartitionAnswer(partitionId, List.of(), "broker " + leaderId + " unreachable", null,
                    false, -1);
                case UNAVAILABLE, REFUSED ->
                {
                    final BrokerErrorException error = (BrokerErrorException)cause;
                    final String detail = error.code() == ErrorCode.NOT_LEADER ?
                        "not leader" + (error.leaderId() >= 0 ? " (leader is " + error.leaderId() + ")" : "") :
                        error.code() + ": " + error.getMessage();
                    yield new PartitionAnswer(partitionId, List.of(), pair + ": " + detail, error.code(), false,
                        error.code() == ErrorCode.NOT_LEADER ? error.leaderId() : -1);
                }
                default -> new PartitionAnswer(partitionId, List.of(), pair + ": " + cause.getMessage(), null, false, -1);
            };
        });
    }

    List<Integer> unavailable(final Map<Integer, Integer> leaders, final Map<Integer, PartitionAnswer> answers)
    {
        final List<Integer> unavailable = new ArrayList<>();
        for (int partitionId = 1; partitionId <= topology.distribution().partitionCount(); partitionId++)
        {
            final PartitionAnswer answer = answers.get(partitionId);
            if (!leaders.containsKey(partitionId) || answer == null || answer.error() != null)
            {
                unavailable.add(partitionId);
            }
        }
        return unavailable;
    }

    static List<String> errors(final Map<Integer, PartitionAnswer> answers)
    {
        return answers.values().stream().map(PartitionAnswer::error).filter(e -> e != null).toList();
    }
}
