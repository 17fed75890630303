package io.sluice.gateway.config;

import io.sluice.gateway.broker.BrokerClient;
import io.sluice.gateway.broker.SbeBrokerClient;
import io.sluice.gateway.topology.ClusterTopology;
import io.sluice.gateway.topology.PolledClusterTopology;
import io.sluice.protocol.cluster.PartitionDistribution;
import io.sluice.protocol.tls.ClusterTls;
import io.sluice.protocol.tls.TlsFiles;
import io.sluice.protocol.transport.TransportClient;
import io.sluice.protocol.transport.TransportConfig;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.ApplicationListener;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.event.ContextClosedEvent;

import java.time.Clock;
import java.util.OptionalInt;
import java.util.concurrent.atomic.AtomicReference;

/**
 * The gateway's core beans: the static distribution, the SBE transport client, the broker client and the
 * polled topology. The broker client asks the topology for leaders; the topology polls through the client,
 * so the client reaches the topology lazily.
 */
@Configuration(proxyBeanMethods = false)
@EnableConfigurationProperties({ClusterProperties.class, GatewayProperties.class})
public class GatewayConfiguration
{
    @Bean
    public PartitionDistribution partitionDistribution(final ClusterProperties cluster)
    {
        return cluster.toDistribution();
    }

    /** Only with {@code sluice.cluster.tls.enabled=true}: the files are read and checked at startup. */
    @Bean
    @ConditionalOnProperty(name = TlsFiles.ENABLED_SETTING, havingValue = "true")
    public ClusterTls clusterTlsMaterial(final ClusterProperties cluster)
    {
        return cluster.loadTls();
    }

    @Bean(destroyMethod = "close")
    public TransportClient transportClient(final ObjectProvider<ClusterTls> tls)
    {
        return new TransportClient(TransportConfig.defaults(), tls.getIfAvailable());
    }

    @Bean(destroyMethod = "close")
    public SbeBrokerClient brokerClient(
        final TransportClient transport,
        final PartitionDistribution distribution,
        final ObjectProvider<ClusterTopology> topology)
    {
        final AtomicReference<ClusterTopology> resolved = new AtomicReference<>();
        return new SbeBrokerClient(transport, distribution, partitionId ->
        {
            ClusterTopology known = resolved.get();
            if (known == null)
            {
                known = topology.getIfAvailable();
                resolved.set(known);
            }
            return known == null ? OptionalInt.empty() : known.leaderOf(partitionId);
        }, false);
    }

    @Bean(initMethod = "start", destroyMethod = "close")
    public PolledClusterTopology clusterTopology(
        final PartitionDistribution distribution, final BrokerClient brokerClient, final GatewayProperties gateway)
    {
        return new PolledClusterTopology(
            distribution, brokerClient, gateway.getTopologyPollInterval(), gateway.getTopologyPollTimeout());
    }

    /**
     * Stops polling as soon as the context starts closing, so brokers embedded in the same JVM (standalone)
     * can stop without the gateway reporting each one as lost.
     */
    @Bean
    public ApplicationListener<ContextClosedEvent> stopTopologyPollingOnClose(final PolledClusterTopology topology)
    {
        return event -> topology.close();
    }

    @Bean
    public Clock clock()
    {
        return Clock.systemUTC();
    }
}
