package io.sluice.gateway.broker;

import io.sluice.protocol.codecs.AdminRequestKind;

import java.util.Arrays;
import java.util.Objects;

/**
 * One exporting operation as every pair request of it names it: its kind and version, and the partitions the whole
 * operation covers, so the first broker to propose it commits it for all of them in one control group entry.
 *
 * @param controlLeaderTargeted whether the operation also reaches the control group's leader (as last polled): the
 *                              other brokers then wait briefly for its entry instead of proposing their own.
 * @param partitions            with {@code allPartitions} false, the partitions of the operation, ascending.
 * @param leaseMicros           with a pause or soft pause, how long the hold lasts before it ends by itself; 0 none.
 */
public record AdminOperation(
    AdminRequestKind kind, long version, boolean controlLeaderTargeted, boolean allPartitions, int[] partitions,
    long leaseMicros)
{
    public AdminOperation
    {
        Objects.requireNonNull(kind, "kind");
        if (leaseMicros < 0)
        {
            throw new IllegalArgumentException("a lease is positive or 0 (none), was " + leaseMicros + " µs");
        }
        partitions = allPartitions ? new int[0] : partitions.clone();
        if (!allPartitions && partitions.length == 0)
        {
            throw new IllegalArgumentException("an operation covers every partition or lists at least one");
        }
    }

    /** Without a lease. */
    public AdminOperation(
        final AdminRequestKind kind, final long version, final boolean controlLeaderTargeted, final boolean allPartitions,
        final int[] partitions)
    {
        this(kind, version, controlLeaderTargeted, allPartitions, partitions, 0);
    }

    /** An operation of the one partition of its pair (how a request reads without a scope). */
    public static AdminOperation ofPartition(
        final AdminRequestKind kind, final long version, final boolean controlLeaderTargeted, final int partitionId)
    {
        return new AdminOperation(kind, version, controlLeaderTargeted, false, new int[] {partitionId});
    }

    @Override
    public int[] partitions()
    {
        return partitions.clone();
    }

    @Override
    public boolean equals(final Object other)
    {
        return other instanceof AdminOperation that && kind == that.kind && version == that.version &&
            controlLeaderTargeted == that.controlLeaderTargeted && allPartitions == that.allPartitions &&
            Arrays.equals(partitions, that.partitions) && leaseMicros == that.leaseMicros;
    }

    @Override
    public int hashCode()
    {
        return Objects.hash(kind, version, controlLeaderTargeted, allPartitions, Arrays.hashCode(partitions), leaseMicros);
    }

    @Override
    public String toString()
    {
        return kind + " version " + version + " of " + (allPartitions ? "every partition" : "partitions " +
            Arrays.toString(partitions)) + (leaseMicros > 0 ? " with a lease of " + leaseMicros + " µs" : "");
    }
}
