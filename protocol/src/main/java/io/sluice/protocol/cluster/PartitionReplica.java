package io.sluice.protocol.cluster;

/**
 * One (broker, partition) pair of the static distribution: a replica of a partition's Raft group.
 * Ordered by partition, then broker, which is the order operators read in tables.
 */
public record PartitionReplica(int brokerId, int partitionId) implements Comparable<PartitionReplica>
{
    @Override
    public int compareTo(final PartitionReplica other)
    {
        final int byPartition = Integer.compare(partitionId, other.partitionId);
        return byPartition != 0 ? byPartition : Integer.compare(brokerId, other.brokerId);
    }

    @Override
    public String toString()
    {
        return "partition " + partitionId + " on broker " + brokerId;
    }
}
