package io.sluice.gateway.exporting;

import io.sluice.gateway.topology.ClusterTopology;
import io.sluice.protocol.cluster.PartitionDistribution;
import io.sluice.protocol.cluster.PartitionReplica;
import io.sluice.protocol.cluster.PartitionStatus;

import java.util.Map;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/** A topology whose reachability and reported states a test sets directly. */
public final class FakeClusterTopology implements ClusterTopology
{
    private final PartitionDistribution distribution;
    private final Set<Integer> unreachable = ConcurrentHashMap.newKeySet();
    private final Map<PartitionReplica, PartitionStatus> statuses = new ConcurrentHashMap<>();
    private final Map<Integer, Integer> leaders = new ConcurrentHashMap<>();
    private final Set<Integer> notCaughtUp = ConcurrentHashMap.newKeySet();
    private volatile int controlLeader = -1;

    public FakeClusterTopology(final PartitionDistribution distribution)
    {
        this.distribution = distribution;
    }

    public static FakeClusterTopology threeBrokersSixPartitions()
    {
        return new FakeClusterTopology(
            PartitionDistribution.of("127.0.0.1:26501,127.0.0.1:26511,127.0.0.1:26521", 6, 3));
    }

    public FakeClusterTopology unreachable(final int brokerId)
    {
        unreachable.add(brokerId);
        return this;
    }

    public FakeClusterTopology report(final PartitionReplica replica, final PartitionStatus status)
    {
        statuses.put(replica, status);
        return this;
    }

    public FakeClusterTopology leader(final int partitionId, final int brokerId)
    {
        leaders.put(partitionId, brokerId);
        return this;
    }

    public FakeClusterTopology controlLeader(final int brokerId)
    {
        controlLeader = brokerId;
        return this;
    }

    /** The broker reports its control group replica has not caught up yet. */
    public FakeClusterTopology controlNotCaughtUp(final int brokerId)
    {
        notCaughtUp.add(brokerId);
        return this;
    }

    /** Every broker reachable again, nothing reported, no leader known. */
    public void reset()
    {
        unreachable.clear();
        statuses.clear();
        leaders.clear();
        notCaughtUp.clear();
        controlLeader = -1;
    }

    @Override
    public PartitionDistribution distribution()
    {
        return distribution;
    }

    @Override
    public boolean isReachable(final int brokerId)
    {
        return distribution.isBroker(brokerId) && !unreachable.contains(brokerId);
    }

    @Override
    public Optional<PartitionStatus> status(final PartitionReplica replica)
    {
        return isReachable(replica.brokerId()) ? Optional.ofNullable(statuses.get(replica)) : Optional.empty();
    }

    @Override
    public OptionalInt leaderOf(final int partitionId)
    {
        final Integer leader = leaders.get(partitionId);
        return leader == null ? OptionalInt.empty() : OptionalInt.of(leader);
    }

    @Override
    public OptionalInt controlLeader()
    {
        final int leader = controlLeader;
        return leader < 0 ? OptionalInt.empty() : OptionalInt.of(leader);
    }

    @Override
    public boolean isControlCaughtUp(final int brokerId)
    {
        return isReachable(brokerId) && !notCaughtUp.contains(brokerId);
    }
}
