package io.sluice.gateway.config;

import io.sluice.protocol.cluster.PartitionDistribution;
import org.springframework.boot.context.properties.ConfigurationProperties;

/** The {@code sluice.cluster.*} settings shared by brokers and gateways, with the contract's defaults. */
@ConfigurationProperties(prefix = "sluice.cluster")
public class ClusterProperties
{
    public static final String DEFAULT_BROKERS = "127.0.0.1:26501,127.0.0.1:26511,127.0.0.1:26521";

    /** Command-API address of broker 0..N-1; the list's length is the cluster size. */
    private String brokers = DEFAULT_BROKERS;

    /** Partition count; ids are 1..P. */
    private int partitions = 6;

    /** Replicas per partition, placed round-robin. */
    private int replicationFactor = 3;

    /**
     * Whether each partition's leadership goes back to its preferred broker (the first of its placement) by itself
     * once that replica is in sync; off, only {@code POST /actuator/rebalance} moves it back.
     */
    private boolean autoRebalance = true;

    public boolean isAutoRebalance()
    {
        return autoRebalance;
    }

    public void setAutoRebalance(final boolean autoRebalance)
    {
        this.autoRebalance = autoRebalance;
    }

    public String getBrokers()
    {
        return brokers;
    }

    public void setBrokers(final String brokers)
    {
        this.brokers = brokers;
    }

    public int getPartitions()
    {
        return partitions;
    }

    public void setPartitions(final int partitions)
    {
        this.partitions = partitions;
    }

    public int getReplicationFactor()
    {
        return replicationFactor;
    }

    public void setReplicationFactor(final int replicationFactor)
    {
        this.replicationFactor = replicationFactor;
    }

    /** Validates and builds the static placement; throws InvalidClusterConfigException naming the setting. */
    public PartitionDistribution toDistribution()
    {
        return PartitionDistribution.of(brokers, partitions, replicationFactor);
    }
}
