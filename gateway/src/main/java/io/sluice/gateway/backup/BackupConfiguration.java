package io.sluice.gateway.backup;

import io.sluice.gateway.topology.ClusterTopology;
import io.sluice.protocol.backup.BackupStores;
import io.sluice.protocol.cluster.PartitionDistribution;
import io.sluice.protocol.transport.TransportClient;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.env.Environment;

import java.time.Clock;
import java.time.Duration;

/** The backup service over the store {@code sluice.backup.*} names, on the gateway's shared transport. */
@Configuration(proxyBeanMethods = false)
public class BackupConfiguration
{
    @Bean
    public BackupClient backupClient(final TransportClient transport, final PartitionDistribution distribution)
    {
        return new SbeBackupClient(transport, distribution);
    }

    @Bean(destroyMethod = "close")
    public BackupService backupService(
        final BackupClient client,
        final ClusterTopology topology,
        final Environment environment,
        @Value("${sluice.gateway.request-timeout:5s}") final Duration requestTimeout,
        @Value("${sluice.backup.upload-timeout:30m}") final Duration uploadTimeout,
        @Value("${sluice.backup.hold-timeout:60s}") final Duration holdTimeout,
        @Value("${sluice.backup.retention.max-count:#{null}}") final Integer retentionMaxCount)
    {
        if (retentionMaxCount != null && retentionMaxCount < 1)
        {
            throw new IllegalArgumentException("sluice.backup.retention.max-count must be at least 1, was " +
                retentionMaxCount);
        }
        return new BackupService(client, topology, BackupStores.fromSettings(environment::getProperty),
            requestTimeout, uploadTimeout, holdTimeout, retentionMaxCount, Clock.systemUTC());
    }
}
