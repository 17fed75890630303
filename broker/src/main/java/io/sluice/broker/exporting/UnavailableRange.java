package io.sluice.broker.exporting;

/**
 * Positions {@code fromPosition..toPosition} (both included) of a partition that an exporter can never export: they
 * were compacted away before it got there (it was new to the partition, renamed, or re-added after its position
 * went), so it moved on to the first position the partition still held.
 */
public record UnavailableRange(long fromPosition, long toPosition)
{
    public UnavailableRange
    {
        if (fromPosition < 1 || toPosition < fromPosition)
        {
            throw new IllegalArgumentException("not a range of positions: " + fromPosition + ".." + toPosition);
        }
    }

    /** The range as a version 5 entry or snapshot carries it, or null when {@code from}/{@code to} say none. */
    public static UnavailableRange ofEncoded(final long from, final long to)
    {
        return from >= 1 && to >= from ? new UnavailableRange(from, to) : null;
    }

    /** This range and {@code next} as one, when they touch or overlap; else {@code next}, the latest. */
    public UnavailableRange merge(final UnavailableRange next)
    {
        if (next.fromPosition <= toPosition + 1 && fromPosition <= next.toPosition + 1)
        {
            return new UnavailableRange(Math.min(fromPosition, next.fromPosition), Math.max(toPosition, next.toPosition));
        }
        return next;
    }

    @Override
    public String toString()
    {
        return fromPosition + ".." + toPosition;
    }
}
