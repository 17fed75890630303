package io.sluice.protocol.cluster;

/**
 * One (broker, partition) pair of the static distribution: a replica of a partition's Raft group. The one pair
 * type of the gateway, the CLI and the qa tests. Ordered by partition, then broker, which is the order operators
 * read in tables; operators write it {@code B:P} ({@link #parse}, {@link #label}).
 */
public record PartitionReplica(int brokerId, int partitionId) implements Comparable<PartitionReplica>
{
    /**
     * Reads a pair written {@code B:P}, e.g. {@code 1:4}.
     *
     * @throws IllegalArgumentException saying what is wrong with {@code text}.
     */
    public static PartitionReplica parse(final String text)
    {
        final int colon = text.indexOf(':');
        if (colon <= 0 || colon == text.length() - 1)
        {
            throw new IllegalArgumentException("'" + text + "' is not a pair BROKER:PARTITION (e.g. 1:4)");
        }
        final int brokerId;
        final int partitionId;
        try
        {
            brokerId = Integer.parseInt(text.substring(0, colon).strip());
            partitionId = Integer.parseInt(text.substring(colon + 1).strip());
        }
        catch (final NumberFormatException e)
        {
            throw new IllegalArgumentException("'" + text + "' is not a pair BROKER:PARTITION of numbers (e.g. 1:4)");
        }
        if (brokerId < 0 || partitionId < 1)
        {
            throw new IllegalArgumentException("'" + text + "': broker ids start at 0 and partition ids at 1");
        }
        return new PartitionReplica(brokerId, partitionId);
    }

    /** {@code B:P}, as {@link #parse} reads it. */
    public String label()
    {
        return brokerId + ":" + partitionId;
    }

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
