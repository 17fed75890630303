package io.sluice.dist;

import io.sluice.broker.BrokerConfig;
import io.sluice.protocol.cluster.InvalidClusterConfigException;
import io.sluice.protocol.cluster.PartitionDistribution;
import org.junit.jupiter.api.Test;

import java.nio.file.Path;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

final class SluicePropertiesTest
{
    private static BrokerConfig defaults(final SluiceProperties sluice)
    {
        return BrokerConfig.of(0, PartitionDistribution.of("127.0.0.1:26500", 1, 1), Path.of("d"),
            sluice.exporterConfigs());
    }

    @Test
    void snapshotThresholdAndSegmentSizeReachTheBrokerWhenSet()
    {
        final SluiceProperties sluice = new SluiceProperties();
        final BrokerConfig unset = sluice.withStorage(defaults(sluice));
        assertThat(unset.snapshotThresholdEntries()).isEqualTo(defaults(sluice).snapshotThresholdEntries());
        sluice.getBroker().setSnapshotThreshold(50L);
        sluice.getBroker().setSegmentSize("4KB");
        final BrokerConfig set = sluice.withStorage(defaults(sluice));
        assertThat(set.snapshotThresholdEntries()).isEqualTo(50);
        assertThat(set.segmentSizeBytes()).isEqualTo(4096);
    }

    @Test
    void aSegmentSizeOrSnapshotThresholdThatCannotWorkNamesItsSetting()
    {
        final SluiceProperties sluice = new SluiceProperties();
        sluice.getBroker().setSegmentSize("12");
        assertThatThrownBy(() -> sluice.withStorage(defaults(sluice)))
            .isInstanceOf(InvalidClusterConfigException.class)
            .hasMessageStartingWith("sluice.broker.segment-size: '12' is not a size");
        sluice.getBroker().setSegmentSize("lots");
        assertThatThrownBy(() -> sluice.withStorage(defaults(sluice)))
            .hasMessageStartingWith("sluice.broker.segment-size: 'lots'");
        sluice.getBroker().setSegmentSize(null);
        sluice.getBroker().setSnapshotThreshold(0L);
        assertThatThrownBy(() -> sluice.withStorage(defaults(sluice)))
            .hasMessageStartingWith("sluice.broker.snapshot-threshold: '0' is not a positive number");
    }

    @Test
    void anElectionTimeoutReachesEveryGroupWithTwiceItAsTheMaximum()
    {
        final SluiceProperties sluice = new SluiceProperties();
        final BrokerConfig unset = sluice.withStorage(defaults(sluice));
        assertThat(unset.electionTimeoutMin()).isEqualTo(defaults(sluice).electionTimeoutMin());
        assertThat(unset.electionTimeoutMax()).isEqualTo(defaults(sluice).electionTimeoutMax());
        sluice.getBroker().setElectionTimeout(java.time.Duration.ofSeconds(5));
        final BrokerConfig set = sluice.withStorage(defaults(sluice));
        assertThat(set.electionTimeoutMin()).isEqualTo(java.time.Duration.ofSeconds(5));
        assertThat(set.electionTimeoutMax()).isEqualTo(java.time.Duration.ofSeconds(10));
    }

    @Test
    void anElectionTimeoutOutOfRangeNamesItsSetting()
    {
        final SluiceProperties sluice = new SluiceProperties();
        sluice.getBroker().setElectionTimeout(java.time.Duration.ofMillis(50));
        assertThatThrownBy(() -> sluice.withStorage(defaults(sluice)))
            .isInstanceOf(InvalidClusterConfigException.class)
            .hasMessageStartingWith("sluice.broker.election-timeout: '50ms' is not from 100ms to 60s");
        sluice.getBroker().setElectionTimeout(java.time.Duration.ofMinutes(2));
        assertThatThrownBy(() -> sluice.withStorage(defaults(sluice)))
            .hasMessageStartingWith("sluice.broker.election-timeout: '120000ms' is not from 100ms to 60s");
    }
}
