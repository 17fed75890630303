package io.sluice.broker;

import io.sluice.broker.exporter.ExporterConfig;
import io.sluice.protocol.cluster.InvalidClusterConfigException;
import io.sluice.protocol.cluster.PartitionDistribution;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** Bad configuration stops a broker with one line naming the setting. */
class BrokerStartTest
{
    @TempDir
    Path dataDir;

    @Test
    @Timeout(30)
    void nodeIdOutsideTheClusterNamesTheSetting()
    {
        final PartitionDistribution distribution = PartitionDistribution.of("127.0.0.1:1,127.0.0.1:3", 2, 2);
        assertThatThrownBy(() -> Broker.start(BrokerConfig.of(5, distribution, dataDir, Map.of())))
            .isInstanceOf(InvalidClusterConfigException.class)
            .hasMessageStartingWith(PartitionDistribution.NODE_ID_SETTING);
    }

    @Test
    @Timeout(30)
    void portInUseNamesThePortAndTheBroker() throws Exception
    {
        try (ServerSocket taken = new ServerSocket(0, 50, InetAddress.getLoopbackAddress()))
        {
            final PartitionDistribution distribution = new PartitionDistribution(
                List.of(InetSocketAddress.createUnresolved("127.0.0.1", taken.getLocalPort())), 1, 1);
            assertThatThrownBy(() -> Broker.start(BrokerConfig.of(0, distribution, dataDir, Map.of())))
                .isInstanceOf(InvalidClusterConfigException.class)
                .hasMessageStartingWith(PartitionDistribution.BROKERS_SETTING + ": port " + taken.getLocalPort() +
                    " of broker 0 is in use");
        }
    }

    @Test
    @Timeout(30)
    void unknownExporterTypeNamesTheSetting()
    {
        final PartitionDistribution distribution = PartitionDistribution.of("127.0.0.1:1", 1, 1);
        assertThatThrownBy(() -> Broker.start(BrokerConfig.of(0, distribution, dataDir,
            Map.of("s3", new ExporterConfig("s3", "s3", Map.of())))))
            .isInstanceOf(InvalidClusterConfigException.class)
            .hasMessageStartingWith("sluice.exporters.s3.type");
    }

    @Test
    @Timeout(30)
    void kafkaExporterWithoutBootstrapServersNamesTheSettingBeforeAnythingStarts()
    {
        final PartitionDistribution distribution = PartitionDistribution.of("127.0.0.1:1", 1, 1);
        assertThatThrownBy(() -> Broker.start(BrokerConfig.of(0, distribution, dataDir,
            Map.of("events", new ExporterConfig("events", "kafka", Map.of("topic", "t"))))))
            .isInstanceOf(InvalidClusterConfigException.class)
            .hasMessageStartingWith("sluice.exporters.events.bootstrap-servers: required");
        assertThat(dataDir.resolve("broker-0")).doesNotExist();
    }
}
