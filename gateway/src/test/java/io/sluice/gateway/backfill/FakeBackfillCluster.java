package io.sluice.gateway.backfill;

import io.sluice.broker.control.BackfillClaim;
import io.sluice.broker.control.BackfillClaimChange;
import io.sluice.broker.control.BackfillClaimReply;
import io.sluice.broker.control.BackfillClaimTable;
import io.sluice.gateway.broker.BrokerErrorException;
import io.sluice.gateway.topology.ClusterTopology;
import io.sluice.protocol.backfill.BackfillRanges;
import io.sluice.protocol.cluster.PartitionDistribution;
import io.sluice.protocol.cluster.PartitionReplica;
import io.sluice.protocol.cluster.PartitionStatus;
import io.sluice.protocol.codecs.BackfillClaimPhase;
import io.sluice.protocol.codecs.BackfillState;
import io.sluice.protocol.codecs.ErrorCode;
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
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Function;

/**
 * A cluster a test scripts: a topology (leaders, reachability, exporter and last positions) and a backfill
 * client that records every request and, unless told otherwise, answers like a leader would (registering
 * tasks with the broker's split over the reported positions). Claims are decided by the brokers' own
 * {@link BackfillClaimTable} on the fake's clock ({@link #nowMs}), and a registration naming a claim is refused as a
 * partition leader would refuse it, so services over one fake behave as gateways over one cluster.
 */
final class FakeBackfillCluster implements ClusterTopology, BackfillClient
{
    enum Kind
    {
        START, STATUS, CANCEL, CLAIM, CLAIMS
    }

    /** One request; {@code claimIndex} for START, {@code claim} for CLAIM. */
    record Call(Kind kind, int brokerId, int partitionId, String backfillId, String exporterId, int taskCount,
        int firstTaskId, long claimIndex, ClaimRequest claim)
    {
    }

    final PartitionDistribution distribution =
        PartitionDistribution.of("127.0.0.1:26501,127.0.0.1:26511,127.0.0.1:26521", 6, 3);
    final Queue<Call> calls = new ConcurrentLinkedQueue<>();
    final Map<Integer, Integer> leaders = new ConcurrentHashMap<>();
    final Map<Integer, Long> exported = new ConcurrentHashMap<>();
    /** Each partition's first held position (below it, compacted); absent: 1. */
    final Map<Integer, Long> firstHeld = new ConcurrentHashMap<>();
    final Map<Integer, Long> last = new ConcurrentHashMap<>();
    final Map<Integer, Boolean> unreachable = new ConcurrentHashMap<>();
    /** The control group's leader as the topology reports it; -1 for none known. */
    volatile int controlLeader = -1;
    /** Tasks the "brokers" hold, per partition. */
    final Map<Integer, List<BackfillTaskStatus>> held = new ConcurrentHashMap<>();
    volatile Function<Call, CompletableFuture<List<BackfillTaskStatus>>> responder = this::answerAsLeader;
    /** Answers CLAIM and CLAIMS calls; by default the control group's (the brokers' claim table). */
    volatile Function<Call, CompletableFuture<?>> controlResponder = this::answerAsControlGroup;
    volatile String exporterId = "file";
    /** The control group's state, as the brokers apply it. */
    volatile BackfillClaimTable claims = new BackfillClaimTable();
    /** The brokers' clock: claims are stamped with it and registrations timed by it. */
    final AtomicLong nowMs = new AtomicLong(15_000);
    private final AtomicLong controlIndex = new AtomicLong();

    FakeBackfillCluster()
    {
        reset();
    }

