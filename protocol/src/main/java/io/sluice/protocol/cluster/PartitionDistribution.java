package io.sluice.protocol.cluster;

import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

/**
 * The static placement of partitions on brokers, known to every broker and gateway from configuration
 * alone: partition {@code p} (1-based) is replicated on brokers {@code (p - 1 + i) mod N} for
 * {@code i < replicationFactor}. Because it needs no coordination, a gateway knows the pairs of a broker
 * that is down.
 * <p>
 * Immutable and thread-safe.
 */
public final class PartitionDistribution
{
    public static final String BROKERS_SETTING = "sluice.cluster.brokers";
    public static final String PARTITIONS_SETTING = "sluice.cluster.partitions";
    public static final String REPLICATION_FACTOR_SETTING = "sluice.cluster.replication-factor";
    public static final String NODE_ID_SETTING = "sluice.broker.node-id";

    /** A broker's Raft port is its command port plus this offset. */
    public static final int RAFT_PORT_OFFSET = 1;

    private final List<InetSocketAddress> brokers;
    private final int partitionCount;
    private final int replicationFactor;
    private final List<List<Integer>> replicasByPartition;
    private final List<List<Integer>> partitionsByBroker;
    private final List<PartitionReplica> replicas;

    public PartitionDistribution(
        final List<InetSocketAddress> brokers, final int partitionCount, final int replicationFactor)
    {
        if (brokers == null || brokers.isEmpty())
        {
            throw new InvalidClusterConfigException(BROKERS_SETTING, "at least one broker address is required");
        }
        if (partitionCount < 1)
        {
            throw new InvalidClusterConfigException(PARTITIONS_SETTING, "must be at least 1, was " + partitionCount);
        }
        if (replicationFactor < 1)
        {
            throw new InvalidClusterConfigException(
                REPLICATION_FACTOR_SETTING, "must be at least 1, was " + replicationFactor);
        }
        if (replicationFactor > brokers.size())
        {
            throw new InvalidClusterConfigException(REPLICATION_FACTOR_SETTING,
                replicationFactor + " exceeds the cluster size " + brokers.size() + " (" + BROKERS_SETTING + ")");
        }
        this.brokers = List.copyOf(brokers);
        this.partitionCount = partitionCount;
        this.replicationFactor = replicationFactor;

        final int brokerCount = brokers.size();
        final List<List<Integer>> byPartition = new ArrayList<>(partitionCount);
        final List<List<Integer>> byBroker = new ArrayList<>(brokerCount);
        for (int b = 0; b < brokerCount; b++)
        {
            byBroker.add(new ArrayList<>());
        }
        final List<PartitionReplica> all = new ArrayList<>(partitionCount * replicationFactor);
        for (int p = 1; p <= partitionCount; p++)
        {
            final List<Integer> replicaBrokers = new ArrayList<>(replicationFactor);
            for (int i = 0; i < replicationFactor; i++)
            {
                final int brokerId = (p - 1 + i) % brokerCount;
                replicaBrokers.add(brokerId);
                byBroker.get(brokerId).add(p);
                all.add(new PartitionReplica(brokerId, p));
            }
            byPartition.add(List.copyOf(replicaBrokers));
        }
        for (int b = 0; b < brokerCount; b++)
        {
            byBroker.set(b, List.copyOf(byBroker.get(b)));
        }
        Collections.sort(all);
        this.replicasByPartition = List.copyOf(byPartition);
        this.partitionsByBroker = List.copyOf(byBroker);
        this.replicas = List.copyOf(all);
    }

    /**
     * Parses the {@code sluice.cluster.*} settings.
     *
     * @param brokers comma-separated {@code host:port} command-API addresses of broker 0..N-1.
     */
    public static PartitionDistribution of(final String brokers, final int partitionCount, final int replicationFactor)
    {
        return new PartitionDistribution(parseAddresses(brokers), partitionCount, replicationFactor);
    }

