package io.sluice.broker.control;

import io.sluice.protocol.codecs.ExportingState;

import java.util.BitSet;
import java.util.Objects;

/**
 * One exporting operation as the control group commits it: a state at a version for a set of partitions (all of the
 * cluster's, or those listed). Brokers that get pair requests of the same operation build equal changes, so they can
 * tell that one proposal already covers them. Immutable.
 *
 * @param partitions  the listed partitions (bit p for partition p); empty when {@code allPartitions}.
 * @param leaseMicros with a pause or soft pause, how long the hold lasts before it ends by itself; 0 for none.
 */
public record ExportingChange(long version, ExportingState state, boolean allPartitions, BitSet partitions, long leaseMicros)
{
    public ExportingChange
    {
        Objects.requireNonNull(state, "state");
        if (leaseMicros < 0 || (leaseMicros > 0 && state == ExportingState.EXPORTING))
        {
            throw new IllegalArgumentException("a lease is positive and only for a pause, was " + leaseMicros + " µs with " +
                state);
        }
        partitions = allPartitions ? new BitSet() : (BitSet)partitions.clone();
        if (!allPartitions && partitions.isEmpty())
        {
            throw new IllegalArgumentException("an exporting change covers all partitions or lists at least one");
        }
    }

    /** Without a lease. */
    public ExportingChange(final long version, final ExportingState state, final boolean allPartitions, final BitSet partitions)
    {
        this(version, state, allPartitions, partitions, 0);
    }

    /** The same operation with a lease of {@code micros} (0: none). */
    public ExportingChange withLease(final long micros)
    {
        return new ExportingChange(version, state, allPartitions, partitions, micros);
    }

    public static ExportingChange of(final long version, final ExportingState state, final int... partitionIds)
    {
        final BitSet listed = new BitSet();
        for (final int partitionId : partitionIds)
        {
            listed.set(partitionId);
        }
        return new ExportingChange(version, state, false, listed);
    }

    public static ExportingChange ofAll(final long version, final ExportingState state)
    {
        return new ExportingChange(version, state, true, new BitSet());
    }

    @Override
    public BitSet partitions()
    {
        return (BitSet)partitions.clone();
    }

    /** Whether the change covers {@code partitionId}. */
    public boolean covers(final int partitionId)
    {
        return allPartitions || partitions.get(partitionId);
    }

    @Override
    public String toString()
    {
        return state + " version " + version + " for " + (allPartitions ? "every partition" : "partitions " + partitions) +
            (leaseMicros > 0 ? " with a lease of " + java.time.Duration.ofNanos(leaseMicros * 1000) : "");
    }
}
