package io.sluice.gateway.backfill;

import io.sluice.gateway.broker.BrokerTopology;
import io.sluice.gateway.topology.ClusterTopology;
import io.sluice.protocol.backfill.BackfillRanges;
import io.sluice.protocol.cluster.PartitionDistribution;
import io.sluice.protocol.cluster.PartitionReplica;
import io.sluice.protocol.cluster.PartitionStatus;
import io.sluice.protocol.codecs.BackfillState;
import io.sluice.protocol.codecs.ExportingState;
import io.sluice.protocol.codecs.PartitionRole;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.Queue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.function.Function;

/**
 * A cluster a test scripts: a topology (leaders, reachability, exporter and last positions) and a backfill
 * client that records every request and, unless told otherwise, answers like a leader would (registering
 * tasks with the broker's split over the reported positions).
 */
final class FakeBackfillCluster implements ClusterTopology, BackfillClient
{
    enum Kind
    {
        START, STATUS, CANCEL
    }

    record Call(Kind kind, int brokerId, int partitionId, String backfillId, String exporterId, int taskCount,
        int firstTaskId)
    {
    }

    final PartitionDistribution distribution =
        PartitionDistribution.of("127.0.0.1:26501,127.0.0.1:26511,127.0.0.1:26521", 6, 3);
    final Queue<Call> calls = new ConcurrentLinkedQueue<>();
    final Map<Integer, Integer> leaders = new ConcurrentHashMap<>();
    final Map<Integer, Long> exported = new ConcurrentHashMap<>();
    final Map<Integer, Long> last = new ConcurrentHashMap<>();
    final Map<Integer, Boolean> unreachable = new ConcurrentHashMap<>();
    /** Tasks the "brokers" hold, per partition. */
    final Map<Integer, List<BackfillTaskStatus>> held = new ConcurrentHashMap<>();
    volatile Function<Call, CompletableFuture<List<BackfillTaskStatus>>> responder = this::answerAsLeader;
    volatile String exporterId = "file";

    FakeBackfillCluster()
    {
        reset();
    }

    /** Leaders on broker (p - 1) mod 3; exporter "file" at 100 * p, last position 100 * p + 50. */
    void reset()
    {
        calls.clear();
        unreachable.clear();
        held.clear();
        responder = this::answerAsLeader;
        exporterId = "file";
        for (int p = 1; p <= 6; p++)
        {
            leaders.put(p, (p - 1) % 3);
            exported.put(p, 100L * p);
            last.put(p, 100L * p + 50);
        }
    }

    long sent(final Kind kind)
    {
        return calls.stream().filter(c -> c.kind() == kind).count();
    }

    void hold(final BackfillTaskStatus task)
    {
        held.computeIfAbsent(task.partitionId(), p -> new ArrayList<>()).add(task);
    }

    static BackfillTaskStatus task(
        final int partitionId, final String backfillId, final int taskId, final BackfillState state,
        final long from, final long to, final long exportedUpTo)
    {
        return new BackfillTaskStatus(partitionId, backfillId, "file", taskId, state, from, to, exportedUpTo, 1,
            1_000, 2_000, state == BackfillState.FAILED ? "sink gone" : null);
    }

    // ---------------------------------------------------------------------------------------- topology

    @Override
    public PartitionDistribution distribution()
    {
        return distribution;
    }

    @Override
    public boolean isReachable(final int brokerId)
    {
        return !unreachable.getOrDefault(brokerId, false);
    }

    @Override
    public Optional<PartitionStatus> status(final PartitionReplica replica)
    {
        if (!isReachable(replica.brokerId()) || !distribution.contains(replica))
        {
            return Optional.empty();
        }
        final int p = replica.partitionId();
        final Integer leader = leaders.get(p);
        final boolean leads = leader != null && leader == replica.brokerId();
        return Optional.of(new PartitionStatus(p, leads ? PartitionRole.LEADER : PartitionRole.FOLLOWER,
            3, leader == null ? -1 : leader, ExportingState.EXPORTING, 1, last.get(p), exported.get(p),
            Map.of(exporterId, exported.get(p))));
    }

    @Override
    public OptionalInt leaderOf(final int partitionId)
    {
        final Integer leader = leaders.get(partitionId);
        return leader == null ? OptionalInt.empty() : OptionalInt.of(leader);
    }

    // ---------------------------------------------------------------------------------------- client

    @Override
    public CompletableFuture<List<BackfillTaskStatus>> start(final int brokerId, final int partitionId,
        final String backfillId, final String exporterId, final int taskCount, final int firstTaskId,
        final Duration timeout)
    {
        return record(new Call(Kind.START, brokerId, partitionId, backfillId, exporterId, taskCount, firstTaskId));
    }

    @Override
    public CompletableFuture<List<BackfillTaskStatus>> status(
        final int brokerId, final int partitionId, final String backfillId, final Duration timeout)
    {
        return record(new Call(Kind.STATUS, brokerId, partitionId, backfillId, null, 0, 0));
    }

    @Override
    public CompletableFuture<List<BackfillTaskStatus>> cancel(
        final int brokerId, final int partitionId, final String backfillId, final Duration timeout)
    {
        return record(new Call(Kind.CANCEL, brokerId, partitionId, backfillId, null, 0, 0));
    }

    private CompletableFuture<List<BackfillTaskStatus>> record(final Call call)
    {
        calls.add(call);
        return responder.apply(call);
    }

    CompletableFuture<List<BackfillTaskStatus>> answerAsLeader(final Call call)
    {
        final List<BackfillTaskStatus> tasks = held.computeIfAbsent(call.partitionId(), p -> new ArrayList<>());
        switch (call.kind())
        {
            case START ->
            {
                final List<BackfillTaskStatus> created = new ArrayList<>();
                final List<BackfillRanges.Range> ranges = BackfillRanges.split(
                    exported.get(call.partitionId()), last.get(call.partitionId()), call.taskCount());
                for (int i = 0; i < ranges.size(); i++)
                {
                    final BackfillRanges.Range range = ranges.get(i);
                    created.add(new BackfillTaskStatus(call.partitionId(), call.backfillId(), call.exporterId(),
                        call.firstTaskId() + i, BackfillState.PENDING, range.fromPosition(), range.toPosition(),
                        range.fromPosition() - 1, 0, 5_000, 5_000, null));
                }
                tasks.addAll(created);
                exported.put(call.partitionId(), last.get(call.partitionId()));
                return CompletableFuture.completedFuture(List.copyOf(created));
            }
            case CANCEL ->
            {
                tasks.replaceAll(t -> t.backfillId().equals(call.backfillId()) && !t.isFinished() ?
                    new BackfillTaskStatus(t.partitionId(), t.backfillId(), t.exporterId(), t.taskId(),
                        BackfillState.CANCELLED, t.fromPosition(), t.toPosition(), t.exportedUpTo(), t.attempts(),
                        t.createdAtMs(), 9_000, null) : t);
                return CompletableFuture.completedFuture(
                    tasks.stream().filter(t -> t.backfillId().equals(call.backfillId())).toList());
            }
            default ->
            {
                return CompletableFuture.completedFuture(tasks.stream()
                    .filter(t -> call.backfillId().isEmpty() || t.backfillId().equals(call.backfillId())).toList());
            }
        }
    }
}
