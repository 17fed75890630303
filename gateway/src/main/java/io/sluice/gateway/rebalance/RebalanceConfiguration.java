package io.sluice.gateway.rebalance;

import io.sluice.protocol.cluster.PartitionDistribution;
import io.sluice.protocol.transport.TransportClient;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/** The rebalance client on the gateway's shared transport (the transport's owner closes it). */
@Configuration(proxyBeanMethods = false)
public class RebalanceConfiguration
{
    @Bean
    public RebalanceClient rebalanceClient(final TransportClient transport, final PartitionDistribution distribution)
    {
        return new SbeRebalanceClient(transport, distribution);
    }
}
