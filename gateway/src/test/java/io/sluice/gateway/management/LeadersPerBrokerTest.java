package io.sluice.gateway.management;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.sluice.gateway.exporting.FakeClusterTopology;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/** The cluster view and the metrics show which partitions each broker leads and which it should lead. */
class LeadersPerBrokerTest
{
    private final FakeClusterTopology topology = FakeClusterTopology.threeBrokersSixPartitions();

    @Test
    void theClusterViewListsPerBrokerTheLedAndThePreferredPartitions()
    {
        // Broker 0 is back from a restart and leads nothing yet; 1 and 2 took its partitions 1 and 4.
        topology.leader(1, 1).leader(2, 1).leader(3, 2).leader(4, 2).leader(5, 1).leader(6, 2);

        final ClusterView view = new ClusterViewService(topology).view();

        assertThat(view.brokers().get(0).leaderOf()).isEmpty();
        assertThat(view.brokers().get(0).preferredLeaderOf()).containsExactly(1, 4);
        assertThat(view.brokers().get(1).leaderOf()).containsExactly(1, 2, 5);
        assertThat(view.brokers().get(1).preferredLeaderOf()).containsExactly(2, 5);
        assertThat(view.brokers().get(2).leaderOf()).containsExactly(3, 4, 6);
        assertThat(view.partitions().get(3).preferredLeaderId()).isZero();
        assertThat(view.partitions().get(3).leaderId()).isEqualTo(2);
    }

    @Test
    void theClusterViewNamesTheControlGroupsLeaderAndWhichBrokersCaughtUpWithIt()
    {
        assertThat(new ClusterViewService(topology).view().controlLeaderId()).as("none known").isEqualTo(-1);

        topology.controlLeader(2).controlNotCaughtUp(1).unreachable(0);
        final ClusterView view = new ClusterViewService(topology).view();

        assertThat(view.controlLeaderId()).isEqualTo(2);
        assertThat(view.brokers()).extracting(ClusterView.Broker::controlCaughtUp).containsExactly(false, false, true);
    }

    @Test
    void theMetricsCountLeadersPerBrokerAndPartitionsAwayFromTheirPreferredBroker()
    {
        final SimpleMeterRegistry registry = new SimpleMeterRegistry();
        new ClusterMetrics(topology).bindTo(registry);
        topology.leader(1, 1).leader(2, 1).leader(3, 2).leader(4, 0).leader(5, 1);

        assertThat(registry.get("sluice.broker.leaders").tag("broker", "0").gauge().value()).isEqualTo(1);
        assertThat(registry.get("sluice.broker.leaders").tag("broker", "1").gauge().value()).isEqualTo(3);
        assertThat(registry.get("sluice.broker.leaders").tag("broker", "2").gauge().value()).isEqualTo(1);
        assertThat(registry.get("sluice.partitions.leader.not.preferred").gauge().value()).isEqualTo(1);

        topology.leader(1, 0);
        assertThat(registry.get("sluice.partitions.leader.not.preferred").gauge().value()).isZero();
    }
}
