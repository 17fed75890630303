package io.sluice.gateway.management;

import org.springframework.boot.health.contributor.AbstractHealthIndicator;
import org.springframework.boot.health.contributor.Health;
import org.springframework.stereotype.Component;

import java.util.ArrayList;
import java.util.List;

/**
 * Health contributor {@code partitions}: UP when every partition has a reachable leader, which is when the
 * gateway can take writes for every key. Part of the readiness group.
 */
@Component("partitions")
public class PartitionLeadersHealthIndicator extends AbstractHealthIndicator
{
    private final ClusterViewService cluster;

    public PartitionLeadersHealthIndicator(final ClusterViewService cluster)
    {
        super("partition leaders could not be checked");
        this.cluster = cluster;
    }

    @Override
    protected void doHealthCheck(final Health.Builder builder)
    {
        final ClusterView view = cluster.view();
        final List<Integer> leaderless = new ArrayList<>();
        final List<Integer> unreachable = new ArrayList<>();
        for (final ClusterView.Partition partition : view.partitions())
        {
            if (partition.leaderId() < 0)
            {
                leaderless.add(partition.partitionId());
            }
        }
        for (final ClusterView.Broker broker : view.brokers())
        {
            if (!broker.reachable())
            {
                unreachable.add(broker.brokerId());
            }
        }
        (leaderless.isEmpty() ? builder.up() : builder.down())
            .withDetail("partitionsWithoutLeader", leaderless)
            .withDetail("unreachableBrokers", unreachable);
    }
}
