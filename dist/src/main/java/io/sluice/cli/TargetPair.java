package io.sluice.cli;

import picocli.CommandLine;

/** One (broker, partition) pair, written {@code B:P} on the command line. */
public record TargetPair(int brokerId, int partitionId) implements Comparable<TargetPair>
{
    public static TargetPair parse(final String text)
    {
        final int colon = text.indexOf(':');
        if (colon <= 0 || colon == text.length() - 1)
        {
            throw new CommandLine.TypeConversionException(
                "'" + text + "' is not a pair BROKER:PARTITION (e.g. 1:4)");
        }
        try
        {
            final int brokerId = Integer.parseInt(text.substring(0, colon).strip());
            final int partitionId = Integer.parseInt(text.substring(colon + 1).strip());
            if (brokerId < 0 || partitionId < 1)
            {
                throw new CommandLine.TypeConversionException(
                    "'" + text + "': broker ids start at 0 and partition ids at 1");
            }
            return new TargetPair(brokerId, partitionId);
        }
        catch (final NumberFormatException ex)
        {
            throw new CommandLine.TypeConversionException(
                "'" + text + "' is not a pair BROKER:PARTITION of numbers (e.g. 1:4)");
        }
    }

    @Override
    public int compareTo(final TargetPair other)
    {
        final int byPartition = Integer.compare(partitionId, other.partitionId);
        return byPartition != 0 ? byPartition : Integer.compare(brokerId, other.brokerId);
    }

    @Override
    public String toString()
    {
        return brokerId + ":" + partitionId;
    }
}