    public static List<InetSocketAddress> parseAddresses(final String brokers)
    {
        if (brokers == null || brokers.isBlank())
        {
            throw new InvalidClusterConfigException(BROKERS_SETTING, "at least one broker address is required");
        }
        final List<InetSocketAddress> addresses = new ArrayList<>();
        for (final String raw : brokers.split(","))
        {
            final String entry = raw.trim();
            final int colon = entry.lastIndexOf(':');
            if (colon <= 0 || colon == entry.length() - 1)
            {
                throw new InvalidClusterConfigException(BROKERS_SETTING, "'" + entry + "' is not host:port");
            }
            final int port;
            try
            {
                port = Integer.parseInt(entry.substring(colon + 1));
            }
            catch (final NumberFormatException e)
            {
                throw new InvalidClusterConfigException(BROKERS_SETTING, "'" + entry + "' has no numeric port");
            }
            if (port < 1 || port + RAFT_PORT_OFFSET > 65535)
            {
                throw new InvalidClusterConfigException(BROKERS_SETTING, "'" + entry + "' has port out of range");
            }
            final String host = entry.substring(0, colon);
            addresses.add(InetSocketAddress.createUnresolved(
                host.startsWith("[") && host.endsWith("]") ? host.substring(1, host.length() - 1) : host, port));
        }
        return addresses;
    }

    public int brokerCount()
    {
        return brokers.size();
    }

    public int partitionCount()
    {
        return partitionCount;
    }

    public int replicationFactor()
    {
        return replicationFactor;
    }

    public List<InetSocketAddress> brokers()
    {
        return brokers;
    }

    /** Unresolved command-API address of a broker. */
    public InetSocketAddress commandAddress(final int brokerId)
    {
        checkBroker(brokerId);
        return brokers.get(brokerId);
    }

    /** Unresolved Raft address of a broker: its command port + {@value #RAFT_PORT_OFFSET}. */
    public InetSocketAddress raftAddress(final int brokerId)
    {
        final InetSocketAddress command = commandAddress(brokerId);
        return InetSocketAddress.createUnresolved(command.getHostString(), command.getPort() + RAFT_PORT_OFFSET);
    }

    /** Broker ids replicating the partition, in placement order. */
    public List<Integer> replicasOf(final int partitionId)
    {
        checkPartition(partitionId);
        return replicasByPartition.get(partitionId - 1);
    }

    /** Partition ids the broker replicates, ascending. */
    public List<Integer> partitionsOf(final int brokerId)
    {
        checkBroker(brokerId);
        return partitionsByBroker.get(brokerId);
    }

    /** Every (broker, partition) pair, ordered by partition then broker. */
    public List<PartitionReplica> replicas()
    {
        return replicas;
    }

    public boolean isBroker(final int brokerId)
    {
        return brokerId >= 0 && brokerId < brokers.size();
    }

    public boolean isPartition(final int partitionId)
    {
        return partitionId >= 1 && partitionId <= partitionCount;
    }

    public boolean contains(final int brokerId, final int partitionId)
    {
        return isBroker(brokerId) && isPartition(partitionId) && replicasOf(partitionId).contains(brokerId);
    }

    public boolean contains(final PartitionReplica replica)
    {
        return contains(replica.brokerId(), replica.partitionId());
    }

    /** Validates a node id against the cluster, naming {@value #NODE_ID_SETTING} if it does not fit. */
    public void checkNodeId(final int nodeId)
    {
        if (!isBroker(nodeId))
        {
            throw new InvalidClusterConfigException(NODE_ID_SETTING,
                nodeId + " is not a broker of this cluster (valid: 0.." + (brokers.size() - 1) + ", from " +
                BROKERS_SETTING + ")");
        }
    }

    private void checkBroker(final int brokerId)
    {
        if (!isBroker(brokerId))
        {
            throw new IllegalArgumentException("unknown broker " + brokerId + " (cluster has " + brokers.size() + ")");
        }
    }

    private void checkPartition(final int partitionId)
    {
        if (!isPartition(partitionId))
        {
            throw new IllegalArgumentException(
                "unknown partition " + partitionId + " (partitions are 1.." + partitionCount + ")");
        }
    }

    @Override
    public String toString()
    {
        return "PartitionDistribution{brokers=" + brokers.size() + ", partitions=" + partitionCount +
            ", replicationFactor=" + replicationFactor + "}";
    }
}
