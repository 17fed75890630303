package io.sluice.gateway.management;

import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.binder.MeterBinder;
import io.sluice.gateway.topology.ClusterTopology;
import io.sluice.protocol.cluster.PartitionDistribution;
import io.sluice.protocol.cluster.PartitionReplica;
import io.sluice.protocol.cluster.PartitionStatus;
import org.springframework.stereotype.Component;

import java.util.Optional;

/**
 * The brokers' key figures as gauges read from the topology at scrape time: per broker whether it is
 * reachable and how many partitions it leads; how many partitions are led away from their preferred broker; per
 * partition its leader, last committed position and exported position (as the leader
 * reports them, else the highest a reachable replica reports; -1 when unknown).
 */
@Component
public class ClusterMetrics implements MeterBinder
{
    private final ClusterTopology topology;

    public ClusterMetrics(final ClusterTopology topology)
    {
        this.topology = topology;
    }

    @Override
    public void bindTo(final MeterRegistry registry)
    {
        final PartitionDistribution distribution = topology.distribution();
        for (int b = 0; b < distribution.brokerCount(); b++)
        {
            final int brokerId = b;
            Gauge.builder("sluice.broker.reachable", () -> topology.isReachable(brokerId) ? 1 : 0)
                .description("1 when the broker answered its latest topology poll")
                .tag("broker", Integer.toString(brokerId))
                .register(registry);
            Gauge.builder("sluice.broker.leaders", () -> leadersOn(brokerId))
                .description("Partitions the broker leads")
                .tag("broker", Integer.toString(brokerId))
                .register(registry);
            Gauge.builder("sluice.broker.disk.used.ratio", () -> topology.disk(brokerId).usedRatio())
                .description("Share of the broker's data directory's volume in use (0 to 1); past " +
                    "sluice.broker.disk.high-watermark it refuses appends")
                .tag("broker", Integer.toString(brokerId))
                .register(registry);
            Gauge.builder("sluice.broker.disk.free", () -> freeBytes(brokerId))
                .description("Bytes free on the broker's data directory's volume")
                .baseUnit("bytes")
                .tag("broker", Integer.toString(brokerId))
                .register(registry);
            FunctionCounter.builder("sluice.broker.appends.refused.disk", topology,
                    (t) -> t.disk(brokerId).appendsRefused())
                .description("Appends the broker refused with 507 disk-full since it started")
                .tag("broker", Integer.toString(brokerId))
                .register(registry);
        }
        Gauge.builder("sluice.partitions.leader.not.preferred", this::leadersNotPreferred)
            .description("Partitions led by a broker other than their preferred one (the first of the placement); " +
                "POST /actuator/rebalance moves them back")
            .register(registry);
        for (int p = 1; p <= distribution.partitionCount(); p++)
        {
            final int partitionId = p;
            final String tag = Integer.toString(partitionId);
            Gauge.builder("sluice.partition.leader", () -> topology.leaderOf(partitionId).orElse(-1))
                .description("Broker id of the partition's leader, -1 when none is reachable")
                .tag("partition", tag)
                .register(registry);
            Gauge.builder("sluice.partition.last.position", () -> position(partitionId, true))
                .description("Last committed position of the partition")
                .tag("partition", tag)
                .register(registry);
            Gauge.builder("sluice.partition.exported.position", () -> position(partitionId, false))
                .description("Lowest acknowledged position over the partition's exporters")
                .tag("partition", tag)
                .register(registry);
        }
    }

    private double freeBytes(final int brokerId)
    {
        final long free = topology.disk(brokerId).freeBytes();
        return free < 0 ? Double.NaN : free;
    }

    private int leadersOn(final int brokerId)
    {
        int count = 0;
        for (int p = 1; p <= topology.distribution().partitionCount(); p++)
        {
            if (topology.leaderOf(p).orElse(-1) == brokerId)
            {
                count++;
            }
        }
        return count;
    }

    private int leadersNotPreferred()
    {
        int count = 0;
        for (int p = 1; p <= topology.distribution().partitionCount(); p++)
        {
            final int leader = topology.leaderOf(p).orElse(-1);
            if (leader >= 0 && leader != topology.distribution().replicasOf(p).get(0))
            {
                count++;
            }
        }
        return count;
    }

    private long position(final int partitionId, final boolean last)
    {
        final int leader = topology.leaderOf(partitionId).orElse(-1);
        if (leader >= 0)
        {
            final Optional<PartitionStatus> status = topology.status(new PartitionReplica(leader, partitionId));
            if (status.isPresent())
            {
                return last ? status.get().lastPosition() : status.get().exportedPosition();
            }
        }
        long best = -1;
        for (final int brokerId : topology.distribution().replicasOf(partitionId))
        {
            final Optional<PartitionStatus> status = topology.status(new PartitionReplica(brokerId, partitionId));
            if (status.isPresent())
            {
                best = Math.max(best, last ? status.get().lastPosition() : status.get().exportedPosition());
            }
        }
        return best;
    }
}
