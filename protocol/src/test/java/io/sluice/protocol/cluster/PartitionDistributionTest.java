package io.sluice.protocol.cluster;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.net.InetSocketAddress;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

@Timeout(10)
class PartitionDistributionTest
{
    private static final String THREE = "127.0.0.1:26501,127.0.0.1:26511,127.0.0.1:26521";

    @Test
    void threeBrokersReplicationFactorThreeSixPartitionsPutsEveryPartitionOnEveryBroker()
    {
        final PartitionDistribution distribution = PartitionDistribution.of(THREE, 6, 3);

        assertThat(distribution.replicasOf(1)).containsExactly(0, 1, 2);
        assertThat(distribution.replicasOf(2)).containsExactly(1, 2, 0);
        assertThat(distribution.replicasOf(3)).containsExactly(2, 0, 1);
        assertThat(distribution.replicasOf(4)).containsExactly(0, 1, 2);
        assertThat(distribution.replicasOf(6)).containsExactly(2, 0, 1);
        for (int broker = 0; broker < 3; broker++)
        {
            assertThat(distribution.partitionsOf(broker)).containsExactly(1, 2, 3, 4, 5, 6);
        }
        assertThat(distribution.replicas()).hasSize(18);
        assertThat(distribution.replicas().get(0)).isEqualTo(new PartitionReplica(0, 1));
        assertThat(distribution.replicas().get(17)).isEqualTo(new PartitionReplica(2, 6));
    }

    @Test
    void fourBrokersReplicationFactorThreeLeavesOneBrokerOutOfEachPartition()
    {
        final PartitionDistribution distribution =
            PartitionDistribution.of(THREE + ",127.0.0.1:26531", 8, 3);

        assertThat(distribution.replicasOf(1)).containsExactly(0, 1, 2);
        assertThat(distribution.replicasOf(2)).containsExactly(1, 2, 3);
        assertThat(distribution.replicasOf(3)).containsExactly(2, 3, 0);
        assertThat(distribution.replicasOf(4)).containsExactly(3, 0, 1);
        assertThat(distribution.replicasOf(5)).containsExactly(0, 1, 2);
        assertThat(distribution.partitionsOf(0)).containsExactly(1, 3, 4, 5, 7, 8);
        assertThat(distribution.partitionsOf(3)).containsExactly(2, 3, 4, 6, 7, 8);
        assertThat(distribution.contains(3, 1)).isFalse();
        assertThat(distribution.contains(3, 2)).isTrue();
        assertThat(distribution.contains(4, 2)).isFalse();
        assertThat(distribution.contains(0, 9)).isFalse();
        assertThat(distribution.replicas()).hasSize(24);
    }

    @Test
    void addressesStayUnresolvedAndRaftPortIsCommandPortPlusOne()
    {
        final PartitionDistribution distribution = PartitionDistribution.of("broker-a:26501, [::1]:26511", 2, 2);

        final InetSocketAddress first = distribution.commandAddress(0);
        assertThat(first.isUnresolved()).isTrue();
        assertThat(first.getHostString()).isEqualTo("broker-a");
        assertThat(first.getPort()).isEqualTo(26501);
        assertThat(distribution.commandAddress(1).getHostString()).isEqualTo("::1");
        assertThat(distribution.raftAddress(1).getPort()).isEqualTo(26512);
    }

    @Test
    void replicationFactorAboveClusterSizeNamesTheSetting()
    {
        assertThatThrownBy(() -> PartitionDistribution.of(THREE, 6, 4))
            .isInstanceOf(InvalidClusterConfigException.class)
            .hasMessageContaining(PartitionDistribution.REPLICATION_FACTOR_SETTING)
            .hasMessageContaining("4 exceeds the cluster size 3");
        assertThat(catchSetting(() -> PartitionDistribution.of(THREE, 6, 0)))
            .isEqualTo(PartitionDistribution.REPLICATION_FACTOR_SETTING);
        assertThat(catchSetting(() -> PartitionDistribution.of(THREE, 0, 3)))
            .isEqualTo(PartitionDistribution.PARTITIONS_SETTING);
    }

    @Test
    void badAddressesNameTheBrokersSettingAndTheEntry()
    {
        for (final String bad : List.of("", "  ", "127.0.0.1", "127.0.0.1:", ":26501", "host:port", "host:0",
            "host:65535", "127.0.0.1:26501,,127.0.0.1:26511"))
        {
            assertThatThrownBy(() -> PartitionDistribution.of(bad, 1, 1))
                .as("'%s'", bad)
                .isInstanceOf(InvalidClusterConfigException.class)
                .hasMessageStartingWith(PartitionDistribution.BROKERS_SETTING + ":");
        }
        assertThatThrownBy(() -> PartitionDistribution.of("host:port", 1, 1)).hasMessageContaining("'host:port'");
    }

    @Test
    void unknownNodeIdNamesTheSettingAndTheValidRange()
    {
        final PartitionDistribution distribution = PartitionDistribution.of(THREE, 6, 3);
        distribution.checkNodeId(2);
        assertThatThrownBy(() -> distribution.checkNodeId(3))
            .isInstanceOf(InvalidClusterConfigException.class)
            .hasMessageContaining(PartitionDistribution.NODE_ID_SETTING)
            .hasMessageContaining("0..2");
        assertThatThrownBy(() -> distribution.replicasOf(7)).hasMessageContaining("unknown partition 7");
    }

    private static String catchSetting(final Runnable action)
    {
        try
        {
            action.run();
        }
        catch (final InvalidClusterConfigException e)
        {
            return e.setting();
        }
        return null;
    }
}
