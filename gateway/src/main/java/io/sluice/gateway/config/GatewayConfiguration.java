package io.sluice.gateway.config;

import io.sluice.gateway.broker.BrokerClient;
import io.sluice.gateway.broker.SbeBrokerClient;
import io.sluice.gateway.topology.ClusterTopology;
import io.sluice.gateway.topology.PolledClusterTopology;
import io.sluice.gateway.web.ContainerErrorsAsJson;
import io.sluice.gateway.web.ContractErrorAttributes;
import io.sluice.gateway.web.StrictQueryParameters;
import io.sluice.protocol.cluster.PartitionDistribution;
import io.sluice.protocol.tls.ClusterTls;
import io.sluice.protocol.tls.TlsFiles;
import io.sluice.protocol.tls.TlsModeProbe;
import io.sluice.protocol.transport.TransportClient;
import io.sluice.protocol.transport.TransportConfig;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.boot.web.servlet.FilterRegistrationBean;
import org.springframework.context.ApplicationListener;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.event.ContextClosedEvent;
import org.springframework.core.env.Environment;

import java.net.InetSocketAddress;
import java.time.Clock;
import java.util.ArrayList;
import java.util.List;
import java.util.OptionalInt;
import java.util.concurrent.atomic.AtomicReference;

/**
 * The gateway's core beans: the static distribution, the SBE transport client, the broker client and the
 * polled topology. The broker client asks the topology for leaders; the topology polls through the client,
 * so the client reaches the topology lazily.
 */
@Configuration(proxyBeanMethods = false)
@EnableConfigurationProperties({ClusterProperties.class, GatewayProperties.class, RecordsProperties.class})
public class GatewayConfiguration
{
    /** Tomcat's own errors on the client port as JSON (the management context has its own, see ManagementWebConfiguration). */
    @Bean
    public ContainerErrorsAsJson containerErrorsAsJson()
    {
        return new ContainerErrorsAsJson();
    }

    /** Unknown query parameters are refused on the client port (and the management port when shared). */
    @Bean
    public FilterRegistrationBean<StrictQueryParameters> strictQueryParameters(final Environment environment)
    {
        return StrictQueryParameters.registration("strictQueryParameters", environment);
    }

    @Bean
    public ContractErrorAttributes contractErrorAttributes()
    {
        return new ContractErrorAttributes();
    }

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

    /**
     * Before the gateway opens a connection: a broker on the other side of {@code sluice.cluster.tls.enabled} stops
     * the start (brokers that are down or silent are probed no longer than {@link TlsModeProbe#DEFAULT_BUDGET}).
     */
    @Bean(destroyMethod = "close")
    public TransportClient transportClient(final ObjectProvider<ClusterTls> tls, final PartitionDistribution distribution)
    {
        final List<TlsModeProbe.Peer> brokers = new ArrayList<>();
        for (int brokerId = 0; brokerId < distribution.brokerCount(); brokerId++)
        {
            final InetSocketAddress address = distribution.commandAddress(brokerId);
            brokers.add(new TlsModeProbe.Peer(address, "broker " + brokerId + " at " + address.getHostString() + ":" +
                address.getPort()));
        }
        final ClusterTls clusterTls = tls.getIfAvailable();
        TlsModeProbe.check(clusterTls != null, "the gateway", brokers, TlsModeProbe.DEFAULT_BUDGET);
        return new TransportClient(TransportConfig.defaults(), clusterTls);
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