    /** Leaders on broker (p - 1) mod 3; exporter "file" at 100 * p, last position 100 * p + 50. */
    void reset()
    {
        calls.clear();
        unreachable.clear();
        controlLeader = -1;
        held.clear();
        responder = this::answerAsLeader;
        controlResponder = this::answerAsControlGroup;
        exporterId = "file";
        claims = new BackfillClaimTable();
        nowMs.set(15_000);
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
            Map.of(exporterId, exported.get(p)), firstHeld.getOrDefault(p, 1L), io.sluice.protocol.cluster.ExportingHold.NONE));
    }

    @Override
    public OptionalInt controlLeader()
    {
        return controlLeader < 0 ? OptionalInt.empty() : OptionalInt.of(controlLeader);
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
        final long claimIndex, final Duration timeout)
    {
        return record(new Call(Kind.START, brokerId, partitionId, backfillId, exporterId, taskCount, firstTaskId,
            claimIndex, null));
    }

    @Override
    @SuppressWarnings("unchecked")
    public CompletableFuture<ClaimAnswer> claim(final int brokerId, final ClaimRequest request, final Duration timeout)
    {
        final Call call = new Call(Kind.CLAIM, brokerId, 0, request.backfillId(), request.exporterId(), 0, 0, 0, request);
        calls.add(call);
        return (CompletableFuture<ClaimAnswer>)controlResponder.apply(call);
    }

    @Override
    @SuppressWarnings("unchecked")
    public CompletableFuture<ControlBackfills> claims(final int brokerId, final Duration timeout)
    {
        final Call call = new Call(Kind.CLAIMS, brokerId, 0, null, null, 0, 0, 0, null);
        calls.add(call);
        return (CompletableFuture<ControlBackfills>)controlResponder.apply(call);
    }

    /** Applies a CLAIM call to the claim table as the control group would, or reads the table for CLAIMS. */
    CompletableFuture<?> answerAsControlGroup(final Call call)
    {
        if (call.kind() == Kind.CLAIMS)
        {
            final BackfillClaimTable.Contents contents = claims.contents();
            return CompletableFuture.completedFuture(new ControlBackfills(nowMs.get(),
                contents.claims().stream().map(c -> new ControlBackfills.Claim(c.exporterId(), c.backfillId(), c.phase(),
                    c.claimedAtMs(), c.releasableAtMs(), c.claimIndex())).toList(),
                contents.emptyBackfills().stream().map(e -> new ControlBackfills.Empty(e.backfillId(), e.exporterId(),
                    e.createdAtMs())).toList()));
        }
        final ClaimRequest request = call.claim();
        final long index = controlIndex.incrementAndGet();
        final BackfillClaimReply reply = claims.apply(new BackfillClaimChange(request.action(), request.exporterId(),
            request.backfillId(), request.expectedPhase(), request.expectedBackfillId(), request.empty(), nowMs.get(),
            call.brokerId()), index);
        final BackfillClaim held = reply.held();
        return CompletableFuture.completedFuture(new ClaimAnswer(reply.outcome(), index,
            held == null ? BackfillClaimPhase.NONE : held.phase(), held == null ? "" : held.backfillId(),
            held == null ? 0 : held.claimedAtMs(), reply.reason()));
    }

    @Override
    public CompletableFuture<List<BackfillTaskStatus>> status(
        final int brokerId, final int partitionId, final String backfillId, final Duration timeout)
    {
        return record(new Call(Kind.STATUS, brokerId, partitionId, backfillId, null, 0, 0, 0, null));
    }

    @Override
    public CompletableFuture<List<BackfillTaskStatus>> cancel(
        final int brokerId, final int partitionId, final String backfillId, final Duration timeout)
    {
        return record(new Call(Kind.CANCEL, brokerId, partitionId, backfillId, null, 0, 0, 0, null));
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
                final String refused = claims.registrationRefusal(call.exporterId(), call.backfillId(),
                    call.claimIndex() > 0, nowMs.get());
                if (refused != null)
                {
                    return CompletableFuture.failedFuture(new BrokerErrorException(ErrorCode.CONFLICT, -1,
                        "partition " + call.partitionId() + " on broker " + call.brokerId() + ": " + refused));
                }
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
