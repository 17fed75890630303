package io.sluice.broker;

import java.time.Duration;
import java.util.HashMap;
import java.util.Map;

/**
 * Decides when the leadership of a partition may go back to its preferred broker: once that replica has been seen
 * in sync at every check for a whole stable period. The period keeps a broker that is being stopped (it stays in
 * sync for the second its controlled shutdown takes) from getting its leaderships straight back, and lets a
 * restarted broker settle before it takes writes. Not thread-safe: one scheduler thread drives it.
 */
final class PreferredLeaderWatch
{
    private final long stableNanos;
    private final Map<Integer, Long> inSyncSinceNanos = new HashMap<>();

    PreferredLeaderWatch(final Duration stable)
    {
        if (stable.isNegative())
        {
            throw new IllegalArgumentException("stable period must not be negative, was " + stable);
        }
        this.stableNanos = stable.toNanos();
    }

    /**
     * Records one check of the partition's preferred replica; true when it has been in sync at every check for at
     * least the stable period (the caller then moves the leadership and calls {@link #forget}).
     */
    boolean observe(final int partitionId, final boolean inSync, final long nowNanos)
    {
        if (!inSync)
        {
            inSyncSinceNanos.remove(partitionId);
            return false;
        }
        final long since = inSyncSinceNanos.computeIfAbsent(partitionId, (id) -> nowNanos);
        return nowNanos - since >= stableNanos;
    }

    /** Starts the partition's period over: it is not led here, or its leadership has just moved. */
    void forget(final int partitionId)
    {
        inSyncSinceNanos.remove(partitionId);
    }
}
