package io.sluice.gateway.metrics;

import io.sluice.gateway.topology.ClusterTopology;
import io.sluice.protocol.cluster.PartitionDistribution;
import io.sluice.protocol.cluster.PartitionReplica;
import io.sluice.protocol.cluster.PartitionStatus;
import io.sluice.protocol.codecs.ExportingState;
import io.sluice.protocol.codecs.PartitionRole;

import java.util.Map;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/** A topology the test sets by hand: which brokers answer and what each replica reports. */
final class MutableTopology implements ClusterTopology
{
    private final PartitionDistribution distribution;
    private final Set<Integer> reachable = ConcurrentHashMap.newKeySet();
    private final Map<PartitionReplica, PartitionStatus> statuses = new ConcurrentHashMap<>();

    /** 3 brokers, 2 partitions, RF 3: every broker hosts every partition. */
    MutableTopology()
    {
        this.distribution = PartitionDistribution.of("localhost:1,localhost:2,localhost:3", 2, 3);
    }

    /** Every broker reachable; broker (p - 1) leads partition p; all exporting with the given positions. */
    MutableTopology allExporting(final long lastPosition, final Map<String, Long> exporterPositions)
    {
        for (int b = 0; b < distribution.brokerCount(); b++)
        {
            reachable.add(b);
        }
        for (final PartitionReplica replica : distribution.replicas())
        {
            report(replica, ExportingState.EXPORTING, lastPosition, exporterPositions);
        }
        return this;
    }

    void report(
        final PartitionReplica replica, final ExportingState state, final long lastPosition, final Map<String, Long> exporters)
    {
        final int leader = replica.partitionId() - 1;
        final long exported = exporters.values().stream().mapToLong(Long::longValue).min().orElse(-1);
        statuses.put(replica, new PartitionStatus(
            replica.partitionId(),
            replica.brokerId() == leader ? PartitionRole.LEADER : PartitionRole.FOLLOWER,
            1, leader, state, 1, lastPosition, exported, Map.copyOf(exporters)));
    }

    void setState(final PartitionReplica replica, final ExportingState state)
    {
        statuses.computeIfPresent(replica, (r, s) -> new PartitionStatus(
            s.partitionId(), s.role(), s.term(), s.leaderId(), state, s.exportingStateVersion(),
            s.lastPosition(), s.exportedPosition(), s.exporterPositions()));
    }

    void setReachable(final int brokerId, final boolean isReachable)
    {
        if (isReachable)
        {
            reachable.add(brokerId);
        }
        else
        {
            reachable.remove(brokerId);
        }
    }

    @Override
    public PartitionDistribution distribution()
    {
        return distribution;
    }

    @Override
    public boolean isReachable(final int brokerId)
    {
        return reachable.contains(brokerId);
    }

    @Override
    public Optional<PartitionStatus> status(final PartitionReplica replica)
    {
        return isReachable(replica.brokerId()) ? Optional.ofNullable(statuses.get(replica)) : Optional.empty();
    }

    @Override
    public OptionalInt leaderOf(final int partitionId)
    {
        final int leader = partitionId - 1;
        return isReachable(leader) ? OptionalInt.of(leader) : OptionalInt.empty();
    }
}
