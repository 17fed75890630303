package io.sluice.qa.cluster;

/** A (broker, partition) pair: one partition replica. */
public record Pair(int brokerId, int partitionId) implements Comparable<Pair>
{
    @Override
    public int compareTo(final Pair other)
    {
        final int byBroker = Integer.compare(brokerId, other.brokerId);
        return byBroker != 0 ? byBroker : Integer.compare(partitionId, other.partitionId);
    }

    @Override
    public String toString()
    {
        return "(broker " + brokerId + ", partition " + partitionId + ")";
    }
}
