package io.sluice.gateway.management;

import io.sluice.gateway.topology.ClusterTopology;
import io.sluice.gateway.topology.PolledClusterTopology;
import io.sluice.protocol.cluster.PartitionDistribution;
import io.sluice.protocol.cluster.PartitionStatus;
import org.springframework.stereotype.Service;

import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/** Builds the cluster view from the topology; the endpoints only return it. */
@Service
public class ClusterViewService
{
    /** A partition whose leader is reachable and every replica reachable. */
    public static final String HEALTHY = "HEALTHY";
    /** A partition with a leader but some replica unreachable. */
    public static final String DEGRADED = "DEGRADED";
    /** A partition without a reachable leader: it takes no writes. */
    public static final String UNAVAILABLE = "UNAVAILABLE";

    private final ClusterTopology topology;

    public ClusterViewService(final ClusterTopology topology)
    {
        this.topology = topology;
    }

    public ClusterView view()
    {
        final PartitionDistribution distribution = topology.distribution();
        final List<List<Integer>> led = new ArrayList<>();
        final List<List<Integer>> preferred = new ArrayList<>();
        for (int b = 0; b < distribution.brokerCount(); b++)
        {
            led.add(new ArrayList<>());
            preferred.add(new ArrayList<>());
        }
        for (int p = 1; p <= distribution.partitionCount(); p++)
        {
            final int leader = topology.leaderOf(p).orElse(-1);
            if (leader >= 0 && leader < distribution.brokerCount())
            {
                led.get(leader).add(p);
            }
            preferred.get(distribution.replicasOf(p).get(0)).add(p);
        }
        final List<ClusterView.Broker> brokers = new ArrayList<>();
        for (int b = 0; b < distribution.brokerCount(); b++)
        {
            final InetSocketAddress address = distribution.commandAddress(b);
            final boolean reachable = topology.isReachable(b);
            final String reason = reachable ? null : unreachableReason(b);
            brokers.add(new ClusterView.Broker(b, address.getHostString() + ":" + address.getPort(), reachable, reason,
                List.copyOf(led.get(b)), List.copyOf(preferred.get(b)), reachable && topology.isControlCaughtUp(b)));
        }
        final List<ClusterView.Partition> partitions = new ArrayList<>();
        for (int p = 1; p <= distribution.partitionCount(); p++)
        {
            final List<ClusterView.Replica> replicas = new ArrayList<>();
            boolean allReachable = true;
            for (final int brokerId : distribution.replicasOf(p))
            {
                final Optional<PartitionStatus> status =
                    topology.status(new io.sluice.protocol.cluster.PartitionReplica(brokerId, p));
                if (status.isPresent())
                {
                    final PartitionStatus s = status.get();
                    replicas.add(new ClusterView.Replica(brokerId, s.role().name(), s.term(), true, s.leaderId(),
                        s.lastPosition(), s.exportedPosition()));
                }
                else
                {
                    allReachable = false;
                    replicas.add(new ClusterView.Replica(brokerId, "UNKNOWN", -1, topology.isReachable(brokerId),
                        -1, -1, -1));
                }
            }
            final int leader = topology.leaderOf(p).orElse(-1);
            final String health = leader < 0 ? UNAVAILABLE : allReachable ? HEALTHY : DEGRADED;
            partitions.add(new ClusterView.Partition(p, leader, distribution.replicasOf(p).get(0), health,
                List.copyOf(replicas)));
        }
        return new ClusterView(distribution.brokerCount(), distribution.partitionCount(),
            distribution.replicationFactor(), topology.controlLeader().orElse(-1), List.copyOf(brokers),
            List.copyOf(partitions));
    }

    /** Whether every partition has a reachable leader. */
    public boolean everyPartitionHasLeader()
    {
        for (int p = 1; p <= topology.distribution().partitionCount(); p++)
        {
            if (topology.leaderOf(p).isEmpty())
            {
                return false;
            }
        }
        return true;
    }

    private String unreachableReason(final int brokerId)
    {
        return topology instanceof PolledClusterTopology polled ?
            polled.unreachableReason(brokerId).orElse("unreachable") : "unreachable";
    }
}
