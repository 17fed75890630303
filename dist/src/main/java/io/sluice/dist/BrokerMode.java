package io.sluice.dist;

import io.sluice.broker.Broker;
import io.sluice.broker.BrokerConfig;
import io.sluice.gateway.config.ClusterProperties;
import io.sluice.protocol.backup.BackupStores;
import io.sluice.protocol.cluster.InvalidClusterConfigException;
import io.sluice.protocol.cluster.PartitionDistribution;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.env.Environment;

import java.io.IOException;
import java.io.UncheckedIOException;

/**
 * {@code sluice.jar broker}: one broker in a non-web Spring context, so every setting is a Spring property.
 * The broker closes with the context (on SIGTERM through Spring's shutdown hook), handing its leaderships over
 * first (controlled shutdown, bounded by {@link BrokerConfig#DEFAULT_SHUTDOWN_TIMEOUT}).
 */
@Configuration(proxyBeanMethods = false)
@EnableConfigurationProperties({ClusterProperties.class, SluiceProperties.class})
public class BrokerMode
{
    @Bean
    public PartitionDistribution partitionDistribution(final ClusterProperties cluster)
    {
        return cluster.toDistribution();
    }

    @Bean(destroyMethod = "close")
    public Broker broker(final PartitionDistribution distribution, final ClusterProperties cluster,
        final SluiceProperties sluice, final Environment environment)
    {
        final Integer nodeId = sluice.getBroker().getNodeId();
        if (nodeId == null)
        {
            throw new InvalidClusterConfigException(PartitionDistribution.NODE_ID_SETTING,
                "required in broker mode (e.g. --" + PartitionDistribution.NODE_ID_SETTING + "=0 or SLUICE_BROKER_NODE_ID=0)");
        }
        distribution.checkNodeId(nodeId);
        try
        {
            return Broker.start(sluice.withStorage(BrokerConfig.of(nodeId, distribution, sluice.getDataDir(), sluice.exporterConfigs()))
                .withAutoRebalance(cluster.isAutoRebalance())
                .withControlVoters(cluster.getControlVoters()),
                cluster.loadTls(), BackupStores.fromSettings(environment::getProperty));
        }
        catch (final IOException e)
        {
            throw new UncheckedIOException("broker " + nodeId + ": cannot start in " +
                sluice.getDataDir().toAbsolutePath().normalize() + ": " + e.getMessage(), e);
        }
    }
}
