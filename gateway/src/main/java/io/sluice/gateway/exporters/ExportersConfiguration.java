package io.sluice.gateway.exporters;

import io.sluice.protocol.cluster.PartitionDistribution;
import io.sluice.protocol.transport.TransportClient;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/** The exporters status client on the gateway's shared transport (the transport's owner closes it). */
@Configuration(proxyBeanMethods = false)
public class ExportersConfiguration
{
    @Bean
    public ExportersClient exportersClient(final TransportClient transport, final PartitionDistribution distribution)
    {
        return new SbeExportersClient(transport, distribution);
    }
}
