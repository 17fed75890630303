package io.sluice.dist;

import io.sluice.broker.Broker;
import io.sluice.gateway.backup.BackupService;
import io.sluice.broker.BrokerConfig;
import io.sluice.broker.exporter.ExporterConfig;
import io.sluice.gateway.config.ClusterProperties;
import io.sluice.protocol.cluster.PartitionDistribution;
import io.sluice.protocol.concurrent.Futures;
import io.sluice.protocol.tls.ClusterTls;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;

/**
 * {@code sluice.jar standalone}: every broker of the distribution in this JVM, next to the gateway (which
 * brings the {@link PartitionDistribution} bean). Brokers start in parallel so their partitions' first
 * elections overlap, and close in reverse order with the context, each handing its leaderships to the brokers
 * still running first (controlled shutdown; the last one has nobody to hand over to and stops at once).
 */
@Configuration(proxyBeanMethods = false)
@EnableConfigurationProperties(SluiceProperties.class)
public class StandaloneMode
{
    private static final Logger LOG = LoggerFactory.getLogger(StandaloneMode.class);

    @Bean(destroyMethod = "close")
    public EmbeddedBrokers embeddedBrokers(
        final PartitionDistribution distribution, final ClusterProperties cluster, final SluiceProperties sluice,
        final ObjectProvider<ClusterTls> tls, final BackupService backups)
    {
        // The gateway's cluster TLS bean (only with sluice.cluster.tls.enabled=true): one certificate for the JVM.
        final ClusterTls clusterTls = tls.getIfAvailable();
        final Map<String, ExporterConfig> exporters = sluice.exporterConfigs();
        final EmbeddedBrokers brokers = new EmbeddedBrokers();
        final List<CompletableFuture<Broker>> starting = new ArrayList<>();
        for (int nodeId = 0; nodeId < distribution.brokerCount(); nodeId++)
        {
            final BrokerConfig config = sluice.withStorage(BrokerConfig.of(nodeId, distribution, sluice.getDataDir(), exporters))
                .withAutoRebalance(cluster.isAutoRebalance()).withControlVoters(cluster.getControlVoters());
            final CompletableFuture<Broker> start = new CompletableFuture<>();
            final Thread starter = new Thread(() ->
            {
                try
                {
                    start.complete(Broker.start(config, clusterTls, backups.store()));
                }
                catch (final Throwable t)
                {
                    start.completeExceptionally(t);
                }
            }, "sluice-broker-" + nodeId + "-start");
            starter.start();
            starting.add(start);
        }
        RuntimeException failure = null;
        for (final CompletableFuture<Broker> start : starting)
        {
            try
            {
                brokers.add(start.join());
            }
            catch (final CompletionException e)
            {
                final Throwable cause = Futures.unwrap(e);
                if (failure == null)
                {
                    failure = cause instanceof RuntimeException runtime ? runtime : new IllegalStateException(cause);
                }
            }
        }
        if (failure != null)
        {
            brokers.close();
            throw failure;
        }
        LOG.info("standalone: {} brokers started, data in {}", distribution.brokerCount(),
            sluice.getDataDir().toAbsolutePath().normalize());
        return brokers;
    }

    /** The in-JVM brokers; closing closes each, last started first. */
    public static final class EmbeddedBrokers implements AutoCloseable
    {
        private final List<Broker> brokers = new ArrayList<>();

        void add(final Broker broker)
        {
            brokers.add(broker);
        }

        public List<Broker> brokers()
        {
            return List.copyOf(brokers);
        }

        @Override
        public void close()
        {
            for (int i = brokers.size() - 1; i >= 0; i--)
            {
                try
                {
                    brokers.get(i).close();
                }
                catch (final Exception e)
                {
                    LOG.warn("closing broker failed: {}", e.toString());
                }
            }
            brokers.clear();
        }
    }
}
