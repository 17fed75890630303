package io.sluice.gateway.backfill;

import io.sluice.protocol.cluster.PartitionDistribution;
import io.sluice.protocol.transport.TransportClient;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/** The backfill client on the gateway's shared transport (the transport's owner closes it). */
@Configuration(proxyBeanMethods = false)
public class BackfillConfiguration
{
    @Bean
    public BackfillClient backfillClient(final TransportClient transport, final PartitionDistribution distribution)
    {
        return new SbeBackfillClient(transport, distribution);
    }
}
